package corpus

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/kartalua/karta/karmada"
)

// Corpus is Karmada's customization corpus, read in place: every
// customization and every test case, in the layout RunTestDir reads
// (<group>/<version>/<Kind>/customizations.yaml beside testdata/).
type Corpus struct {
	Customizations []*karmada.Customization
	Cases          []*CorpusCase
}

// CorpusCase is one test case with its kind (<group>/<version>/<Kind>)
// and operation.
type CorpusCase struct {
	Kind string
	Op   karmada.Operation
	Case *karmada.TestCase
}

// Name is kind/file#name, unique within the corpus.
func (c *CorpusCase) Name() string {
	return c.Kind + "/" + filepath.Base(c.Case.File) + "#" + c.Case.Name
}

// LoadCorpus reads the corpus under dir. Cases of an operation karta does
// not know are skipped.
func LoadCorpus(dir string) (*Corpus, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == karmada.CustomizationsFile {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	c := &Corpus{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		custs, err := karmada.Load(data, f)
		if err != nil {
			return nil, err
		}
		c.Customizations = append(c.Customizations, custs...)
		kindDir := filepath.Dir(f)
		kind, err := filepath.Rel(dir, kindDir)
		if err != nil {
			return nil, err
		}
		tests, err := filepath.Glob(filepath.Join(kindDir, "testdata", "*"))
		if err != nil {
			return nil, err
		}
		sort.Strings(tests)
		for _, t := range tests {
			cases, err := karmada.LoadTestCases(t)
			if err != nil {
				return nil, err
			}
			for _, tc := range cases {
				op, err := karmada.ParseOperation(tc.Operation)
				if err != nil {
					continue
				}
				c.Cases = append(c.Cases, &CorpusCase{Kind: filepath.ToSlash(kind), Op: op, Case: tc})
			}
		}
	}
	return c, nil
}

// ByOperation groups the cases by operation, operations in Karmada's
// order.
func (c *Corpus) ByOperation() map[karmada.Operation][]*CorpusCase {
	out := map[karmada.Operation][]*CorpusCase{}
	for _, cc := range c.Cases {
		out[cc.Op] = append(out[cc.Op], cc)
	}
	return out
}
