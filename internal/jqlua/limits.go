package jqlua

// OutputLimit is the most outputs one evaluation of an expression may
// produce; one more is an error.
const OutputLimit = 10000

// TooManyOutputs is the message of the error past OutputLimit, the same on
// every path that evaluates jq.
const TooManyOutputs = "too many outputs (limit 10000)"
