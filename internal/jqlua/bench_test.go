package jqlua

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/itchyny/gojq"
	lua "github.com/yuin/gopher-lua"
)

// The translated accessors on the portable runtime (what the exports
// ship) against a precompiled gojq program on the same object.
func BenchmarkAccessors(b *testing.B) {
	for _, c := range []struct{ name, expr, object string }{
		{"jobset-replicas", `(.replicas // 1) * (.template.spec.parallelism // 1)`, "replicatedjob"},
		{"jobset-ids", `.spec.replicatedJobs[]?.name`, "jobset"},
		{"pytorch-initializing", `[.status.conditions[]? | select(.status == "True" and .type != "Created")] | length`, "pytorchjob"},
		{"kserve-predictor", `.spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)`, "inferenceservice"},
	} {
		var obj any
		if err := json.Unmarshal(readObject(b, c.object), &obj); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/lua", func(b *testing.B) {
			u := NewPortableUnit()
			if _, err := u.Add(c.expr); err != nil {
				b.Fatal(err)
			}
			p, err := loadPortable(context.Background(), u)
			if err != nil {
				b.Fatal(err)
			}
			defer p.L.Close()
			L, acc, in := p.L, p.Q.RawGetInt(1), p.value(obj)
			b.ReportAllocs()
			for b.Loop() {
				out := L.CreateTable(1, 0)
				if err := L.CallByParam(lua.P{Fn: acc, NRet: 0, Protect: true}, in, out); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/gojq", func(b *testing.B) {
			q, _ := gojq.Parse(c.expr)
			code, _ := gojq.Compile(q)
			b.ReportAllocs()
			for b.Loop() {
				iter := code.Run(obj)
				for {
					v, ok := iter.Next()
					if !ok {
						break
					}
					if err, ok := v.(error); ok {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
