package karta

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// specDefinition checks the spec style, metadataPath and the spec paths,
// and warns about paths ReviseSpec cannot write through.
func (v *validator) specDefinition(c *compRef) {
	sd := c.c.SpecDefinition
	if sd == nil {
		return
	}
	p := c.path.Child("specDefinition")
	if styles := sd.Styles(); len(styles) > 1 {
		v.errorf(p, "more than one spec style is set (%s); keep exactly one", styleFields(styles))
	}
	if sd.MetadataPath != "" && sd.PodSpecPath == "" {
		v.errorf(p.Child("metadataPath"), "metadataPath is only valid with podSpecPath; set podSpecPath or remove metadataPath")
	}
	if sd.PodTemplateSpecPath == "" && sd.PodSpecPath == "" && sd.MetadataPath == "" && sd.FragmentedPodSpecDefinition == nil {
		v.warnf(p, "the spec definition is empty, so component %q is not pod-bearing; remove it or set a spec style", c.c.Name)
	}
	v.writablePath(p.Child("podTemplateSpecPath"), sd.PodTemplateSpecPath)
	v.writablePath(p.Child("podSpecPath"), sd.PodSpecPath)
	v.writablePath(p.Child("metadataPath"), sd.MetadataPath)
	if f := sd.FragmentedPodSpecDefinition; f != nil {
		fp := p.Child("fragmentedPodSpecDefinition")
		if f.IsEmpty() {
			v.warnf(fp, "the fragmented definition has no path, so it defines nothing; remove it or set its paths")
		}
		for _, fr := range f.Fragments() {
			v.writablePath(fp.Child(fr.Field), fr.Path)
		}
	}
	v.specView(p, sd)
}

// specView checks a view's expressions and that each computes a key of the
// component's own style: a view replaces a value GetPodSpecs reports, so a
// key of another style would compute nothing.
func (v *validator) specView(p *field.Path, sd *SpecDefinition) {
	if sd.View == nil {
		return
	}
	vp := p.Child("view")
	style := sd.Style()
	for _, e := range sd.View.Views() {
		if e.Path == "" {
			continue
		}
		ep := vp.Child(e.Field)
		v.checkExpr(ep, e.Path)
		if want := viewStyle(e.Key); want != style {
			v.errorf(ep, "a view of %s is only valid with %s; this component's spec style is %s",
				e.Key, styleFields([]SpecStyle{want}), styleName(style))
		}
	}
}

// viewStyle is the spec style whose GetPodSpecs item has key.
func viewStyle(key string) SpecStyle {
	switch key {
	case "podTemplateSpec":
		return SpecStylePodTemplateSpec
	case "podSpec", "metadata":
		return SpecStylePodSpec
	}
	return SpecStyleFragmented
}

// styleName names a style in a message ("none" when no style is set).
func styleName(s SpecStyle) string {
	if s == SpecStyleNone {
		return "none"
	}
	return styleFields([]SpecStyle{s})
}

// styleFields names the fields that set the given styles.
func styleFields(styles []SpecStyle) string {
	fields := map[SpecStyle]string{
		SpecStylePodTemplateSpec: "podTemplateSpecPath",
		SpecStylePodSpec:         "podSpecPath",
		SpecStyleFragmented:      "fragmentedPodSpecDefinition",
	}
	out := make([]string, len(styles))
	for i, s := range styles {
		out[i] = fields[s]
	}
	return strings.Join(out, ", ")
}

func (v *validator) scaleDefinition(c *compRef) {
	sd := c.c.ScaleDefinition
	if sd == nil {
		return
	}
	p := c.path.Child("scaleDefinition")
	if sd.IsEmpty() {
		v.warnf(p, "the scale definition is empty, so component %q has no scale; remove it or set replicasPath", c.c.Name)
	}
	v.optionalExpr(p.Child("replicasPath"), sd.ReplicasPath)
	v.optionalExpr(p.Child("minReplicasPath"), sd.MinReplicasPath)
	v.optionalExpr(p.Child("maxReplicasPath"), sd.MaxReplicasPath)
}

// podSelector checks the selector paths and that the instance selector is
// present exactly when the component has instances.
func (v *validator) podSelector(c *compRef) {
	ps := c.c.PodSelector
	p := c.path.Child("podSelector")
	hasInstanceSelector := ps != nil && ps.ComponentInstanceSelector != nil
	switch {
	case c.c.InstanceIDPath != "" && !hasInstanceSelector:
		v.errorf(p.Child("componentInstanceSelector"),
			"required because instanceIdPath is set: its idPath reads a pod's instance id, so that pods can be told apart by instance")
	case c.c.InstanceIDPath == "" && hasInstanceSelector:
		v.errorf(p.Child("componentInstanceSelector"),
			"componentInstanceSelector needs instanceIdPath on component %q; set instanceIdPath or remove the selector", c.c.Name)
	}
	if ps == nil {
		return
	}
	if s := ps.ComponentTypeSelector; s != nil {
		v.typeSelector(p.Child("componentTypeSelector"), s)
	}
	if s := ps.ComponentInstanceSelector; s != nil {
		v.requiredExpr(p.Child("componentInstanceSelector", "idPath"), s.IDPath, "the path, evaluated on a pod, that yields its instance id")
	}
	if s := ps.ReplicaSelector; s != nil {
		v.requiredExpr(p.Child("replicaSelector", "keyPath"), s.KeyPath, "the path, evaluated on a pod, that yields its replica key")
	}
}

// typeSelector checks one componentTypeSelector: keyPath or matchLabels
// (or both), value only with keyPath, and matchLabels that are labels a
// pod can carry (the API server's rules for label keys and values).
func (v *validator) typeSelector(p *field.Path, s *ComponentTypeSelector) {
	if s.KeyPath == "" && len(s.MatchLabels) == 0 {
		v.errorf(p, "required: keyPath (a path, evaluated on a pod, that tells whether it belongs to the component) or matchLabels (labels every pod of the component carries)")
		return
	}
	if s.KeyPath != "" {
		v.requiredExpr(p.Child("keyPath"), s.KeyPath, "the path, evaluated on a pod, that tells whether it belongs to the component")
	} else if s.Value != nil {
		v.errorf(p.Child("value"), "value needs keyPath: it is compared with what keyPath yields; to match a label use matchLabels")
	}
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kp := p.Child("matchLabels").Key(k)
		for _, msg := range validation.IsQualifiedName(k) {
			v.errorf(kp, "invalid label key %q: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(s.MatchLabels[k]) {
			v.errorf(kp, "invalid label value %q: %s", s.MatchLabels[k], msg)
		}
	}
}

// typeSelectors requires a componentTypeSelector on every pod-bearing
// component once there are several: a pod must match exactly one of them
// (docs/karta.md, "Pods: component, instance and replica").
func (v *validator) typeSelectors() {
	var bearing []*compRef
	var names []string
	for _, c := range v.comps {
		if c.c.IsPodBearing() {
			bearing = append(bearing, c)
			names = append(names, c.c.Name)
		}
	}
	if len(bearing) < 2 {
		return
	}
	for _, c := range bearing {
		if c.c.PodSelector == nil || c.c.PodSelector.ComponentTypeSelector == nil {
			v.errorf(c.path.Child("podSelector"),
				"componentTypeSelector is required: %d components are pod-bearing (%s), so each needs one to tell its pods apart",
				len(bearing), listCapped(names, ", "))
		}
	}
}

func (v *validator) suspendDefinition(c *compRef) {
	sd := c.c.SuspendDefinition
	if sd == nil {
		return
	}
	p := c.path.Child("suspendDefinition")
	for _, list := range []struct {
		field   string
		actions []SuspendAction
	}{{"suspendActions", sd.SuspendActions}, {"resumeActions", sd.ResumeActions}} {
		lp := p.Child(list.field)
		if len(list.actions) == 0 {
			v.errorf(lp, "required: at least one action {path, value}")
		}
		for i := range list.actions {
			a := &list.actions[i]
			v.assignedPath(lp.Index(i).Child("path"), a.Path)
			if _, err := a.DecodedValue(); err != nil {
				if len(a.Value.Raw) == 0 {
					v.errorf(lp.Index(i).Child("value"), `required: the JSON value to write (e.g. "true")`)
				} else {
					v.errorf(lp.Index(i).Child("value"), "%v", err)
				}
			}
		}
	}
}
