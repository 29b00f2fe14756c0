package perf

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/argo"
	"github.com/kartalua/karta/karmada"
)

// exportOps are the Karmada operations BenchmarkExports runs on an
// object alone (AggregateStatus and Retain need more than one).
var exportOps = []karmada.Operation{
	karmada.OpInterpretReplica, karmada.OpInterpretComponent, karmada.OpInterpretStatus,
	karmada.OpInterpretHealth, karmada.OpInterpretDependency,
}

// BenchmarkExports runs every built-in's exports as their systems run
// them, on the built-in's running example: karmada is Karmada's luavm
// method (baseline (c), KarmadaVM: the script parsed and compiled on every
// call) on each operation of the Karmada export that succeeds on the
// example; argocd is Argo CD's method (baseline (e), ArgoVM: compiled once,
// then run) on the health.lua of the Argo CD export. An iteration runs
// every case once; the "cases" metric lets benchreport turn ns/op into the
// mean per case. It measures what a user of the exports pays, which the
// size of an export sets for Karmada (its compile) and the runtime a
// script builds on every run for both.
func BenchmarkExports(b *testing.B) {
	ctx := context.Background()
	type karmadaCase struct {
		op karmada.Operation
		tc *karmada.TestCase
	}
	type argoCase struct {
		obj    *unstructured.Unstructured
		script string
	}
	var custs []*karmada.Customization
	var objs []*unstructured.Unstructured
	var argoCases []argoCase
	seen := map[string]bool{}
	for _, w := range loadBench(b) {
		if data, err := karmada.Export(w.prog); err == nil {
			cs, err := karmada.Load(data, w.Name)
			if err != nil {
				b.Fatal(w.Name, err)
			}
			custs = append(custs, cs...)
			objs = append(objs, w.Running)
		}
		gk := w.prog.GVK().GroupKind().String()
		if seen[gk] {
			continue
		}
		seen[gk] = true
		if ex, err := argo.ExportProgram(w.prog); err == nil {
			argoCases = append(argoCases, argoCase{w.Running, ex.Scripts["health.lua"]})
		}
	}
	vm := NewKarmadaVM(custs)
	defer vm.Close()
	var karmadaCases []karmadaCase
	for _, obj := range objs {
		for _, op := range exportOps {
			c := karmadaCase{op, &karmada.TestCase{DesiredObj: obj, ObservedObj: obj}}
			if _, err := vm.Run(ctx, c.op, c.tc); err == nil {
				karmadaCases = append(karmadaCases, c)
			}
		}
	}
	if len(karmadaCases) == 0 || len(argoCases) == 0 {
		b.Fatal("no export runs")
	}
	b.Run("karmada", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, c := range karmadaCases {
				if _, err := vm.Run(ctx, c.op, c.tc); err != nil {
					b.Fatal(c.op, err)
				}
			}
		}
		b.ReportMetric(float64(len(karmadaCases)), "cases")
	})
	avm := NewArgoVM()
	b.Run("argocd", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, c := range argoCases {
				if _, err := avm.Health(c.obj, c.script); err != nil {
					b.Fatal(c.obj.GetKind(), err)
				}
			}
		}
		b.ReportMetric(float64(len(argoCases)), "cases")
	})
}
