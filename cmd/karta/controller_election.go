package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// election runs leader election with a Lease and switches the
// controller's status writes with it.
type election struct {
	config leaderelection.LeaderElectionConfig
	log    *slog.Logger
}

// leader is what leader election switches: the Karta controller's status
// writes and the gang output's writes.
type leader interface {
	SetLeading(bool)
	Leading() bool
}

// leaders switch together.
type leaders []leader

func (l leaders) SetLeading(leading bool) {
	for _, x := range l {
		x.SetLeading(leading)
	}
}

// Leading reports whether the first (the Karta controller) leads.
func (l leaders) Leading() bool { return l[0].Leading() }

func newElection(f *controllerFlags, cfg *rest.Config, ctrl leader, log *slog.Logger) (*election, error) {
	ns := f.leaseNamespace
	if ns == "" {
		var err error
		if ns, err = f.config.ResolvedNamespace(); err != nil {
			return nil, err
		}
	}
	id := f.identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("leader election identity: %w", err)
		}
		id = fmt.Sprintf("%s_%d", host, os.Getpid())
	}
	client, err := coordinationv1.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: f.leaseName},
		Client:     client,
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	log = log.With("lease", ns+"/"+f.leaseName, "identity", id)
	// OnStartedLeading runs in a goroutine of its own and may run after
	// OnStoppedLeading; its context is cancelled before OnStoppedLeading
	// is called, so checking it under mu keeps a late start from turning
	// writes back on.
	var mu sync.Mutex
	e := &election{log: log, config: leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            f.leaseName,
		LeaseDuration:   f.leaseDuration,
		RenewDeadline:   f.leaseRenewal,
		RetryPeriod:     f.leaseRetry,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				defer mu.Unlock()
				if ctx.Err() == nil {
					log.Info("leading: writing status")
					ctrl.SetLeading(true)
				}
			},
			OnStoppedLeading: func() {
				mu.Lock()
				defer mu.Unlock()
				if ctrl.Leading() {
					log.Info("stopped leading: standby")
				}
				ctrl.SetLeading(false)
			},
			OnNewLeader: func(leader string) {
				if leader != id {
					log.Info("standby", "leader", leader)
				}
			},
		},
	}}
	// Checks the durations before anything runs.
	if _, err := leaderelection.NewLeaderElector(e.config); err != nil {
		return nil, usageError("leader election: %v", err)
	}
	return e, nil
}

// run campaigns until ctx ends. Losing the lease (renewal failed) puts the
// controller in standby and starts a new campaign; the lease is released
// when ctx ends.
func (e *election) run(ctx context.Context) {
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(e.config)
		if err != nil { // checked in newElection
			e.log.Error("leader election", "err", err)
			return
		}
		le.Run(ctx)
	}
}
