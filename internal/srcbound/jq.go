package srcbound

// JQName names jq expressions in LimitErrors.
const JQName = "jq expression"

// JQ checks a jq expression: at most maxSize bytes and nested at most
// maxNesting deep (zero or less: the defaults). Depth counts parentheses,
// brackets, braces, string interpolations \( ), if ... end and def ... ;
// blocks, runs of prefix operators and keywords (unary minus, try, reduce,
// foreach, label), and the binary operators (| , // = and the rest) and
// suffixes (.x, [i], ?) of one expression (four to a level), each of
// which nests gojq's
// syntax tree one level deeper. Strings and comments are skipped as
// gojq's lexer skips them.
func JQ(expr string, maxSize, maxNesting int) error {
	d, err := start(JQName, expr, maxSize, maxNesting)
	if err != nil {
		return err
	}
	return stopped(d.jq(expr))
}

func (d *depth) jq(src string) error {
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			d.line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			i = d.skipJQComment(src, i+1)
		case c == '"':
			var err error
			if i, err = d.jqString(src, i+1); err != nil {
				return err
			}
		case isLetter(c) || c == '$' || c == '@':
			j := i + 1
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j]) || src[j] == ':' && j+1 < len(src) && src[j+1] == ':') {
				if src[j] == ':' {
					j++
				}
				j++
			}
			if err := d.jqWord(src[i:j]); err != nil {
				return err
			}
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			i = skipNumber(src, i)
			d.endOperand()
		case c == '.':
			// ., .., .name, ."name", .[: a field after an operand is a
			// suffix.
			if d.operand {
				if err := d.link(); err != nil {
					return err
				}
			}
			i++
			if i < len(src) && src[i] == '.' {
				i++
			}
			d.endOperand()
			d.operand = true
			if i < len(src) && isLetter(src[i]) {
				for i < len(src) && (isLetter(src[i]) || isDigit(src[i])) {
					i++
				}
			}
		case c == ')':
			interpolation := d.top.interpolation
			if !d.pop(")") {
				return errStop
			}
			i++
			if interpolation { // the string goes on
				var err error
				if i, err = d.jqString(src, i); err != nil {
					return err
				}
				continue
			}
			d.endOperand()
		default:
			n, err := d.jqPunct(src[i:])
			if err != nil || n == 0 {
				return err // n == 0: a character gojq refuses here
			}
			i += n
		}
	}
	return nil
}

// jqWord handles a name, keyword, $variable or @format.
func (d *depth) jqWord(w string) error {
	switch w {
	case "if":
		return d.push("end")
	case "def":
		return d.push(";")
	case "end":
		if !d.pop("end") {
			return errStop
		}
		d.endOperand()
	case "then", "elif", "else":
		d.boundary()
	case "and", "or", "as", "catch":
		return d.link()
	case "try", "reduce", "foreach", "label":
		return d.prefix()
	default:
		d.endOperand()
	}
	return nil
}

// jqPunct handles the operator or bracket at the start of s and returns
// its length (0 for a character that is no jq token).
func (d *depth) jqPunct(s string) (int, error) {
	c := s[0]
	switch c {
	case '(', '[', '{':
		if d.operand && c != '{' { // a call's arguments or an index
			if err := d.link(); err != nil {
				return 0, err
			}
		}
		return 1, d.push(closers[c])
	case ']', '}':
		if !d.pop(string(c)) {
			return 0, errStop
		}
		d.endOperand()
		return 1, nil
	case ';':
		if d.pop(";") { // the end of a def
			d.boundary()
			return 1, nil
		}
		d.boundary()
		return 1, nil
	case ':':
		d.boundary()
		return 1, nil
	case ',':
		if d.top.closer == "}" { // an object's separator
			d.boundary()
			return 1, nil
		}
		return 1, d.lowLink()
	case '-':
		if len(s) > 1 && s[1] == '=' {
			return 2, d.link()
		}
		if d.operand {
			return 1, d.link()
		}
		return 1, d.prefix()
	case '?':
		if len(s) > 2 && s[1] == '/' && s[2] == '/' {
			return 3, d.link()
		}
		d.top.chain++ // a suffix of the operand before it
		if d.current() > d.max {
			return 0, d.err()
		}
		return 1, nil
	case '|', '+', '*', '/', '%', '=', '!', '<', '>':
		if c == '|' && (len(s) == 1 || s[1] != '=') {
			return 1, d.lowLink()
		}
		n := 1
		for n < len(s) && n < 3 && (s[n] == '=' || s[n] == '/' && s[n-1] == '/') {
			n++
		}
		return n, d.link()
	}
	return 0, nil
}

var closers = map[byte]string{'(': ")", '[': "]", '{': "}"}

// jqString scans a string from i (after its opening quote or an
// interpolation's closing parenthesis) to its end, returning the index
// after it, or to an interpolation \(, which it opens, returning the index
// after it. An unterminated string is the lexer's error: the scan stops.
func (d *depth) jqString(src string, i int) (int, error) {
	for ; i < len(src); i++ {
		switch src[i] {
		case '"':
			d.endOperand()
			return i + 1, nil
		case '\n':
			d.line++
		case '\\':
			if i+1 < len(src) && src[i+1] == '(' {
				if err := d.push(")"); err != nil {
					return 0, err
				}
				d.top.interpolation = true
				return i + 2, nil
			}
			if i+1 < len(src) && src[i+1] == '\n' {
				d.line++
			}
			i++
		}
	}
	return len(src), errStop
}

// skipJQComment skips a comment from i (after its #) to the end of its
// line; a backslash escapes a newline or a backslash, as in gojq's lexer.
func (d *depth) skipJQComment(src string, i int) int {
	for ; i < len(src); i++ {
		switch src[i] {
		case '\n', '\r':
			return i
		case '\\':
			if i+1 < len(src) && (src[i+1] == '\\' || src[i+1] == '\n') {
				if src[i+1] == '\n' {
					d.line++
				}
				i++
			} else if i+1 < len(src) && src[i+1] == '\r' {
				i++
				if i+1 < len(src) && src[i+1] == '\n' {
					d.line++
					i++
				}
			}
		}
	}
	return i
}
