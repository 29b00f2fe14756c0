package argo

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Action is one action a discovery script offers: Argo CD's
// ResourceAction. A discovery script returns a table keyed by action name
// whose values hold the other fields ({} or an array for none).
type Action struct {
	Name        string        `json:"name,omitempty"`
	Params      []ActionParam `json:"params,omitempty"`
	Disabled    bool          `json:"disabled,omitempty"`
	IconClass   string        `json:"iconClass,omitempty"`
	DisplayName string        `json:"displayName,omitempty"`
}

// ActionParam is a parameter of an Action (Argo CD's ResourceActionParam).
type ActionParam struct {
	Name    string `json:"name,omitempty"`
	Value   string `json:"value,omitempty"`
	Type    string `json:"type,omitempty"`
	Default string `json:"default,omitempty"`
}

// Operation is what Argo CD does with a resource an action returns.
type Operation string

// The operations an action may ask for.
const (
	OperationPatch  Operation = "patch"
	OperationCreate Operation = "create"
)

// UnmarshalJSON accepts only "create" and "patch", as Argo CD's
// K8SOperation does.
func (op *Operation) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case `"create"`:
		*op = OperationCreate
	case `"patch"`:
		*op = OperationPatch
	default:
		return fmt.Errorf("unsupported operation: %s", data)
	}
	return nil
}

// ImpactedResource is one resource an action returns, with what to do with
// it (Argo CD's ImpactedResource).
type ImpactedResource struct {
	Operation Operation      `json:"operation"`
	Object    map[string]any `json:"resource"`
}

// ActionResult is what an action returned.
type ActionResult struct {
	// Resources are the resources to patch or create, in the order
	// returned.
	Resources []ImpactedResource
	// OldStyle is set when the action returned the object itself (Argo
	// CD's "old-style" action): Resources then holds that object alone,
	// to patch.
	OldStyle bool
}

// Discover runs the script as Argo CD runs a discovery.lua
// (ExecuteResourceActionDiscovery) with obj as the global obj, and returns
// the actions it offers, sorted by name. The result must be a table: an
// empty one offers no action; otherwise each key is an action's name and
// its value a table of the Action's other fields, where an array (or {})
// means none and a boolean disabled disables it. Fields are read with JSON
// semantics: a field of the wrong JSON type is an error, unknown fields
// are ignored, and a name field renames the action, as in Argo CD.
func (s *Script) Discover(ctx context.Context, obj map[string]any) ([]Action, error) {
	var actions []Action
	err := s.call(ctx, obj, nil, func(L *lua.LState, v lua.LValue) error {
		var err error
		actions, err = actionsOf(L, v)
		return err
	})
	return actions, err
}

func actionsOf(L *lua.LState, v lua.LValue) ([]Action, error) {
	if v.Type() != lua.LTTable {
		return nil, wrongResult("table", v)
	}
	x, err := fromLua(L, v)
	if err != nil {
		return nil, fmt.Errorf("error in converting to lua table: %w", err)
	}
	actions := []Action{}
	if arr, ok := x.([]any); ok && len(arr) == 0 {
		return actions, nil
	}
	byName, ok := x.(map[string]any)
	if !ok {
		// What encoding/json says of an array that is not a map.
		data, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &byName); err != nil {
			return nil, fmt.Errorf("error unmarshaling action table: %w", err)
		}
	}
	for name, value := range byName {
		a := Action{Name: name, Disabled: disabled(value)}
		if !actionDirect(value, &a) {
			if err := actionJSON(value, &a); err != nil {
				return nil, err
			}
		}
		actions = append(actions, a)
	}
	sort.Slice(actions, func(i, j int) bool { return actions[i].Name < actions[j].Name })
	return actions, nil
}

// actionJSON reads a discovered action's value into a through its JSON
// text, as Argo CD does; an array (an empty table) leaves a as it is.
func actionJSON(value any, a *Action) error {
	if _, isArray := value.([]any); isArray {
		return nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("error marshaling resource action: %w", err)
	}
	if err := json.Unmarshal(b, a); err != nil {
		return fmt.Errorf("error unmarshaling resource action: %w", err)
	}
	return nil
}

// disabled is Argo CD's isActionDisabled: a boolean disabled field.
func disabled(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	b, _ := m["disabled"].(bool)
	return b
}

// RunAction runs the script as Argo CD runs an action.lua
// (ExecuteResourceAction): obj is the global obj, params the global
// actionParams (a table of strings; empty without parameters). The result
// must be a table, read in one of two styles:
//
//   - a list of {operation = "create"|"patch", resource = {...}} (an empty
//     table is an empty list);
//   - any other table is the object itself, to patch ("old style").
//
// Each resource must be an object with a kind. A resource to patch is then
// cleaned as Argo CD cleans it: an empty array where the original object
// had an object (a script's {} that JSON could not tell from []) becomes
// the original object's value again, recursively through objects and
// arrays.
func (s *Script) RunAction(ctx context.Context, obj map[string]any, params map[string]string) (*ActionResult, error) {
	if params == nil {
		params = map[string]string{}
	}
	var res *ActionResult
	err := s.call(ctx, obj, params, func(L *lua.LState, v lua.LValue) error {
		var err error
		res, err = actionResultOf(L, v, obj)
		return err
	})
	return res, err
}

func actionResultOf(L *lua.LState, v lua.LValue, source map[string]any) (*ActionResult, error) {
	if v.Type() != lua.LTTable {
		return nil, wrongResult("table", v)
	}
	x, err := fromLua(L, v)
	if err != nil {
		return nil, err
	}
	res, ok := actionResultDirect(x)
	if !ok {
		if res, err = actionResultJSON(x); err != nil {
			return nil, err
		}
	}
	for i, r := range res.Resources {
		if r.Operation == OperationPatch && r.Object != nil {
			res.Resources[i].Object = cleanObject(r.Object, source)
		}
	}
	return res, nil
}

// actionResultJSON reads an action's result as Argo CD does: encoded to
// JSON and unmarshaled, a list of ImpactedResources when it is an array,
// else an Unstructured.
func actionResultJSON(x any) (*ActionResult, error) {
	data, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	res := &ActionResult{}
	if data[0] == '[' {
		var list []struct {
			Object    *unstructured.Unstructured `json:"resource"`
			Operation Operation                  `json:"operation"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, err
		}
		for _, r := range list {
			var o map[string]any
			if r.Object != nil {
				o = r.Object.Object
			}
			res.Resources = append(res.Resources, ImpactedResource{Operation: r.Operation, Object: o})
		}
	} else {
		var u unstructured.Unstructured
		if err := json.Unmarshal(data, &u); err != nil {
			return nil, err
		}
		res.OldStyle = true
		res.Resources = []ImpactedResource{{Operation: OperationPatch, Object: u.Object}}
	}
	return res, nil
}

// cleanObject is Argo CD's cleanReturnedObj: where the original has an
// object and the result an empty array, the original's value is kept.
func cleanObject(out, orig map[string]any) map[string]any {
	for key, old := range orig {
		now, ok := out[key]
		if !ok {
			continue
		}
		switch n := now.(type) {
		case map[string]any:
			if o, ok := old.(map[string]any); ok {
				out[key] = cleanObject(n, o)
			}
		case []any:
			switch o := old.(type) {
			case map[string]any:
				if len(n) == 0 {
					out[key] = o
				}
			case []any:
				out[key] = cleanArray(n, o)
			}
		}
	}
	return out
}

// cleanArray is Argo CD's cleanReturnedArray: cleanObject for the elements
// at the same index. (Argo CD indexes the original by the result's
// indexes and panics when the result is longer; here the extra elements
// are left as they are.)
func cleanArray(out, orig []any) []any {
	for i := range out {
		if i >= len(orig) {
			break
		}
		switch n := out[i].(type) {
		case map[string]any:
			if o, ok := orig[i].(map[string]any); ok {
				out[i] = cleanObject(n, o)
			}
		case []any:
			if o, ok := orig[i].([]any); ok {
				out[i] = cleanArray(n, o)
			}
		}
	}
	return out
}
