package object

// MaxValues bounds the values (maps, lists, keys, scalars and aliases) one
// input may hold, counted by a scan of the text before the YAML library
// builds its node tree: that tree costs about 200 bytes a value, so ten
// megabytes of empty objects ([{},{},…]) once took 650 MiB and ten seconds
// before the first document was even looked at. A million values is about
// 40 000 pods' worth of YAML.
const MaxValues = 1 << 20

// MaxDocuments bounds the documents of one input, counted by their "---"
// separators before any is decoded: each costs a few KiB of bookkeeping
// beyond its values (87 000 empty documents took 240 MiB).
const MaxDocuments = 20_000

// countValues returns an upper bound of the values in a YAML or JSON text:
// a value is either the first inside its collection or preceded by one of
// the separators and indicators counted here (`,` `:` `-` `?` and a line
// break), and a collection opens with `[` or `{` or holds a `-` or `:`; so
// twice the count plus one bounds the nodes. Characters inside strings
// count too, which only makes the bound higher.
func countValues(data []byte) int {
	n := 0
	for _, c := range data {
		switch c {
		case '{', '[', ',', ':', '-', '?', '\n', '*', '&':
			n++
		}
	}
	return 2*n + 1
}

// countDocuments returns an upper bound of the documents in a YAML text:
// one more than the lines that start with "---".
func countDocuments(data []byte) int {
	n := 1
	for i := 0; i+3 <= len(data); i++ {
		if (i == 0 || data[i-1] == '\n') && data[i] == '-' && data[i+1] == '-' && data[i+2] == '-' {
			n++
		}
	}
	return n
}

// CheckBounds refuses, before any decoder runs, a YAML or JSON input
// (source names it in errors) that may hold more than MaxValues values or
// MaxDocuments documents: a *DecodeError. Decode runs it; so do the paths
// that decode JSON themselves (the webhook's request bodies).
func CheckBounds(data []byte, source string) error { return checkValues(data, source) }

// checkValues refuses an input with more than MaxValues values or
// MaxDocuments documents.
func checkValues(data []byte, source string) error {
	if n := countValues(data); n > MaxValues {
		return inputError(source, "input may hold %d values (maps, lists, keys and scalars), more than the limit of %d", n, MaxValues)
	}
	if n := countDocuments(data); n > MaxDocuments {
		return inputError(source, "input holds %d documents, more than the limit of %d", n, MaxDocuments)
	}
	return nil
}
