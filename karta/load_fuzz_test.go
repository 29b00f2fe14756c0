package karta

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad checks that Load never panics, always answers with Kartas or
// LoadErrors, and that what it accepts is a Karta that survives a JSON
// round trip.
func FuzzLoad(f *testing.F) {
	files, err := filepath.Glob("testdata/load/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range hostileCases() {
		f.Add([]byte(tc.in))
	}
	f.Add([]byte(minimal("x") + "---\n" + minimal("y")))

	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := Load(data, "fuzz.yaml")
		if err != nil {
			var errs LoadErrors
			if !errors.As(err, &errs) {
				t.Fatalf("Load returned %T, not LoadErrors: %v", err, err)
			}
			if ks != nil {
				t.Fatalf("Load returned Kartas with an error")
			}
			if len(errs) == 0 {
				t.Fatalf("Load returned empty LoadErrors")
			}
			for _, e := range errs {
				if e.Message == "" {
					t.Fatalf("a problem without a message: %#v", e)
				}
				if strings.Contains(e.Error(), "\n") {
					t.Fatalf("a problem spans lines: %q", e.Error())
				}
				var lp *libraryPanic
				if errors.As(e, &lp) {
					t.Fatalf("the YAML library panicked: %v", lp.Value)
				}
			}
			return
		}
		if len(ks) == 0 {
			t.Fatalf("Load returned neither Kartas nor an error")
		}
		for _, k := range ks {
			if !IsKartaGVK(k.GroupVersionKind()) {
				t.Fatalf("Load accepted %s", k.GroupVersionKind())
			}
		}
		assertRoundTrip(t, ks)
	})
}
