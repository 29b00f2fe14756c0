// Command custom-hook shows a Karta for a made-up CRD with a Lua override
// of InterpretStatus, used through the library: it compiles the Karta with
// status.lua as a script and prints the status of a BatchRun.
//
//	go run ./examples/custom-hook
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

func main() {
	dir := "examples/custom-hook"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	out, err := run(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(out)
}

// run compiles the Karta with the override once, then interprets the
// example object.
func run(ctx context.Context, dir string) (string, error) {
	kartas, err := karta.LoadFile(filepath.Join(dir, "karta.yaml"))
	if err != nil {
		return "", err
	}
	script, err := os.ReadFile(filepath.Join(dir, "status.lua"))
	if err != nil {
		return "", err
	}
	prog, err := interpreter.Compile(kartas[0], interpreter.Options{
		Scripts: []interpreter.Script{{Name: "status.lua", Source: string(script)}},
	})
	if err != nil {
		return "", err
	}

	data, err := os.ReadFile(filepath.Join(dir, "batchrun-degraded.yaml"))
	if err != nil {
		return "", err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return "", err
	}
	st, err := prog.InterpretStatus(ctx, obj)
	if err != nil {
		return "", err
	}
	matched := make([]string, len(st.Matched))
	for i, m := range st.Matched {
		matched[i] = string(m)
	}
	return fmt.Sprintf("%s/%s: %s (matched: %s)\n", obj.GetNamespace(), obj.GetName(), st.Status, strings.Join(matched, ", ")), nil
}
