package object

import "strings"

// Items returns the objects of the documents, expanding a List (kind "List"
// or any "<Kind>List", as kubectl get -o yaml prints) into its items, in
// order.
func Items(docs []*Document) []map[string]any {
	var out []map[string]any
	for _, d := range docs {
		kind, _ := d.Object["kind"].(string)
		items, isList := d.Object["items"].([]any)
		if isList && strings.HasSuffix(kind, "List") {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					out = append(out, m)
				}
			}
			continue
		}
		out = append(out, d.Object)
	}
	return out
}
