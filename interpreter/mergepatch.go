package interpreter

// mergePatch applies an RFC 7386 JSON merge patch to target and returns
// the result: objects merge key by key, null removes a key, and anything
// else (arrays, scalars) replaces the target. Neither argument is
// modified; the result shares every untouched subtree with target and
// every written value with patch.
//
// It is written here on Go values rather than taken from a library
// because the merge patch libraries (evanphx/json-patch,
// k8s.io/apimachinery's jsonmergepatch) take and return encoded JSON: the
// round trip would turn every number into float64 or re-spell its
// literal, and rebuild untouched subtrees that must stay the object's own
// values: untouched parts keep their number spelling, and only written
// leaves change.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, _ := target.(map[string]any)
	out := make(map[string]any, len(t)+len(p))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		// A patch object merged into a missing or non-object target is
		// merged into {}, which drops the nulls inside it (RFC 7386).
		out[k] = mergePatch(out[k], v)
	}
	return out
}
