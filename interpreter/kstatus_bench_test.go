package interpreter

import (
	"path/filepath"
	"testing"
)

// BenchmarkScriptStatus is InterpretStatus overridden by a script that
// returns karta.generated.InterpretStatus(obj): the status plan run for
// the script on its call (kstatus.go), with the conversions of its answer
// to Lua tables and back.
func BenchmarkScriptStatus(b *testing.B) {
	const pass = "function InterpretStatus(obj)\n  local r = karta.generated.InterpretStatus(obj)\n  return r\nend\n"
	for _, name := range []string{"pytorchjob", "jobset", "leaderworkerset"} {
		b.Run(name, func(b *testing.B) {
			k := progKartaFile(b, filepath.Join("..", "builtin", "kartas", name+".yaml"))
			p := progCompile(b, k, Options{Scripts: []Script{{Name: "pass.lua", Source: pass}}})
			obj := progObjFile(b, filepath.Join("..", "examples", name, "running.yaml"))[0]
			want, err := p.InterpretStatus(b.Context(), obj)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				got, err := p.InterpretStatus(b.Context(), obj)
				if err != nil || got.Status != want.Status {
					b.Fatal(got, err)
				}
			}
		})
	}
}
