package interpreter

import "github.com/kartalua/karta/karta"

// fragValues are one instance's fragment values, a slot per fragment key
// in karta.FragmentedPodSpecDefinition.Fragments() order: a slice rather
// than a map, so that GetPodSpecs of a Milvus (seven instances of eight
// fragments) neither allocates a map per instance nor hashes a key per
// value. A nil fragValues holds nothing (an instance that is not
// fragmented, or read for its presence only).
type fragValues []any

// fragmentKeys are the fragment keys, in slot order.
var fragmentKeys = func() []string {
	frs := (&karta.FragmentedPodSpecDefinition{}).Fragments()
	keys := make([]string, len(frs))
	for i, fr := range frs {
		keys[i] = fr.Key
	}
	return keys
}()

// fragSlot is key's slot, -1 for a key that is no fragment's.
func fragSlot(key string) int {
	for i, k := range fragmentKeys {
		if k == key {
			return i
		}
	}
	return -1
}

// newFragValues is room for n instances' fragments, in one allocation.
func newFragValues(n int) []any { return make([]any, n*len(fragmentKeys)) }

// fragValuesAt is instance i's part of room made by newFragValues.
func fragValuesAt(room []any, i int) fragValues {
	n := len(fragmentKeys)
	return fragValues(room[i*n : (i+1)*n : (i+1)*n])
}

// get is the value of fragment key, nil when it has none.
func (f fragValues) get(key string) any {
	if s := fragSlot(key); s >= 0 && f != nil {
		return f[s]
	}
	return nil
}
