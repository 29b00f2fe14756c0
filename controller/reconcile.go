package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/interpreter"
)

// change is a registry change to announce with OnChange.
type change struct {
	gvk     schema.GroupVersionKind
	program *interpreter.Program
}

// reconcile brings the registry and the status of one object in line with
// the object as the informer last saw it.
func (c *Controller) reconcile(ctx context.Context, k key) error {
	c.mu.Lock()
	src, inf := c.sources[k.src], c.informers[k.src]
	prev := c.entries[k]
	c.mu.Unlock()

	obj, err := cachedObject(inf.GetStore(), k)
	if err != nil {
		return err
	}
	var next *entry
	if obj != nil {
		// Compiling happens outside the lock; the queue never hands the
		// same key to two workers, so prev is still this key's entry.
		next = build(ctx, k, obj, prev, c.opts.Compile)
		if c.opts.CRDs != nil && next.program != nil {
			next.schema = c.schemaVerdict(ctx, next)
		}
	}
	conds, drop := c.commit(k, prev, next)
	if next != nil && c.opts.CRDs != nil {
		if next.program != nil {
			conds = append(conds, schemaCondition(next))
		} else {
			drop = append(drop, ConditionSchemaChecked)
		}
	}
	if next == nil {
		if prev != nil {
			c.metrics.reconciles.WithLabelValues(resultDeleted).Inc()
			c.log.Info("karta deleted", "object", k.String())
		}
		return nil
	}

	result := next.outcome
	if conds[0].Reason == ReasonConflict {
		result = resultConflict
	}
	if prev == nil || prev.generation != next.generation || prev.outcome != next.outcome {
		c.log.Info("karta reconciled", "object", k.String(), "generation", next.generation, "result", result,
			"accepted", conds[0].Message, "compiled", conds[1].Message)
	}
	if err := c.writeConditions(ctx, src, k, obj, conds, drop); err != nil {
		return err
	}
	c.metrics.reconciles.WithLabelValues(result).Inc()
	return nil
}

// commit stores an object's new entry (nil: the object is gone), makes
// the registry match, announces the changes, requeues the objects whose
// conditions the change affects and returns the object's conditions (the
// first two Accepted and Compiled) and the types of its conditions to
// remove.
func (c *Controller) commit(k key, prev, next *entry) (conds []metav1.Condition, drop []string) {
	c.mu.Lock()
	affected := make([]schema.GroupVersionKind, 0, 2)
	if prev != nil && prev.program != nil {
		affected = append(affected, prev.gvk)
	}
	if next == nil {
		delete(c.entries, k)
		delete(c.stuck, k)
		delete(c.limits, k)
	} else {
		c.entries[k] = next
		if next.program != nil {
			affected = append(affected, next.gvk)
		}
	}
	changes, requeue := c.assign(k, affected)
	if next != nil {
		winner := c.winnerEntry(next)
		conds = conditions(next, winner, c.baseName(next))
		if ev, ok := c.evaluating(next, winner != nil && winner.key == next.key); ok {
			conds = append(conds, ev)
		} else if c.opts.LimitInterval > 0 {
			drop = []string{ConditionEvaluating}
		}
	}
	c.finishInitial(k)
	c.countKartas()
	// Taking notify before releasing mu keeps OnChange calls in the
	// order of the changes.
	c.notify.Lock()
	c.mu.Unlock()
	c.announce(changes)
	c.notify.Unlock()

	for _, r := range requeue {
		c.loop.Add(r)
	}
	return conds, drop
}

// writeConditions writes the conditions to the object's status (and
// removes those of the types in drop), when this controller leads, the
// resource has a status subresource and the server did not already refuse
// to keep them for this generation.
func (c *Controller) writeConditions(ctx context.Context, src source, k key, obj *unstructured.Unstructured, conds []metav1.Condition, drop []string) error {
	c.mu.Lock()
	stuck, isStuck := c.stuck[k]
	c.mu.Unlock()
	if !c.loop.Leading() || !src.status || (isStuck && stuck == obj.GetGeneration()) {
		return nil
	}
	wrote, kept, err := writeStatus(ctx, c.resource(src, k), obj, conds, drop)
	if err != nil || !wrote {
		return err
	}
	c.metrics.statusWrites.Inc()
	if !kept {
		c.log.Warn("the server did not keep the conditions written (does its schema prune status.conditions?); "+
			"not writing them again for this generation", "object", k.String(), "generation", obj.GetGeneration())
		c.mu.Lock()
		c.stuck[k] = obj.GetGeneration()
		c.mu.Unlock()
	}
	return nil
}

// cachedObject returns the informer's copy of the object, nil when it is
// gone.
func cachedObject(store cache.Store, k key) (*unstructured.Unstructured, error) {
	name := k.name
	if k.namespace != "" {
		name = k.namespace + "/" + k.name
	}
	obj, ok, err := store.GetByKey(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s from the cache: %w", k, err)
	}
	if !ok {
		return nil, nil
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("%s: unexpected cached type %T", k, obj)
	}
	return u, nil
}

// resource is the client of an object's resource.
func (c *Controller) resource(src source, k key) dynamic.ResourceInterface {
	r := c.dyn.Resource(src.gvr)
	if src.namespaced {
		return r.Namespace(k.namespace)
	}
	return r
}

// assign applies the conflict rule to the affected kinds and makes the
// registry match: the winner's Program, else the base Program, else none.
// It returns the registry changes and the other objects whose conditions
// changed because the winner of their kind did. Called with mu held.
func (c *Controller) assign(current key, affected []schema.GroupVersionKind) (changes []change, requeue []key) {
	seen := map[schema.GroupVersionKind]bool{}
	for _, g := range affected {
		if seen[g] {
			continue
		}
		seen[g] = true
		w := c.winner(g)
		prevKey, had := c.serving[g]
		desired := c.base[g]
		if w != nil {
			desired = w.program
			c.serving[g] = w.key
		} else {
			delete(c.serving, g)
		}
		if cur, ok := c.registry.Get(g); !ok || cur != desired {
			if desired == nil {
				if ok {
					c.registry.Delete(g)
					changes = append(changes, change{gvk: g})
				}
			} else {
				c.registry.Put(desired)
				changes = append(changes, change{gvk: g, program: desired})
			}
		}
		if (w == nil) == !had && (w == nil || w.key == prevKey) {
			continue // same winner: the others' messages still hold
		}
		for _, e := range c.entries {
			if e.key != current && e.program != nil && e.gvk == g {
				requeue = append(requeue, e.key)
			}
		}
	}
	return changes, requeue
}

// winner is the entry that owns a kind: of the compiled entries claiming
// it, the one created first, then the first by key. Called with mu held.
func (c *Controller) winner(g schema.GroupVersionKind) *entry {
	var w *entry
	for _, e := range c.entries {
		if e.program == nil || e.gvk != g {
			continue
		}
		if w == nil || before(e, w) {
			w = e
		}
	}
	return w
}

// before reports whether a wins a kind over b.
func before(a, b *entry) bool {
	if !a.created.Equal(b.created) {
		return a.created.Before(b.created)
	}
	return a.key.less(b.key)
}

// winnerEntry is the entry owning e's kind, nil when e has no Program.
// Called with mu held.
func (c *Controller) winnerEntry(e *entry) *entry {
	if e.program == nil {
		return nil
	}
	k, ok := c.serving[e.gvk]
	if !ok {
		return nil
	}
	return c.entries[k]
}

// baseName names the base Program of e's kind, "" when none.
func (c *Controller) baseName(e *entry) string {
	if e.program == nil {
		return ""
	}
	if p, ok := c.base[e.gvk]; ok {
		return p.Name()
	}
	return ""
}

// finishInitial marks an object of the initial list reconciled. Called
// with mu held.
func (c *Controller) finishInitial(k key) {
	if c.pending == nil || !c.pending[k] {
		return
	}
	delete(c.pending, k)
	if len(c.pending) == 0 {
		c.synced.Store(true)
	}
}

// announce logs the registry changes and calls OnChange. Called with
// notify held, so that the calls keep the order of the changes.
func (c *Controller) announce(changes []change) {
	for _, ch := range changes {
		if ch.program != nil {
			c.log.Info("registered", "kind", gvkString(ch.gvk), "karta", ch.program.Name())
		} else {
			c.log.Info("unregistered", "kind", gvkString(ch.gvk))
		}
		if c.opts.OnChange != nil {
			c.opts.OnChange(ch.gvk, ch.program)
		}
	}
}
