package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

func newGangCmd(s streams) *cobra.Command {
	var f objectFlags
	var podsFile string
	cmd := &cobra.Command{
		Use:   "gang [-k REF] -f OBJECT --pods PODS",
		Short: "Place pods in their components and gang groups (GetGangGroups)",
		Long: "Place every pod of PODS (a YAML or JSON file of Pods: a List, as kubectl get pods -o yaml\n" +
			"prints, or several documents) in its component, instance and replica, and group the pods\n" +
			"into gangs as the Karta's gangScheduling instructions say, each with the minimum number of\n" +
			"members it needs. Every pod is either placed in exactly one group or unmatched, with\n" +
			"the reason.",
		Example: "  karta gang -k examples/kartas/pytorchjob.yaml -f examples/pytorchjob/running.yaml --pods examples/pytorchjob/pods.yaml\n" +
			"  kubectl get pods -l training.kubeflow.org/job-name=mistral-7b-sft -o yaml |\n" +
			"    karta gang -f examples/pytorchjob/running.yaml --pods - -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(f.output, []string{formatJSON, formatYAML, formatTable}, defaultFormat(s.out))
			if err != nil {
				return err
			}
			if f.filename == "-" && podsFile == "-" {
				return usageError("-f and --pods cannot both read standard input")
			}
			pods, err := readPods(s, podsFile)
			if err != nil {
				return err
			}
			return eachObject(cmd.Context(), s, &f, format, func(ctx context.Context, p *interpreter.Program, doc *object.Document) (result, error) {
				res, err := p.GetGangGroups(ctx, asUnstructured(doc.Object), pods)
				if err != nil {
					return result{}, err
				}
				return result{value: res, table: func(w io.Writer) error { return gangTable(w, res) }}, nil
			})
		},
	}
	f.addObject(cmd, "json, yaml or table (default: table on a terminal, else json)")
	f.addLive(cmd)
	cmd.Flags().StringVar(&podsFile, "pods", "", "the Pods `FILE`: a YAML or JSON List, or several documents (- reads standard input)")
	_ = cmd.MarkFlagRequired("pods") // the flag exists: no error
	return cmd
}

// gangTable prints the groups (with their subgroups indented under them,
// and how many of its subgroups one needs when it needs only some), where
// each pod went, and the pods that went nowhere.
func gangTable(w io.Writer, res *interpreter.GangResult) error {
	groups := [][]string{{"GROUP", "MINMEMBER", "PODS"}}
	for _, g := range res.Groups {
		groups = append(groups, []string{g.Name, strconv.FormatInt(g.MinMember, 10), strconv.Itoa(len(g.Pods))})
		// A subgroup is indented under its parent, and counts its
		// children's pods as its minimum does. A parent comes before its
		// children, so walking the list backwards adds each to its parent
		// once its own total is known.
		at := make(map[string]int, len(g.SubGroups))
		indent := make([]string, len(g.SubGroups))
		pods := make([]int, len(g.SubGroups))
		for i, sg := range g.SubGroups {
			at[sg.Name], indent[i], pods[i] = i, "  ", len(sg.Pods)
			if p, ok := at[sg.Parent]; ok && sg.Parent != "" {
				indent[i] = indent[p] + "  "
			}
		}
		for i := len(g.SubGroups) - 1; i >= 0; i-- {
			if p, ok := at[g.SubGroups[i].Parent]; ok && g.SubGroups[i].Parent != "" {
				pods[p] += pods[i]
			}
		}
		children := make([]int, len(g.SubGroups))
		for _, sg := range g.SubGroups {
			if p, ok := at[sg.Parent]; ok && sg.Parent != "" {
				children[p]++
			}
		}
		for i, sg := range g.SubGroups {
			minCell := strconv.FormatInt(sg.MinMember, 10)
			if sg.MinSubGroups != nil {
				// It needs only some of its subgroups (a Volcano task's
				// minPartitions).
				minCell += fmt.Sprintf(" (%d of %d subgroups)", *sg.MinSubGroups, children[i])
			}
			groups = append(groups, []string{indent[i] + sg.Name, minCell, strconv.Itoa(pods[i])})
		}
	}
	placements := [][]string{{"POD", "COMPONENT", "INSTANCE", "REPLICA", "GROUP"}}
	for _, p := range res.Placements {
		placements = append(placements, []string{p.Pod, p.Component, p.Instance, p.Replica, p.Group})
	}
	unmatched := [][]string{{"POD", "REASON"}}
	for _, u := range res.Unmatched {
		unmatched = append(unmatched, []string{u.Pod, u.Reason})
	}
	for i, sec := range []struct {
		title string
		rows  [][]string
	}{{"GROUPS", groups}, {"PLACEMENTS", placements}, {"UNMATCHED", unmatched}} {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := section(w, sec.title, sec.rows); err != nil {
			return err
		}
	}
	return nil
}
