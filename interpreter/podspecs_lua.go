package interpreter

// GetPodSpecs between Go and a script that overrides it: the generated
// answer handed to the script (karta.generated.GetPodSpecs) and the
// script's answer read back. Both go as Go JSON values, never through
// encoding/json: the answer reaches the script as JSON lazy tables
// (luaapi.NewLazyJSON), which convert only the levels the script touches,
// and what it leaves untouched comes back as the Go value it was made
// from. An override that appends a container to one item so converts that
// item's path to its containers, not the answer.

// podSpecsValue is the JSON value of res's items, as encoding/json writes
// them (a nil member is null, which a script's table leaves absent).
func podSpecsValue(res *PodSpecs) []any {
	items := make([]any, len(res.Items))
	for i := range res.Items {
		it := &res.Items[i]
		m := make(map[string]any, 4)
		m["component"], m["instance"] = it.Component, it.Instance
		setMap(m, "podTemplateSpec", it.PodTemplateSpec, false)
		setMap(m, "podSpec", it.PodSpec, false)
		setMap(m, "metadata", it.Metadata, false)
		if f := it.Fragmented; f != nil {
			m["fragmented"] = fragmentedValue(f)
		}
		if s := it.Scale; s != nil {
			sc := make(map[string]any, 3)
			setInt(sc, "replicas", s.Replicas)
			setInt(sc, "minReplicas", s.MinReplicas)
			setInt(sc, "maxReplicas", s.MaxReplicas)
			m["scale"] = sc
		}
		items[i] = m
	}
	return items
}

// fragmentedValue is f's JSON value; its fields are omitempty.
func fragmentedValue(f *Fragmented) map[string]any {
	m := make(map[string]any, 4)
	setString(m, "schedulerName", f.SchedulerName)
	setMap(m, "labels", f.Labels, true)
	setMap(m, "annotations", f.Annotations, true)
	setMap(m, "resources", f.Resources, true)
	setList(m, "resourceClaims", f.ResourceClaims)
	setMap(m, "podAffinity", f.PodAffinity, true)
	setMap(m, "nodeAffinity", f.NodeAffinity, true)
	setList(m, "initContainers", f.InitContainers)
	setList(m, "containers", f.Containers)
	setMap(m, "container", f.Container, true)
	setString(m, "priorityClassName", f.PriorityClassName)
	setString(m, "image", f.Image)
	return m
}

// setMap sets m[k] to v unless encoding/json would write null (nil) or,
// omitempty, leave it out (empty).
func setMap(m map[string]any, k string, v map[string]any, omitempty bool) {
	if v != nil && (!omitempty || len(v) > 0) {
		m[k] = v
	}
}

func setList(m map[string]any, k string, v []any) {
	if len(v) > 0 {
		m[k] = v
	}
}

func setString(m map[string]any, k string, v *string) {
	if v != nil {
		m[k] = *v
	}
}

func setInt(m map[string]any, k string, v *int64) {
	if v != nil {
		m[k] = *v
	}
}

// podSpecItems reads a script's answer, g (FromLua's, its empty tables
// fitted), as decodeJSONValue into []PodSpecItem would, aliasing its
// objects and lists. It reads only the exact shape — the fields by their
// names, of their types — and reports false for anything else (a null, a
// field spelled in another case, a number where a string goes), which the
// caller leaves to decodeJSONValue, so that what it accepts and the errors
// it reports stay encoding/json's.
func podSpecItems(g any) ([]PodSpecItem, bool) {
	list, ok := g.([]any)
	if !ok {
		return nil, false
	}
	items := make([]PodSpecItem, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		it := &items[i]
		for k, v := range m {
			switch k {
			case "component":
				ok = stringInto(v, &it.Component)
			case "instance":
				ok = stringInto(v, &it.Instance)
			case "podTemplateSpec":
				it.PodTemplateSpec, ok = v.(map[string]any)
			case "podSpec":
				it.PodSpec, ok = v.(map[string]any)
			case "metadata":
				it.Metadata, ok = v.(map[string]any)
			case "fragmented":
				it.Fragmented, ok = fragmentedOf(v)
			case "scale":
				it.Scale, ok = scaleOf(v)
			default:
				ok = false
			}
			if !ok {
				return nil, false
			}
		}
	}
	return items, true
}

func fragmentedOf(v any) (*Fragmented, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	f := &Fragmented{}
	for k, v := range m {
		switch k {
		case "schedulerName":
			f.SchedulerName, ok = stringPtr(v)
		case "labels":
			f.Labels, ok = v.(map[string]any)
		case "annotations":
			f.Annotations, ok = v.(map[string]any)
		case "resources":
			f.Resources, ok = v.(map[string]any)
		case "resourceClaims":
			f.ResourceClaims, ok = v.([]any)
		case "podAffinity":
			f.PodAffinity, ok = v.(map[string]any)
		case "nodeAffinity":
			f.NodeAffinity, ok = v.(map[string]any)
		case "initContainers":
			f.InitContainers, ok = v.([]any)
		case "containers":
			f.Containers, ok = v.([]any)
		case "container":
			f.Container, ok = v.(map[string]any)
		case "priorityClassName":
			f.PriorityClassName, ok = stringPtr(v)
		case "image":
			f.Image, ok = stringPtr(v)
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	return f, true
}

func scaleOf(v any) (*Scale, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	s := &Scale{}
	for k, v := range m {
		n, isInt := v.(int64)
		if !isInt {
			return nil, false
		}
		switch k {
		case "replicas":
			s.Replicas = &n
		case "minReplicas":
			s.MinReplicas = &n
		case "maxReplicas":
			s.MaxReplicas = &n
		default:
			return nil, false
		}
	}
	return s, true
}

func stringInto(v any, dst *string) bool {
	s, ok := v.(string)
	*dst = s
	return ok
}

func stringPtr(v any) (*string, bool) {
	s, ok := v.(string)
	return &s, ok
}
