package karta

// conditionsDefaults are the CRD defaults of a conditionsDefinition's field
// names (types.go). The API server applies them to Kartas read from a
// cluster; Load applies them too, so that a Karta behaves the same whether
// it comes from a file or from a cluster.
var conditionsDefaults = []struct{ key, value string }{
	{"typeFieldName", DefaultTypeFieldName},
	{"statusFieldName", DefaultStatusFieldName},
	{"messageFieldName", DefaultMessageFieldName},
	{"reasonFieldName", DefaultReasonFieldName},
}

// applyConditionsDefaults sets the field-name defaults in the
// conditionsDefinition of every component's statusDefinition (root and
// children) of a decoded document. Like the API server, it fills a key
// that is absent or null and keeps an explicit "" (validation decides
// about that). It works on the generic map, before typed decoding, because
// the typed struct cannot tell an absent key from "". Values of the wrong
// shape are left alone for typed decoding to report.
func applyConditionsDefaults(doc map[string]any) {
	spec, _ := doc["spec"].(map[string]any)
	structure, _ := spec["structureDefinition"].(map[string]any)
	components := []any{structure["rootComponent"]}
	if children, ok := structure["childComponents"].([]any); ok {
		components = append(components, children...)
	}
	for _, c := range components {
		comp, _ := c.(map[string]any)
		status, _ := comp["statusDefinition"].(map[string]any)
		conditions, ok := status["conditionsDefinition"].(map[string]any)
		if !ok {
			continue
		}
		for _, d := range conditionsDefaults {
			if v, set := conditions[d.key]; !set || v == nil {
				conditions[d.key] = d.value
			}
		}
	}
}
