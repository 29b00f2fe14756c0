// Package replacedoverrides holds the Lua overrides bundled with the
// built-ins until their specDefinition views replaced them (issue 29:
// ray.lua, knative.lua, sparkapplication.lua, as they were), and compiles a
// built-in as it was: without its views, with the override. Tests check
// that the views give the pods the overrides gave, and the benchmarks time
// the views against them; nothing else imports it.
package replacedoverrides

import (
	"embed"
	"encoding/json"
	"fmt"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

//go:embed *.lua
var files embed.FS

// byBuiltin names each built-in's replaced override.
var byBuiltin = map[string]string{
	"raycluster": "ray", "rayjob": "ray", "rayservice": "ray",
	"knative-service": "knative", "inferenceservice": "knative",
	"sparkapplication": "sparkapplication",
}

// Compile compiles the built-in Karta k, named name, as it was: the views
// its override computed removed and that override as its script. false
// when no override of name was replaced.
func Compile(name string, k *karta.Karta, opts interpreter.Options) (*interpreter.Program, bool, error) {
	file, ok := byBuiltin[name]
	if !ok {
		return nil, false, nil
	}
	src, err := files.ReadFile(file + ".lua")
	if err != nil {
		return nil, false, err
	}
	old := k.DeepCopy()
	for _, c := range old.Spec.StructureDefinition.Components() {
		if c.SpecDefinition != nil && c.SpecDefinition.View != nil {
			// A view gained after the override was replaced, computing what
			// it never did, stays: KServe's storage-initializer
			// (view.initContainers) beside knative.lua's queue-proxy.
			c.SpecDefinition.View = &karta.SpecView{InitContainers: c.SpecDefinition.View.InitContainers}
		}
	}
	opts.Scripts = append([]interpreter.Script{{Name: file + ".lua", Source: string(src)}}, opts.Scripts...)
	p, err := interpreter.Compile(old, opts)
	if err != nil {
		return nil, false, fmt.Errorf("%s with %s.lua: %w", name, file, err)
	}
	return p, true, nil
}

// WithoutNullMembers is v through JSON with the null members of objects
// left out: an override's Lua tables dropped them (a template's
// creationTimestamp: null), where GetPodSpecs reports the object's values
// as they are, so the two answers compare so.
func WithoutNullMembers(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out, err := object.DecodeValue(b, "a GetPodSpecs answer")
	return dropNulls(out), err
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}
