package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
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
// ends. On ctx's end lead is stopped first and the Lease released after
// (ReleaseOnCancel), so the next admitter starts at once, not after the
// lease expires.
func runElected(ctx context.Context, el election, lead func(ctx context.Context)) error {
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
					slog.Info("leading: this pod admits", "lease", el.LeaseName, "identity", el.Identity)
					leadCtx, cancel := context.WithCancel(lctx)
					stop := context.AfterFunc(ctx, cancel)
					defer stop()
					defer cancel()
					lead(leadCtx)
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
