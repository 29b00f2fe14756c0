package jqdirect

import (
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// interpNode is a string interpolation "…\(f)…" of parts that each give
// one string at most: the parts joined in one string. gojq joins them with
// +, left to right, and so did this package (((p0 + p1) + p2) + …): a new
// string per part, each boxed. PodCliqueSet reads a pod's clique with
// "\(.group)-\(.index)-" per pod, four allocations of which one string
// is the answer. The parts run in the chain's order (the last first, as
// binNode runs its right operand first) and stop at the first without an
// output; the steps and bytes charged are the chain's — a step per joined
// part, each join's length — so budgets end the same runs
// (TestOneAgreesWithEval holds it to the chain, which the general form
// keeps).
type interpNode struct {
	// parts in the text's order: literal strings and `f | tostring`.
	parts []dnode
}

// newInterpolation returns the interpolation node of chain, the parts
// joined by + as interpolation compiles them, when every part is single;
// chain itself otherwise.
func newInterpolation(chain dnode) dnode {
	var parts []dnode
	for n := chain; ; {
		b, ok := n.(*binNode)
		if !ok || b.op != gojq.OpAdd {
			parts = append(parts, n)
			break
		}
		parts = append(parts, b.r)
		n = b.l
	}
	if len(parts) < 2 || len(parts) > maxInterpParts {
		return chain
	}
	for _, p := range parts {
		if !isSingle(p) {
			return chain
		}
	}
	// Collected last first: the text's order.
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return &interpNode{parts: parts}
}

// maxInterpParts bounds the parts an interpolation keeps on the stack.
const maxInterpParts = 16

func (n *interpNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	return evalOne(c, n, in, out)
}

func (n *interpNode) eval1(c *dctx, in any) (any, bool, bool) {
	var room [maxInterpParts]string
	strs := room[:len(n.parts)]
	for i := len(n.parts) - 1; i >= 0; i-- {
		v, has, ok := one(c, n.parts[i], in)
		if !ok || !has {
			return nil, false, ok
		}
		s, ok := v.(string)
		if !ok {
			// Not a string part: the chain's + decides.
			return nil, false, false
		}
		strs[i] = s
	}
	// The chain's charges: for each join, a step for its left operand's
	// output and the joined length.
	total := len(strs[0])
	for _, s := range strs[1:] {
		total += len(s)
		if !c.step(1) || !c.step(chargeString(total)) || !c.alloc(total) {
			return nil, false, false
		}
	}
	var b strings.Builder
	b.Grow(total)
	for _, s := range strs {
		b.WriteString(s)
	}
	return b.String(), true, true
}
