package object

import "github.com/kartalua/karta/internal/yamlerr"

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

// CheckBounds refuses, before any decoder runs, a YAML or JSON input
// (source names it in errors) that may hold more than MaxValues values or
// MaxDocuments documents: a *DecodeError. Decode runs it; so do the paths
// that decode JSON themselves (the webhook's request bodies).
func CheckBounds(data []byte, source string) error { return checkValues(data, source) }

// checkValues refuses an input with more than MaxValues values or
// MaxDocuments documents.
func checkValues(data []byte, source string) error {
	if n := yamlerr.CountValues(data); n > MaxValues {
		return inputError(source, "input may hold %d values (maps, lists, keys and scalars), more than the limit of %d", n, MaxValues)
	}
	if n := yamlerr.CountDocuments(data); n > MaxDocuments {
		return inputError(source, "input holds %d documents, more than the limit of %d", n, MaxDocuments)
	}
	return nil
}
