/*
Copyright 2026 The ticketfair Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/ticketfair/ticketfair/workloads/internal/retry"
)

// election configures leader election over a coordination.k8s.io/v1 Lease.
type election struct {
	Kube          *rest.Config
	Namespace     string
	LeaseName     string
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// runElected runs lead whenever this process holds the Lease, until ctx
// ends. lead receives the fencing number of this term of office (see
// leaseFencing). On ctx's end lead is stopped first and the Lease released after
// (ReleaseOnCancel), so the next admitter starts at once, not after the
// lease expires.
func runElected(ctx context.Context, el election, lead func(ctx context.Context, fencing int64)) error {
	cs, err := kubernetes.NewForConfig(el.Kube)
	if err != nil {
		return fmt.Errorf("leader election client: %w", err)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metaFor(el.Namespace, el.LeaseName),
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: el.Identity},
	}
	// The election outlives ctx until lead has returned.
	elCtx, elCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer elCancel()
	running := make(chan struct{}, 1)
	go func() {
		<-ctx.Done()
		select {
		case running <- struct{}{}: // lead is not running, and won't start
		case <-elCtx.Done():
		}
		elCancel()
	}()
	for elCtx.Err() == nil {
		// A lead that returns on its own (fenced off) gives the Lease up
		// and contends again rather than hold it idle.
		runCtx, runCancel := context.WithCancel(elCtx)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   el.LeaseDuration,
			RenewDeadline:   el.RenewDeadline,
			RetryPeriod:     el.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            el.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					select {
					case running <- struct{}{}:
					case <-lctx.Done():
						return
					}
					defer runCancel()
					defer func() { <-running }()
					if ctx.Err() != nil {
						return
					}
					leadCtx, cancel := context.WithCancel(lctx)
					stop := context.AfterFunc(ctx, cancel)
					defer stop()
					defer cancel()
					fencing, err := termFencing(leadCtx, cs, el)
					if err != nil {
						slog.Warn("leading, but no fencing number: giving the Lease up", "lease", el.LeaseName, "err", err)
						return
					}
					slog.Info("leading: this pod admits", "lease", el.LeaseName, "identity", el.Identity, "fencing", fencing)
					lead(leadCtx, fencing)
				},
				OnStoppedLeading: func() {
					slog.Info("not leading", "lease", el.LeaseName, "identity", el.Identity)
				},
			},
		})
		if err != nil {
			runCancel()
			return fmt.Errorf("leader election: %w", err)
		}
		le.Run(runCtx)
		runCancel()
	}
	return nil
}

func metaFor(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

// leaseFencing is the fencing number of the Lease's current holder: its
// leaseTransitions (the API server increments it, under optimistic
// concurrency, each time another identity acquires the Lease) above the
// Lease's creation time in seconds, so a Lease deleted and created again
// still counts upwards. Unlike a counter in Redis, it cannot go backwards
// when a Redis failover loses the latest writes. It stays below 2^53, so
// Lua's numbers hold it exactly.
func leaseFencing(l *coordinationv1.Lease) int64 {
	var transitions int64
	if l.Spec.LeaseTransitions != nil {
		transitions = int64(*l.Spec.LeaseTransitions)
	}
	return l.CreationTimestamp.Unix()<<fencingTransitionBits + transitions
}

// fencingTransitionBits leave room for a million elections per Lease.
const fencingTransitionBits = 20

// termFencing reads the Lease just acquired and returns its fencing number,
// retrying until ctx ends. The Lease must still name this identity: the
// number belongs to this term, not a later one.
func termFencing(ctx context.Context, cs kubernetes.Interface, el election) (int64, error) {
	for {
		l, err := cs.CoordinationV1().Leases(el.Namespace).Get(ctx, el.LeaseName, metav1.GetOptions{})
		switch {
		case err == nil && (l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != el.Identity):
			return 0, fmt.Errorf("lease %s is held by another identity", el.LeaseName)
		case err == nil:
			return leaseFencing(l), nil
		}
		slog.Warn("reading the admitter lease", "lease", el.LeaseName, "err", err)
		if err := retry.Sleep(ctx, el.RetryPeriod); err != nil {
			return 0, err
		}
	}
}
