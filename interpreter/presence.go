package interpreter

// presenceProgram is p for presence only (jqdirect.Program.Presence): the
// same expression and gojq program, its direct form outputting, in place
// of a construction, a mark that is not null. The gang hooks compare an
// instance's template with null and read nothing else of it (presenceOnly),
// so RayJob's default submitter template is no longer built on every
// PlacePod and GetGangGroups. Nil when p builds nothing it outputs. A
// declined run goes to the gojq program, whose value is the template
// itself: null exactly when the direct form's is.
func presenceProgram(p *jqProgram) *jqProgram {
	if p == nil || p.direct == nil {
		return nil
	}
	d := p.direct.Presence()
	if d == nil {
		return nil
	}
	return &jqProgram{expr: p.expr, code: p.code, direct: d}
}

// reading is the program that gives what read needs of the path: its
// presence program for presenceOnly when it has one, else its value.
func (p *jqPath) reading(read instanceReading) *jqProgram {
	if read == presenceOnly && p.presence != nil {
		return p.presence
	}
	return p.value
}
