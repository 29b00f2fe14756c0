package interpreter

import "github.com/kartalua/karta/karta"

// The typed results of the hooks. Their JSON is docs/cli.md's contract: lists are
// never null, and values copied from the object are the object's own Go
// values (see the package documentation on aliasing).

// PodSpecs is the result of GetPodSpecs.
type PodSpecs struct {
	Items []PodSpecItem `json:"items"`
}

// PodSpecItem is the pod definition of one present instance of a
// pod-bearing component. Exactly one of PodTemplateSpec, PodSpec and
// Fragmented is non-nil.
type PodSpecItem struct {
	Component       string         `json:"component"`
	Instance        string         `json:"instance"`
	PodTemplateSpec map[string]any `json:"podTemplateSpec"`
	PodSpec         map[string]any `json:"podSpec"`
	Metadata        map[string]any `json:"metadata"`
	Fragmented      *Fragmented    `json:"fragmented"`
	Scale           *Scale         `json:"scale"`
}

// Fragmented holds the fragments of a fragmented pod definition; a key is
// absent when its path is not defined or yields null.
type Fragmented struct {
	SchedulerName     *string        `json:"schedulerName,omitempty"`
	Labels            map[string]any `json:"labels,omitempty"`
	Annotations       map[string]any `json:"annotations,omitempty"`
	Resources         map[string]any `json:"resources,omitempty"`
	ResourceClaims    []any          `json:"resourceClaims,omitempty"`
	PodAffinity       map[string]any `json:"podAffinity,omitempty"`
	NodeAffinity      map[string]any `json:"nodeAffinity,omitempty"`
	InitContainers    []any          `json:"initContainers,omitempty"`
	Containers        []any          `json:"containers,omitempty"`
	Container         map[string]any `json:"container,omitempty"`
	PriorityClassName *string        `json:"priorityClassName,omitempty"`
	Image             *string        `json:"image,omitempty"`
}

// Scale holds replica counts; nil where the path is not defined or yields
// null.
type Scale struct {
	Replicas    *int64 `json:"replicas"`
	MinReplicas *int64 `json:"minReplicas"`
	MaxReplicas *int64 `json:"maxReplicas"`
}

// StatusResult is the result of InterpretStatus.
type StatusResult struct {
	// Status is Matched[0], or Undefined.
	Status karta.Status `json:"status"`
	// Matched is every status whose matchers hold, in precedence order.
	Matched []karta.Status `json:"matched"`
	// Phase is nil without a phase definition or when the field is absent.
	Phase      *string     `json:"phase"`
	Conditions []Condition `json:"conditions"`
	// Message is an Argo CD health script's message; it is not part of
	// the CLI's JSON.
	Message string `json:"-"`
}

// Condition is one workload condition, with the Karta's field names
// resolved.
type Condition struct {
	Type    string  `json:"type"`
	Status  *string `json:"status"`
	Reason  *string `json:"reason"`
	Message *string `json:"message"`
}

// GangResult is the result of GetGangGroups. Every pod appears exactly once:
// in Placements (and one group), or in Unmatched.
type GangResult struct {
	Groups     []Group     `json:"groups"`
	Placements []Placement `json:"placements"`
	Unmatched  []Unmatched `json:"unmatched"`
}

// Group is one gang.
type Group struct {
	Name       string   `json:"name"`
	Definition string   `json:"definition"`
	MinMember  int64    `json:"minMember"`
	Pods       []string `json:"pods"`
	// The v2 podGroup form only.
	SubGroups    []SubGroup      `json:"subGroups,omitempty"`
	MinSubGroups *int64          `json:"minSubGroups,omitempty"`
	Topology     *karta.Topology `json:"topology,omitempty"`
}

// SubGroup is one component's part of a v2 group: of all its instances, or
// of one instance or replica when the group splits it (docs/karta.md, "The
// v2 podGroup").
type SubGroup struct {
	Name string `json:"name"`
	// Parent names the subgroup this one nests in; empty when it sits
	// directly under the group. Subgroup names are unique within a group,
	// and a parent always comes before its children.
	Parent    string `json:"parent,omitempty"`
	MinMember int64  `json:"minMember"`
	// MinSubGroups is how many of its child subgroups it needs, the
	// first ones, when it needs fewer than all (a per-replica entry's
	// perReplica.minCountPath); nil when every child is required.
	MinSubGroups *int64          `json:"minSubGroups,omitempty"`
	Pods         []string        `json:"pods"`
	Topology     *karta.Topology `json:"topology,omitempty"`
}

// PlacementResult is the result of PlacePods. Every pod appears exactly
// once: in Placements (with Group empty), or in Unmatched.
type PlacementResult struct {
	Placements []Placement `json:"placements"`
	Unmatched  []Unmatched `json:"unmatched"`
}

// Placement says where one pod belongs.
type Placement struct {
	Pod       string `json:"pod"`
	Component string `json:"component"`
	Instance  string `json:"instance"`
	Replica   string `json:"replica"`
	Group     string `json:"group"`
}

// Unmatched is a pod that belongs nowhere, with the reason.
type Unmatched struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}
