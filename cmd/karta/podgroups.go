package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
	"github.com/kartalua/karta/podgroups"
)

// podLinkFields says, per target, what links a pod to its group.
var podLinkFields = map[podgroups.Target]string{
	podgroups.WorkloadAPI:  "spec.schedulingGroup.podGroupName",
	podgroups.KAI:          "annotation " + podgroups.PodGroupNameAnnotation + ", label " + podgroups.KAISubGroupLabel + " for a subgroup",
	podgroups.Volcano:      "annotations " + podgroups.VolcanoGroupAnnotation + ", " + podgroups.VolcanoTaskAnnotation,
	podgroups.Coscheduling: "label " + podgroups.CoschedulingLabel,
}

func newPodGroupsCmd(s streams) *cobra.Command {
	var f objectFlags
	var podsFile, target, queue string
	var composite, volcanoPolicy bool
	cmd := &cobra.Command{
		Use:   "podgroups [-k REF] -f OBJECT [--pods PODS] --for TARGET",
		Short: "Print the objects a gang scheduler needs for a workload, and each pod's link to its group",
		Long: "Turn the workload's gangs (GetGangGroups) into the objects the scheduler TARGET acts on:\n" +
			"  workload-api   Kubernetes' own gang scheduling: a scheduling.k8s.io Workload and a PodGroup per group\n" +
			"                 (with --composite-pod-group, a group's subgroups as CompositePodGroups and leaf PodGroups)\n" +
			"  kai            a KAI-Scheduler PodGroup per group, with its subgroups and topology\n" +
			"  volcano        a Volcano PodGroup per group, with minTaskMember and minResources\n" +
			"                 (with --volcano-subgroup-policy, a subgroup of equal leaves as a subGroupPolicy)\n" +
			"  coscheduling   a scheduler-plugins coscheduling PodGroup per group, with minResources\n" +
			"The objects are owned by the workload (a controller reference), ready for kubectl apply:\n" +
			"-o json prints a List, -o yaml one document per object. With --pods (a List, as kubectl get\n" +
			"pods -o yaml prints, or several documents) each pod is linked to its group: -o patch prints\n" +
			"the JSON Patch that sets each pod's link, and a pod that belongs to no group is reported on\n" +
			"standard error with the reason. The groups of a Karta's alpha podGroups are formed from the\n" +
			"pods, so those workloads need --pods. See docs/podgroups.md.",
		Example: "  karta podgroups -f examples/pytorchjob/running.yaml --pods examples/pytorchjob/pods.yaml --for kai -o yaml | kubectl apply -f -\n" +
			"  karta podgroups -f examples/jobset/running.yaml --pods examples/jobset/pods.yaml --for workload-api -o patch\n" +
			"  kubectl get pods -l ray.io/cluster=llm -o yaml | karta podgroups -f examples/raycluster/running.yaml --pods - --for volcano",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(f.output, []string{formatJSON, formatYAML, formatTable, formatPatch}, defaultFormat(s.out))
			if err != nil {
				return err
			}
			t, err := podgroups.ParseTarget(target)
			if err != nil {
				return usageError("--for: %v", err)
			}
			if f.filename == "-" && podsFile == "-" {
				return usageError("-f and --pods cannot both read standard input")
			}
			if format == formatPatch && podsFile == "" {
				return usageError("-o patch prints the pods' links: give the pods with --pods")
			}
			var pods []*unstructured.Unstructured
			if podsFile != "" {
				if pods, err = readPods(s, podsFile); err != nil {
					return err
				}
			}
			if volcanoPolicy && t != podgroups.Volcano {
				return usageError("--volcano-subgroup-policy is for --for volcano")
			}
			opts := podgroups.Options{Queue: queue, CompositePodGroup: composite, VolcanoSubGroupPolicy: volcanoPolicy}
			return eachObject(cmd.Context(), s, &f, format, func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error) {
				res, err := podgroups.ForProgram(ctx, p, asUnstructured(doc.Object), pods, t, opts)
				if err != nil {
					return result{}, err
				}
				// Each printed as every warning is: FILE: warning: message.
				r := result{warnings: warningPrefixed(res.Warnings), table: func(w io.Writer) error { return podGroupsTable(w, res) }}
				for _, u := range res.Unlinked {
					r.warnings = append(r.warnings, fmt.Sprintf("pod %s belongs to no group: %s", u.Pod, u.Reason))
				}
				objs := make([]any, len(res.Objects))
				for i, o := range res.Objects {
					objs[i] = o.Object
				}
				switch format {
				case formatPatch:
					r.value = res.Links
				case formatYAML:
					r.docs = objs
				default:
					r.value = map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
				}
				return r, nil
			})
		},
	}
	f.addObject(cmd, "json (a List), yaml (a document per object), table, or patch (each pod's JSON Patch; needs --pods) (default: table on a terminal, else json)")
	f.addLive(cmd)
	cmd.Flags().StringVar(&podsFile, "pods", "", "the Pods `FILE`: a YAML or JSON List, or several documents (- reads standard input)")
	cmd.Flags().StringVar(&target, "for", "", "the `TARGET` scheduler: workload-api, kai, volcano or coscheduling")
	cmd.Flags().StringVar(&queue, "queue", "", "the `QUEUE` of KAI's and Volcano's PodGroups (default: the one the workload names: its kai.scheduler/queue label, its scheduling.volcano.sh/queue-name annotation)")
	cmd.Flags().BoolVar(&composite, "composite-pod-group", false, "for workload-api: write a group with subgroups as CompositePodGroups (scheduling.k8s.io/v1alpha3, the alpha CompositePodGroup feature gate) with a PodGroup per leaf subgroup, instead of one PodGroup with the group's minimum")
	cmd.Flags().BoolVar(&volcanoPolicy, "volcano-subgroup-policy", false, "for volcano: write a subgroup whose children are leaves of one size as a subGroupPolicy (Volcano v1.14.1 or later), its leaves' pods labelled for it, instead of a minTaskMember per leaf")
	_ = cmd.MarkFlagRequired("for") // the flag exists: no error
	return cmd
}

// podGroupsTable prints the objects (their minimums and what else they
// say of the gang), each pod's link and the pods that have none.
func podGroupsTable(w io.Writer, res *podgroups.Result) error {
	objs := [][]string{{"KIND", "NAME", "MINMEMBER", "MINRESOURCES", "DETAILS"}}
	for _, o := range res.Objects {
		objs = append(objs, []string{o.GetKind(), o.GetName(), minMemberOf(o), resourcesOf(o), detailsOf(o)})
	}
	links := [][]string{{"POD", "OBJECT", "ROLE", "PATCH"}}
	for _, l := range res.Links {
		patch := strconv.Itoa(len(l.Patch)) + " op(s)"
		if len(l.Patch) == 0 {
			patch = "none (linked already)"
		}
		links = append(links, []string{l.Pod, l.Object, l.Role, patch})
	}
	unlinked := [][]string{{"POD", "REASON"}}
	for _, u := range res.Unlinked {
		unlinked = append(unlinked, []string{u.Pod, u.Reason})
	}
	for i, sec := range []struct {
		title string
		rows  [][]string
	}{{"OBJECTS", objs}, {"PODS (linked by " + podLinkFields[res.Target] + ")", links}, {"UNLINKED", unlinked}} {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := section(w, sec.title, sec.rows); err != nil {
			return err
		}
	}
	return nil
}

func minMemberOf(o *unstructured.Unstructured) string {
	for _, path := range [][]string{{"spec", "minMember"}, {"spec", "schedulingPolicy", "gang", "minCount"}} {
		if n, ok, _ := unstructured.NestedInt64(o.Object, path...); ok {
			return strconv.FormatInt(n, 10)
		}
	}
	// A CompositePodGroup's minimum counts its child groups.
	if n, ok, _ := unstructured.NestedInt64(o.Object, "spec", "schedulingPolicy", "gang", "minGroupCount"); ok {
		return strconv.FormatInt(n, 10) + " groups"
	}
	return ""
}

// templatesOf names a Workload's templates with their minimums: a pod
// group template's minCount, a composite template's minGroupCount and
// its own templates in brackets.
func templatesOf(o map[string]any) []string {
	var names []string
	tmpls, _, _ := unstructured.NestedSlice(o, "podGroupTemplates")
	for _, t := range tmpls {
		tm, _ := t.(map[string]any)
		n, _, _ := unstructured.NestedInt64(tm, "schedulingPolicy", "gang", "minCount")
		names = append(names, fmt.Sprintf("%v=%d", tm["name"], n))
	}
	composites, _, _ := unstructured.NestedSlice(o, "compositePodGroupTemplates")
	for _, t := range composites {
		tm, _ := t.(map[string]any)
		n, _, _ := unstructured.NestedInt64(tm, "schedulingPolicy", "gang", "minGroupCount")
		names = append(names, fmt.Sprintf("%v=%d groups[%s]", tm["name"], n, strings.Join(templatesOf(tm), " ")))
	}
	return names
}

func resourcesOf(o *unstructured.Unstructured) string {
	rl, _, _ := unstructured.NestedMap(o.Object, "spec", "minResources")
	return joinCounts(rl)
}

// detailsOf names what else an object says of the gang: a Workload's
// templates, the CompositePodGroup a PodGroup is in, a KAI PodGroup's
// subgroups (parent>child for a nested one; N groups where it needs N of
// its subgroups), a Volcano PodGroup's tasks
// and subgroup policies.
func detailsOf(o *unstructured.Unstructured) string {
	var parts []string
	if o.GetKind() == "Workload" {
		if spec, ok := o.Object["spec"].(map[string]any); ok {
			parts = append(parts, "templates: "+strings.Join(templatesOf(spec), " "))
		}
	}
	if tmpl, ok, _ := unstructured.NestedString(o.Object, "spec", "workloadRef", "templateName"); ok {
		parts = append(parts, "template: "+tmpl)
	}
	if parent, ok, _ := unstructured.NestedString(o.Object, "spec", "parentCompositePodGroupName"); ok {
		parts = append(parts, "in: "+parent)
	}
	if subs, ok, _ := unstructured.NestedSlice(o.Object, "spec", "subGroups"); ok {
		names := make([]string, 0, len(subs))
		for _, s := range subs {
			sm, _ := s.(map[string]any)
			name := fmt.Sprint(sm["name"])
			if parent, ok := sm["parent"].(string); ok {
				name = parent + ">" + name
			}
			if n, ok := sm["minSubGroup"]; ok {
				// It needs n of its subgroups (KAI's minSubGroup, exclusive
				// with minMember).
				names = append(names, fmt.Sprintf("%s=%v groups", name, n))
				continue
			}
			names = append(names, fmt.Sprintf("%s=%v", name, sm["minMember"]))
		}
		parts = append(parts, "subgroups: "+strings.Join(names, " "))
	}
	if tasks, ok, _ := unstructured.NestedMap(o.Object, "spec", "minTaskMember"); ok {
		parts = append(parts, "tasks: "+joinCounts(tasks))
	}
	if pols, ok, _ := unstructured.NestedSlice(o.Object, "spec", "subGroupPolicy"); ok {
		// name=MINxSIZE: the policy needs MIN subgroups of SIZE pods.
		names := make([]string, 0, len(pols))
		for _, p := range pols {
			pm, _ := p.(map[string]any)
			names = append(names, fmt.Sprintf("%v=%vx%v", pm["name"], pm["minSubGroups"], pm["subGroupSize"]))
		}
		parts = append(parts, "subgroup policies: "+strings.Join(names, " "))
	}
	if q, ok, _ := unstructured.NestedString(o.Object, "spec", "queue"); ok {
		parts = append(parts, "queue: "+q)
	}
	return strings.Join(parts, "; ")
}

// joinCounts prints a map as k=v pairs in key order.
func joinCounts(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return strings.Join(parts, ",")
}

// warningPrefixed puts "warning: " before each of podgroups' warnings (the
// KAI "no queue" one, say), as every other warning reads.
func warningPrefixed(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = "warning: " + w
	}
	return out
}
