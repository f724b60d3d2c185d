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
