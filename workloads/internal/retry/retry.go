// Package retry holds the delays between attempts that every retry loop of
// the services uses: jittered backoff and a sleep that ends with ctx.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is exponential with full jitter: a random delay in
// [lo, lo*2^attempt], capped at hi, so replicas do not retry in step.
func Backoff(attempt int, lo, hi time.Duration) time.Duration {
	hi = max(hi, lo)
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	return lo + rand.N(d-lo+1)
}

// Sleep waits for d or until ctx ends, and returns ctx.Err() in that case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
