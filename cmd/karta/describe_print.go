package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kartalua/karta/workload"
)

// none is how describe prints an empty value, as kubectl describe does.
const none = "<none>"

// describeTable prints a workload tree in kubectl describe's layout:
// "Key:  value" lines aligned in each block, sections indented by two
// spaces, and tables with a dashed line under their header.
func describeTable(w io.Writer, tree *workload.Node) error {
	d := &describer{}
	f := tree.Fields
	d.kv(0, "Name", tree.Name)
	if f.Namespace != "" {
		d.kv(0, "Namespace", f.Namespace)
	}
	d.kv(0, "API Version", f.APIVersion)
	d.kv(0, "Kind", f.Kind)
	d.kv(0, "Karta", f.Karta)
	d.kv(0, "Status", f.Status)
	d.kv(0, "Matched", list(f.Matched))
	if f.Message != "" {
		d.kv(0, "Message", f.Message)
	}
	d.kv(0, "Phase", orNone(f.Phase))
	conds := [][]string{{"Type", "Status", "Reason", "Message"}}
	for _, c := range f.Conditions {
		conds = append(conds, []string{c.Type, orDash(c.Status), orDash(c.Reason), orDash(c.Message)})
	}
	d.table(0, "Conditions", conds)

	var groups, unmatched, refs []*workload.Node
	podsKnown := false
	workload.Walk(tree, func(n *workload.Node, _ int) bool {
		if n.Kind == workload.KindInstance && n.Fields.Existing != nil {
			podsKnown = true
		}
		return true
	})
	d.title(0, "Components")
	for _, c := range tree.Children {
		switch c.Kind {
		case workload.KindComponent:
			d.component(1, c, true)
		case workload.KindGroup:
			groups = append(groups, c)
			podsKnown = true
		case workload.KindPod:
			unmatched = append(unmatched, c)
			podsKnown = true
		case workload.KindReference:
			refs = append(refs, c)
		}
	}
	if len(refs) > 0 {
		d.table(0, "References", referenceRows(refs))
	}
	if podsKnown {
		rows := [][]string{{"Name", "Min Member", "Present"}}
		// A group, then its subgroups, each nested one step further in.
		var gang func(n *workload.Node, indent string)
		gang = func(n *workload.Node, indent string) {
			rows = append(rows, []string{indent + n.Name, count(n.Fields.MinMember), count(n.Fields.Present)})
			for _, sg := range n.Children {
				gang(sg, indent+"  ")
			}
		}
		for _, g := range groups {
			gang(g, "")
		}
		d.table(0, "Gangs", rows)
		rows = [][]string{{"Name", "Phase", "Reason"}}
		for _, p := range unmatched {
			name := p.Name
			if p.Fields.Namespace != "" {
				name = p.Fields.Namespace + "/" + name
			}
			rows = append(rows, []string{name, orNone(p.Fields.Phase), p.Fields.Reason})
		}
		d.table(0, "Unmatched Pods", rows)
	}
	return d.flush(w)
}

// component prints a component: its instances, then its child
// components. The root's heading is left out when it has no instance of
// its own: its children are the components a reader looks for.
func (d *describer) component(indent int, c *workload.Node, root bool) {
	var insts, children []*workload.Node
	for _, n := range c.Children {
		if n.Kind == workload.KindInstance {
			insts = append(insts, n)
		} else {
			children = append(children, n)
		}
	}
	inner := indent + 1
	switch {
	case root && len(insts) == 0:
		inner = indent
	case len(c.Children) == 0:
		// A pod-bearing component whose instances are all absent (a
		// PyTorchJob without a Master, Milvus's standalone in cluster
		// mode).
		d.kv(indent, c.Name, "<no instances>")
		return
	default:
		d.title(indent, c.Name)
	}
	for _, inst := range insts {
		if len(insts) == 1 && inst.Name == "" {
			d.instance(inner, inst)
			continue
		}
		d.title(inner, "Instance "+inst.Name)
		d.instance(inner+1, inst)
	}
	for _, ch := range children {
		d.component(inner, ch, false)
	}
}

// instance prints an instance's definition, counts and pods, by replica
// when its pods have replica keys.
func (d *describer) instance(indent int, n *workload.Node) {
	f := n.Fields
	d.kv(indent, "Style", f.Style)
	if f.Replicas != nil || f.MinReplicas != nil || f.MaxReplicas != nil {
		r := countOr(f.Replicas, none)
		var bounds []string
		if f.MinReplicas != nil {
			bounds = append(bounds, "min "+count(f.MinReplicas))
		}
		if f.MaxReplicas != nil {
			bounds = append(bounds, "max "+count(f.MaxReplicas))
		}
		if len(bounds) > 0 {
			r += " (" + strings.Join(bounds, ", ") + ")"
		}
		d.kv(indent, "Replicas", r)
	}
	d.kv(indent, "Expected", countOr(f.Expected, "<unknown>"))
	if f.Existing != nil {
		d.kv(indent, "Existing", count(f.Existing))
	}
	d.kv(indent, "Images", list(f.Images))
	if f.Existing == nil {
		return
	}
	var pods []*workload.Node
	for _, c := range n.Children {
		switch c.Kind {
		case workload.KindPod:
			pods = append(pods, c)
		case workload.KindReplica:
			d.title(indent, "Replica "+c.Name)
			d.kv(indent+1, "Expected", countOr(c.Fields.Expected, "<unknown>"))
			d.kv(indent+1, "Existing", count(c.Fields.Existing))
			d.pods(indent+1, c.Children)
		}
	}
	if len(pods) > 0 || len(n.Children) == 0 {
		d.pods(indent, pods)
	}
}

// pods prints a table of placed pods.
func (d *describer) pods(indent int, pods []*workload.Node) {
	rows := [][]string{{"Name", "Phase", "Group", "Images"}}
	for _, p := range pods {
		rows = append(rows, []string{p.Name, orNone(p.Fields.Phase), orNone(p.Fields.Group), list(p.Fields.Images)})
	}
	d.table(indent, "Pods", rows)
}

// describer gathers the lines of a description; flush aligns the values
// of each run of "Key: value" lines of one indentation.
type describer struct {
	lines []descLine
}

type descLine struct {
	indent int
	key    string // a "Key: value" line; "" for text
	value  string
	text   string
}

func (d *describer) kv(indent int, key, value string) {
	d.lines = append(d.lines, descLine{indent: indent, key: key + ":", value: cell(value)})
}

func (d *describer) title(indent int, title string) {
	d.lines = append(d.lines, descLine{indent: indent, text: title + ":"})
}

// table prints "Title:" and the rows under it with a dashed line under the
// header, or "Title:  <none>" when there are no rows.
func (d *describer) table(indent int, title string, rows [][]string) {
	if len(rows) <= 1 {
		d.kv(indent, title, none)
		return
	}
	d.title(indent, title)
	dashes := make([]string, len(rows[0]))
	for i, h := range rows[0] {
		dashes[i] = strings.Repeat("-", len(h))
	}
	rows = append([][]string{rows[0], dashes}, rows[1:]...)
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = cell(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush() // a bytes.Buffer does not fail
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		d.lines = append(d.lines, descLine{indent: indent + 1, text: strings.TrimRight(line, " ")})
	}
}

func (d *describer) flush(w io.Writer) error {
	var buf bytes.Buffer
	for i := 0; i < len(d.lines); {
		l := d.lines[i]
		if l.key == "" {
			buf.WriteString(strings.Repeat("  ", l.indent) + l.text + "\n")
			i++
			continue
		}
		j, width := i, 0
		for ; j < len(d.lines) && d.lines[j].key != "" && d.lines[j].indent == l.indent; j++ {
			width = max(width, len(d.lines[j].key))
		}
		for _, kl := range d.lines[i:j] {
			fmt.Fprintf(&buf, "%s%-*s  %s\n", strings.Repeat("  ", kl.indent), width, kl.key, kl.value)
		}
		i = j
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func list(items []string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

func countOr(n *int64, unknown string) string {
	if n == nil {
		return unknown
	}
	return strconv.FormatInt(*n, 10)
}

// referenceRows are the References table: each reference, the kind and
// name (or selector) it looked up, the objects it bound, and why it is
// absent or cut.
func referenceRows(refs []*workload.Node) [][]string {
	rows := [][]string{{"Name", "Kind", "Looked Up", "Objects", "Reason"}}
	for _, r := range refs {
		kind := r.Fields.Kind
		if g := groupOf(r.Fields.APIVersion); g != "" {
			kind += "." + g
		}
		var objs []string
		for _, o := range r.Children {
			name := o.Name
			if o.Fields.Namespace != "" {
				name = o.Fields.Namespace + "/" + name
			}
			objs = append(objs, name)
		}
		target := r.Fields.Target
		if target != "" && r.Fields.Namespace != "" && r.Fields.Shape == "lookup" {
			target = r.Fields.Namespace + "/" + target
		}
		rows = append(rows, []string{"$" + r.Name, kind, orNone(target), list(objs), orNone(r.Fields.Reason)})
	}
	return rows
}

// groupOf is the group of an apiVersion ("" for the core group).
func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}
