package karmada

import (
	"fmt"
	"strings"

	"github.com/kartalua/karta/interpreter"
)

// Defines tells whether the Program answers op for some object of its
// kind — what a Karmada ResourceInterpreterWebhookConfiguration should
// send it, and what its export scripts. Karmada treats a webhook's refusal
// as an error, not as "ask another interpreter": a PyTorchJob whose
// InterpretReplica the webhook refuses gets no ResourceBinding. So a kind
// is wired only for the operations its Program defines:
//
//   - InterpretReplica: a script's GetReplicas, or exactly one pod-bearing
//     component, of one instance (neither it nor an ancestor has an
//     instanceIDPath): GetReplicas refuses an object whose component has
//     several present instances (a JobSet of two replicated Jobs), so a
//     kind whose objects usually do is not wired for it, and Karmada
//     counts no replicas for it, as for any kind it has no interpreter
//     for;
//   - InterpretComponent: a script's GetComponents, or some pod-bearing
//     component;
//   - ReviseReplica: a script's ReviseReplica, or a component whose
//     replicasPath the revision writes;
//   - Retain: a script's Retain only (a Karta generates none);
//   - InterpretStatus, AggregateStatus, InterpretHealth,
//     InterpretDependency: always.
func (k Program) Defines(op Operation) bool {
	overridden := func(h interpreter.Hook) bool { return k.p.Overridden(h) }
	switch op {
	case OpInterpretReplica:
		c, _ := replicaResource(k.model)
		return overridden(interpreter.HookGetReplicas) || c != nil
	case OpInterpretComponent:
		return overridden(interpreter.HookGetComponents) || len(podBearing(k.model)) > 0
	case OpReviseReplica:
		return overridden(interpreter.HookReviseReplica) || k.model.ReplicaComponent != nil
	case OpRetain:
		return overridden(interpreter.HookRetain)
	case OpInterpretStatus, OpAggregateStatus, OpInterpretHealth, OpInterpretDependency:
		return true
	}
	return false
}

// podBearing are the model's pod-bearing components, in Karta order.
func podBearing(m *interpreter.Shape) []*interpreter.ComponentShape {
	var out []*interpreter.ComponentShape
	for _, c := range m.Components {
		if c.PodBearing() {
			out = append(out, c)
		}
	}
	return out
}

// replicaResource is the component whose replicas GetReplicas reports —
// the only pod-bearing one, of one instance — or, when there is none,
// why GetReplicas is not defined. The in-process GetReplicas, Defines and
// the export's replicaResource rule all follow it.
func replicaResource(m *interpreter.Shape) (*interpreter.ComponentShape, string) {
	bearing := podBearing(m)
	if len(bearing) != 1 {
		names := make([]string, len(bearing))
		for i, c := range bearing {
			names[i] = c.Name
		}
		return nil, fmt.Sprintf("there are %d pod-bearing components [%s], not one", len(bearing), strings.Join(names, " "))
	}
	if !oneInstance(bearing[0]) {
		return nil, fmt.Sprintf("component %q has instances (an instanceIDPath on it or an ancestor), not one", bearing[0].Name)
	}
	return bearing[0], ""
}

// oneInstance: neither c nor an ancestor has instance ids.
func oneInstance(c *interpreter.ComponentShape) bool {
	for ; c != nil; c = c.Parent {
		if c.InstanceIDPath != "" {
			return false
		}
	}
	return true
}

// DefinedOperations are the operations the Program defines (Defines), in
// the order of Operations.
func (k Program) DefinedOperations() []Operation {
	var out []Operation
	for _, op := range Operations {
		if k.Defines(op) {
			out = append(out, op)
		}
	}
	return out
}
