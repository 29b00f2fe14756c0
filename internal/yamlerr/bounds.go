package yamlerr

// The scans that bound a YAML or JSON input before a decoder builds its
// tree (object.CheckBounds, karta.LoadOptions): the tree costs a few
// hundred bytes a value and a few KiB a document, so it can grow far
// faster than the text.

// CountValues returns an upper bound of the values in a YAML or JSON text:
// a value is either the first inside its collection or preceded by one of
// the separators and indicators counted here (`,` `:` `-` `?` and a line
// break), and a collection opens with `[` or `{` or holds a `-` or `:`; so
// twice the count plus one bounds the nodes. Characters inside strings
// count too, which only makes the bound higher.
func CountValues(data []byte) int {
	n := 0
	for _, c := range data {
		switch c {
		case '{', '[', ',', ':', '-', '?', '\n', '*', '&':
			n++
		}
	}
	return 2*n + 1
}

// CountDocuments returns an upper bound of the documents in a YAML text:
// one more than the lines that start with "---".
func CountDocuments(data []byte) int {
	n := 1
	for i := 0; i+3 <= len(data); i++ {
		if (i == 0 || data[i-1] == '\n') && data[i] == '-' && data[i+1] == '-' && data[i+2] == '-' {
			n++
		}
	}
	return n
}
