package builtin_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// peerCases is one file of testdata/peers: the cases of Kueue's and
// KAI-Scheduler's published per-kind tests for one built-in, their inputs
// re-stated as realistic objects, with each peer's expected answer.
type peerCases struct {
	Builtin string `json:"builtin"`
	// Templates holds the YAML anchors the cases share (objects, pods).
	Templates map[string]any `json:"templates,omitempty"`
	Cases     []peerCase     `json:"cases"`
}

// peerCase is one case: the peer's test, the object (inline, or an
// example file), the pods a KAI grouper is asked about, the peer's answer
// and, where karta answers otherwise, karta's answer and the reason.
type peerCase struct {
	Name   string           `json:"name"`
	Peer   string           `json:"peer"`
	Test   string           `json:"test"`
	File   string           `json:"file,omitempty"`
	Object map[string]any   `json:"object,omitempty"`
	Pods   []map[string]any `json:"pods,omitempty"`
	// Refs are the files (relative to the repository's root) of the
	// objects the Karta's references read, as `karta --ref` takes them.
	Refs   []string    `json:"refs,omitempty"`
	Expect peerAnswer  `json:"expect"`
	Karta  *peerAnswer `json:"karta,omitempty"`
	Reason string      `json:"reason,omitempty"`
	// Open marks a difference that is not the peer's policy but karta's
	// to fix, naming where the fix is under way; Reason says what differs.
	Open string `json:"open,omitempty"`
}

// peerAnswer is what a peer's test expects (or karta answers): Kueue's
// PodSets, KAI's PodGroups, or KAI's refusal of the object.
type peerAnswer struct {
	PodSets []peerPodSet `json:"podSets,omitempty"`
	Gangs   []peerGang   `json:"gangs,omitempty"`
	Refused string       `json:"refused,omitempty"`
}

// peerPodSet is one of Kueue's PodSets, by the karta component and
// instance whose pods it counts. Containers, when given, are the names of
// the pod's containers in order, and Requests the requests of the
// containers it names (Kueue's PodSet template); MinCount, when given, is
// the fewest pods it admits (Kueue's partial admission), karta's minimum
// replicas.
type peerPodSet struct {
	Name       string                       `json:"name,omitempty"`
	Component  string                       `json:"component"`
	Instance   string                       `json:"instance,omitempty"`
	Count      int64                        `json:"count"`
	MinCount   *int64                       `json:"minCount,omitempty"`
	Containers []string                     `json:"containers,omitempty"`
	Requests   map[string]map[string]string `json:"requests,omitempty"`
}

// peerGang is one PodGroup: its minimum, its subgroups by karta's names
// (KAI's names differ by policy: docs/catalog.md, "Subgroup names") and,
// when given, the pods it holds.
type peerGang struct {
	Min       int64          `json:"min"`
	SubGroups []peerSubGroup `json:"subGroups,omitempty"`
	Pods      []string       `json:"pods,omitempty"`
}

type peerSubGroup struct {
	Name   string   `json:"name"`
	Parent string   `json:"parent,omitempty"`
	Min    int64    `json:"min"`
	Pods   []string `json:"pods,omitempty"`
}

// readPeerCases reads every file of testdata/peers.
func readPeerCases(t *testing.T) []peerCases {
	t.Helper()
	files, err := filepath.Glob("testdata/peers/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []peerCases
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var pc peerCases
		require.NoError(t, yaml.UnmarshalStrict(data, &pc), file)
		require.Equal(t, strings.TrimSuffix(filepath.Base(file), ".yaml"), pc.Builtin, "%s is named after its built-in", file)
		out = append(out, pc)
	}
	return out
}

// TestPeerCases holds every built-in to the expected answers of Kueue's
// (kubernetes-sigs/kueue pkg/controller/jobs/KIND, TestPodSets) and
// KAI-Scheduler's (NVIDIA/KAI-Scheduler pkg/podgrouper/podgrouper/plugins/
// KIND) per-kind tests, re-stated in testdata/peers. Where karta answers
// otherwise, the case gives karta's answer and the reason, which
// docs/catalog.md lists as the peer's policy, or as open with the work
// that changes karta's answer.
func TestPeerCases(t *testing.T) {
	ctx := context.Background()
	for _, pc := range readPeerCases(t) {
		b, ok, err := builtin.Get(pc.Builtin)
		require.NoError(t, err)
		require.True(t, ok, pc.Builtin)
		p, err := b.Compile(interpreter.Options{PoolSize: 1})
		require.NoError(t, err)
		for _, tc := range pc.Cases {
			t.Run(pc.Builtin+"/"+tc.Name, func(t *testing.T) {
				require.Contains(t, []string{"kueue", "kai"}, tc.Peer)
				require.NotEmpty(t, tc.Test, "a case cites its peer's test")
				require.True(t, tc.Expect.PodSets != nil || tc.Expect.Gangs != nil || tc.Expect.Refused != "",
					"a case states its peer's answer")
				want := tc.Expect
				if tc.Karta != nil {
					require.NotEmpty(t, tc.Reason, "a difference from the peer needs its reason")
					assert.NotEqual(t, tc.Expect, *tc.Karta, "karta's answer is given only where it differs")
					want = *tc.Karta
				}
				require.True(t, want.PodSets != nil || want.Gangs != nil, "karta's answer is pod sets or gangs")
				obj := peerObject(t, tc)
				var refs []*unstructured.Unstructured
				for _, f := range tc.Refs {
					refs = append(refs, testobj.Read(t, filepath.Join("..", f)))
				}
				ctx := interpreter.WithResolver(ctx, interpreter.NewStaticResolver(refs...), nil)
				var got peerAnswer
				if want.PodSets != nil {
					specs, err := p.GetPodSpecs(ctx, obj)
					require.NoError(t, err)
					got.PodSets = podSetsOf(t, specs, want.PodSets)
				}
				if want.Gangs != nil {
					var pods []*unstructured.Unstructured
					for _, pod := range tc.Pods {
						pods = append(pods, &unstructured.Unstructured{Object: pod})
					}
					res, err := p.GetGangGroups(ctx, obj, pods)
					require.NoError(t, err)
					got.Gangs = gangsOf(res, want.Gangs)
				}
				require.Empty(t, want.Refused, "karta refuses no object a peer refuses by policy; give its answer")
				assert.Equal(t, want, got, "%s %s (%s)", tc.Peer, tc.Test, tc.Reason)
			})
		}
	}
}

// peerObject is the case's object: inline, or the example file it names
// (relative to the repository's root).
func peerObject(t *testing.T, tc peerCase) *unstructured.Unstructured {
	t.Helper()
	if tc.File != "" {
		require.Nil(t, tc.Object, "a case has an inline object or a file, not both")
		return testobj.Read(t, filepath.Join("..", tc.File))
	}
	require.NotNil(t, tc.Object, "a case has an object")
	return &unstructured.Unstructured{Object: tc.Object}
}

// podSetsOf is karta's items, in order, as Kueue's PodSets, named as the
// wanted ones are and with container names where they give them.
func podSetsOf(t *testing.T, specs *interpreter.PodSpecs, want []peerPodSet) []peerPodSet {
	t.Helper()
	got := []peerPodSet{}
	for i, it := range specs.Items {
		require.NotNil(t, it.Scale, it.Component)
		require.NotNil(t, it.Scale.Replicas, it.Component)
		ps := peerPodSet{Component: it.Component, Instance: it.Instance, Count: *it.Scale.Replicas}
		if i < len(want) {
			ps.Name = want[i].Name
			if want[i].Containers != nil {
				ps.Containers = containerNames(itemContainers(it))
			}
			if want[i].MinCount != nil {
				ps.MinCount = it.Scale.MinReplicas
			}
			if want[i].Requests != nil {
				ps.Requests = containerRequests(itemContainers(it), want[i].Requests)
			}
		}
		got = append(got, ps)
	}
	return got
}

// gangsOf is karta's groups as PodGroups, with their pods where the wanted
// ones list them.
func gangsOf(res *interpreter.GangResult, want []peerGang) []peerGang {
	got := []peerGang{}
	for i, g := range res.Groups {
		var w peerGang
		if i < len(want) {
			w = want[i]
		}
		pg := peerGang{Min: g.MinMember}
		if w.Pods != nil {
			pg.Pods = g.Pods
		}
		for j, s := range g.SubGroups {
			sg := peerSubGroup{Name: s.Name, Parent: s.Parent, Min: s.MinMember}
			if j < len(w.SubGroups) && w.SubGroups[j].Pods != nil {
				sg.Pods = append([]string{}, s.Pods...)
			}
			pg.SubGroups = append(pg.SubGroups, sg)
		}
		got = append(got, pg)
	}
	return got
}

// containerNames are the names of a containers list, in order.
func containerNames(containers []any) []string {
	out := []string{}
	for _, c := range containers {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		out = append(out, name)
	}
	return out
}

// containerRequests are the requests of the named containers, as strings.
func containerRequests(containers []any, named map[string]map[string]string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range containers {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		if _, ok := named[name]; !ok {
			continue
		}
		reqs, _, _ := unstructured.NestedMap(m, "resources", "requests")
		out[name] = map[string]string{}
		for k, v := range reqs {
			out[name][k] = fmt.Sprint(v)
		}
	}
	return out
}

// The peers' cases are realistic objects: each one, and each pod, is one
// the API server would take as it is (its operator's CRD, or its
// k8s.io/api type), where karta has the CRD (not the SparkApplication's).
func TestPeerCasesMatchTheAPI(t *testing.T) {
	set := operatorCRDs(t)
	checked := 0
	for _, pc := range readPeerCases(t) {
		for _, tc := range pc.Cases {
			if tc.Object == nil {
				continue // an example file, which the examples' tests check
			}
			name := pc.Builtin + ": " + tc.Name
			for _, obj := range append([]map[string]any{tc.Object}, tc.Pods...) {
				if assertMatchesCRD(t, set, name, obj) || assertMatchesCoreType(t, name, obj) {
					checked++
				}
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 100, "the cases' objects and pods were found")
}

// TestPeerCasesInCatalog: docs/catalog.md's table of the peers' cases is
// testdata/peers, rendered (rewritten with -update, as make golden does).
func TestPeerCasesInCatalog(t *testing.T) {
	const path = "../docs/catalog.md"
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	catalog := string(data)
	start := strings.Index(catalog, peerTableBegin)
	end := strings.Index(catalog, peerTableEnd)
	require.True(t, start >= 0 && end > start, "%s marks the table with %s and %s", path, peerTableBegin, peerTableEnd)
	table := renderPeerTable(readPeerCases(t))
	got := catalog[start+len(peerTableBegin) : end]
	if *update && got != table {
		catalog = catalog[:start+len(peerTableBegin)] + table + catalog[end:]
		require.NoError(t, os.WriteFile(path, []byte(catalog), 0o644))
		return
	}
	assert.Equal(t, table, got, "%s lists testdata/peers as it is (go test ./builtin -run TestPeerCasesInCatalog -update)", path)
}

const (
	peerTableBegin = "<!-- peer cases: generated from builtin/testdata/peers by TestPeerCasesInCatalog -update -->\n"
	peerTableEnd   = "<!-- end of peer cases -->"
)

// renderPeerTable is the Markdown table of every case: built-in, peer,
// test, the peer's answer, karta's, and the verdict with its reason.
func renderPeerTable(all []peerCases) string {
	var b strings.Builder
	b.WriteString("| built-in | peer | test | case | peer's answer | karta's answer | verdict |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, pc := range all {
		for _, tc := range pc.Cases {
			karta, verdict := "the same", "agrees"
			if tc.Karta != nil {
				karta, verdict = renderAnswer(*tc.Karta), "peer's policy: "+tc.Reason
				if tc.Open != "" {
					verdict = "open (" + tc.Open + "): " + tc.Reason
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", pc.Builtin, tc.Peer, cell(tc.Test), cell(tc.Name),
				cell(renderAnswer(tc.Expect)), cell(karta), cell(verdict))
		}
	}
	return b.String()
}

// cell escapes what Markdown would read as a column or an HTML tag.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;").Replace(s)
}

// renderAnswer says an answer in a table cell: PodSets as "name count",
// PodGroups as "minimum (subgroup minimum, …)", one per group.
func renderAnswer(a peerAnswer) string {
	var parts []string
	for _, ps := range a.PodSets {
		name := ps.Name
		if name == "" {
			name = "(" + ps.Component + ")"
		}
		s := fmt.Sprintf("%s %d", name, ps.Count)
		if ps.MinCount != nil {
			s += fmt.Sprintf(" (at least %d)", *ps.MinCount)
		}
		if ps.Containers != nil {
			s += " [" + strings.Join(ps.Containers, ", ") + "]"
		}
		for _, c := range slices.Sorted(maps.Keys(ps.Requests)) {
			var reqs []string
			for _, r := range slices.Sorted(maps.Keys(ps.Requests[c])) {
				reqs = append(reqs, r+" "+ps.Requests[c][r])
			}
			if reqs == nil {
				reqs = []string{"none"}
			}
			s += " (" + c + " requests " + strings.Join(reqs, ", ") + ")"
		}
		parts = append(parts, s)
	}
	for _, g := range a.Gangs {
		s := strconv.FormatInt(g.Min, 10)
		var subs []string
		for _, sg := range g.SubGroups {
			sub := fmt.Sprintf("%s %d", sg.Name, sg.Min)
			if sg.Parent != "" {
				sub = sg.Parent + "/" + sub
			}
			subs = append(subs, sub)
		}
		if subs != nil {
			s += " (" + strings.Join(subs, ", ") + ")"
		}
		parts = append(parts, s)
	}
	if a.Refused != "" {
		parts = append(parts, "refused: "+a.Refused)
	}
	if parts == nil {
		return "none"
	}
	return strings.Join(parts, "; ")
}
