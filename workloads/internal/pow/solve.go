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

package pow

import (
	"context"
	"crypto/sha256"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// Solve finds a nonce for a challenge token of difficulty with workers
// goroutines (0: one per CPU), as a native solver does: it tries the
// decimal counters 0, 1, 2, ... split among the workers. It returns the
// nonce and the hashes tried, or ctx's error.
func Solve(ctx context.Context, token string, difficulty, workers int) (string, uint64, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		found  atomic.Bool
		tried  atomic.Uint64
		once   sync.Once
		answer string
		wg     sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(start uint64) {
			defer wg.Done()
			buf := make([]byte, 0, len(token)+20)
			buf = append(buf, token...)
			var n uint64
			for i := start; ; i += uint64(workers) {
				if n&1023 == 0 && (found.Load() || ctx.Err() != nil) {
					break
				}
				n++
				b := strconv.AppendUint(buf[:len(token)], i, 10)
				sum := sha256.Sum256(b)
				if zeroBits(sum[:]) >= difficulty {
					once.Do(func() { answer = strconv.FormatUint(i, 10) })
					found.Store(true)
					break
				}
			}
			tried.Add(n)
		}(uint64(w))
	}
	wg.Wait()
	if !found.Load() {
		return "", tried.Load(), ctx.Err()
	}
	return answer, tried.Load(), nil
}

// Adaptive is the difficulty handed to a client whose network (or subject
// prefix) made rate joins in the limiter's current window: base while rate
// is under threshold, then step more bits for the threshold's first
// multiple and for each doubling beyond it, at most max. Each step of one
// bit doubles a solver's expected work.
func Adaptive(base, step, max int, threshold, rate int64) int {
	d := base
	if threshold > 0 && rate >= threshold {
		d += step
		for r := rate / threshold; r >= 2 && d < max; r /= 2 {
			d += step
		}
	}
	return min(d, max)
}
