package jqdirect

import (
	"math"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Arithmetic over arithmetic. An operator's result in flight is boxed
// (boxFloat), an allocation for anything but 0…255: Spark writes its
// memory in Mi as `(. % 4503599627370496 - . % 1048576) / 1048576` and
// FlinkDeployment its limits as `.mib * factor`, so a chain of n
// operators boxed n-1 numbers only for the next operator to unbox them.
// An operator whose operand is itself an arithmetic operator over single
// operands takes that operand's number unboxed (binNode.num); only the
// chain's result is boxed. Anything but two numbers — null + x, strings,
// arrays, objects — goes to binary with the operand boxed, as before.
// Outputs, steps and declines are oneOf's (TestOneAgreesWithEval,
// TestArithmeticChains).

// isArith reports that op is one of + - * / %.
func isArith(op gojq.Operator) bool {
	switch op {
	case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		return true
	}
	return false
}

// arithChain reports that n is an arithmetic operator over single
// operands: its number can be taken unboxed.
func arithChain(n dnode) (*binNode, bool) {
	b, ok := n.(*binNode)
	return b, ok && b.ones && isArith(b.op)
}

// numOperand is eval1 of an operand of an arithmetic operator: a number
// (num) or any other value (v).
func numOperand(c *dctx, n dnode, in any) (f float64, v any, num, has, ok bool) {
	if b, ok := arithChain(n); ok {
		return b.num(c, in)
	}
	v, has, ok = one(c, n, in)
	return 0, v, false, has, ok
}

// num is oneOf of an arithmetic operator, its number unboxed when both
// operands are numbers.
func (n *binNode) num(c *dctx, in any) (f float64, v any, num, has, ok bool) {
	rf, rv, rnum, has, ok := numOperand(c, n.r, in)
	if !ok || !has {
		return 0, nil, false, false, ok
	}
	lf, lv, lnum, has, ok := numOperand(c, n.l, in)
	if !ok || !stepOne(c, has) {
		return 0, nil, false, false, false
	}
	if !has {
		return 0, nil, false, false, true
	}
	if !lnum {
		lf, lnum = dnumber(lv)
	}
	if !rnum {
		rf, rnum = dnumber(rv)
	}
	if lnum && rnum {
		f, ok := arithmetic(n.op, lf, rf)
		return f, nil, ok, ok, ok
	}
	// Not two numbers: binary, which declines anything it cannot add,
	// subtract, multiply or divide.
	if lv == nil && lnum {
		lv = boxFloat(lf)
	}
	if rv == nil && rnum {
		rv = boxFloat(rf)
	}
	v, ok = binary(c, n.op, lv, rv)
	return 0, v, false, ok, ok
}

// arithmetic is op on two numbers, binary's and num's; false declines
// (a division by zero, a result that is not finite). % is gojq's and the
// generated Lua's: both operands truncated to integers, the sign of the
// dividend; a zero divisor (after truncation) is an error, and operands
// from ±2^53 on (where gojq computes in integers and Lua in floats,
// perhaps rounded) decline.
func arithmetic(op gojq.Operator, a, b float64) (float64, bool) {
	var f float64
	switch op {
	case gojq.OpAdd:
		f = a + b
	case gojq.OpSub:
		f = a - b
	case gojq.OpMul:
		f = a * b
	case gojq.OpDiv:
		if b == 0 {
			return 0, false
		}
		f = a / b
	case gojq.OpMod:
		if math.Abs(a) >= maxExactFloat || math.Abs(b) >= maxExactFloat {
			return 0, false
		}
		d := int64(b)
		if d == 0 {
			return 0, false
		}
		return float64(int64(a) % d), true
	default:
		return 0, false
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
