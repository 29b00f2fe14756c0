package srcbound

import "strings"

// Lua checks a Lua chunk named name: at most maxSize bytes and nested at
// most maxNesting deep (zero or less: the defaults). Depth counts
// parentheses, brackets, braces and blocks (function, if, do, repeat),
// runs of unary operators (-, not, #), and the binary operators and
// suffixes (.x, :m, [i], calls) of one expression, four to a level, each
// of which nests gopher-lua's syntax tree one level deeper. Strings, long strings
// ([==[ ]==]) and comments (--, --[[ ]]) are skipped as gopher-lua's
// lexer skips them.
func Lua(name, src string, maxSize, maxNesting int) error {
	d, err := start(name, src, maxSize, maxNesting)
	if err != nil {
		return err
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			d.line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case isLetter(c):
			j := i + 1
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
				j++
			}
			if err := d.luaWord(src[i:j]); err != nil {
				return stopped(err)
			}
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			i = skipNumber(src, i)
			d.operandAfterOperand()
		case c == '"' || c == '\'':
			var ok bool
			if i, ok = d.skipLuaString(src, i); !ok {
				return nil // unterminated: the lexer's error
			}
			if err := d.stringOperand(); err != nil {
				return err
			}
		case c == '[' && longBracket(src, i) >= 0:
			var ok bool
			if i, ok = d.skipLongBracket(src, i, longBracket(src, i)); !ok {
				return nil
			}
			if err := d.stringOperand(); err != nil {
				return err
			}
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			i += 2
			if lvl := longBracket(src, i); lvl >= 0 {
				var ok bool
				if i, ok = d.skipLongBracket(src, i, lvl); !ok {
					return nil
				}
				continue
			}
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		default:
			n, err := d.luaPunct(src[i:])
			if err != nil || n == 0 {
				return stopped(err) // n == 0: a character gopher-lua refuses here
			}
			i += n
		}
	}
	return nil
}

// luaWord handles a name or keyword.
func (d *depth) luaWord(w string) error {
	switch w {
	case "function":
		if err := d.push("end"); err != nil {
			return err
		}
		d.top.params = true
	case "if", "do":
		return d.push("end")
	case "repeat":
		return d.push("until")
	case "end":
		if !d.pop("end") {
			return errStop
		}
		d.endOperand() // function() ... end is an expression
	case "until":
		if !d.pop("until") {
			return errStop
		}
		d.boundary()
	case "and", "or":
		return d.link()
	case "not":
		return d.prefix()
	case "local", "return", "then", "else", "elseif", "while", "for", "in", "break", "goto":
		d.boundary()
	default: // a name, nil, true, false
		d.operandAfterOperand()
	}
	return nil
}

// operandAfterOperand records a name or literal. Right after another
// operand it starts a new statement (Lua needs no separator).
func (d *depth) operandAfterOperand() {
	if d.operand {
		d.boundary()
	}
	d.endOperand()
}

// stringOperand records a string: right after an operand it is a call's
// argument (f"x"), a suffix.
func (d *depth) stringOperand() error {
	if d.operand {
		if err := d.link(); err != nil {
			return err
		}
	}
	d.endOperand()
	return nil
}

// luaPunct handles the operator or bracket at the start of s and returns
// its length (0 for a character that is no Lua token).
func (d *depth) luaPunct(s string) (int, error) {
	c := s[0]
	two := ""
	if len(s) >= 2 {
		two = s[:2]
	}
	switch {
	case strings.HasPrefix(s, "..."):
		d.operandAfterOperand()
		return 3, nil
	case two == "..", two == "==", two == "~=", two == "<=", two == ">=":
		return 2, d.link()
	case two == "::":
		d.boundary()
		return 2, nil
	}
	switch c {
	case '(', '[', '{':
		if d.operand { // a call or an index: one more link
			if err := d.link(); err != nil {
				return 0, err
			}
		}
		return 1, d.push(closers[c])
	case ')', ']', '}':
		if !d.pop(string(c)) {
			return 0, errStop
		}
		if c == ')' && d.top.params { // function f(a, b): the body starts
			d.top.params = false
			d.boundary()
			return 1, nil
		}
		d.endOperand()
		return 1, nil
	case '-':
		if d.operand {
			return 1, d.link()
		}
		return 1, d.prefix()
	case '#':
		return 1, d.prefix()
	case '+', '*', '/', '%', '^', '<', '>', '.', ':':
		return 1, d.link()
	case ',', ';', '=':
		d.boundary()
		return 1, nil
	}
	return 0, nil
}

// skipLuaString skips the quoted string at i, returning the index after
// it; ok is false when it does not end on its line (the lexer's error).
func (d *depth) skipLuaString(src string, i int) (int, bool) {
	quote := src[i]
	for i++; i < len(src); i++ {
		switch src[i] {
		case quote:
			return i + 1, true
		case '\n', '\r':
			return i, false
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				d.line++
			}
			i++
		}
	}
	return i, false
}

// longBracket returns the level of the long bracket opening at i ([[ is
// 0, [==[ is 2), or -1.
func longBracket(src string, i int) int {
	if i >= len(src) || src[i] != '[' {
		return -1
	}
	j := i + 1
	for j < len(src) && src[j] == '=' {
		j++
	}
	if j < len(src) && src[j] == '[' {
		return j - i - 1
	}
	return -1
}

// skipLongBracket skips the long string or comment of level lvl at i.
func (d *depth) skipLongBracket(src string, i, lvl int) (int, bool) {
	closeAt := strings.Index(src[i+lvl+2:], "]"+strings.Repeat("=", lvl)+"]")
	if closeAt < 0 {
		return len(src), false
	}
	end := i + lvl + 2 + closeAt + lvl + 2
	d.line += strings.Count(src[i:end], "\n")
	return end, true
}

func isLetter(c byte) bool { return c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// skipNumber skips the number at i as gopher-lua's scanNumber reads it:
// 0x and hex digits, or digits, a fraction and one exponent with its sign.
func skipNumber(src string, i int) int {
	digits := func(hex bool) {
		for i < len(src) && (isDigit(src[i]) || hex && src[i]|0x20 >= 'a' && src[i]|0x20 <= 'f') {
			i++
		}
	}
	if src[i] == '0' && i+1 < len(src) && src[i+1]|0x20 == 'x' {
		i += 2
		digits(true)
		return i
	}
	digits(false)
	if i < len(src) && src[i] == '.' {
		i++
		digits(false)
	}
	if i < len(src) && src[i]|0x20 == 'e' {
		i++
		if i < len(src) && (src[i] == '-' || src[i] == '+') {
			i++
		}
		if i < len(src) && src[i] != '\n' {
			i++
		}
		digits(false)
	}
	return i
}
