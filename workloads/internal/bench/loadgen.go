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

package bench

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// measurement is the outcome of one closed-loop run.
type measurement struct {
	Ops       int64
	Errors    int64
	FirstErr  error // the first of Errors
	PerSecond float64
	P50, P99  time.Duration
}

// closedLoop runs do from conc goroutines for dur, each starting its next
// call when the previous returns: the same load generator for every
// baseline and every ticketfair figure, so ratios compare like with like.
func closedLoop(ctx context.Context, conc int, dur time.Duration, do func(ctx context.Context, worker, i int) error) measurement {
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var ops, errs atomic.Int64
	var firstErr atomic.Pointer[error]
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for i := 0; ctx.Err() == nil; i++ {
				t := time.Now()
				err := do(ctx, w, i)
				if ctx.Err() != nil {
					break
				}
				local = append(local, time.Since(t))
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, &err)
				} else {
					ops.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	m := measurement{Ops: ops.Load(), Errors: errs.Load(), PerSecond: float64(ops.Load()) / elapsed.Seconds()}
	if e := firstErr.Load(); e != nil {
		m.FirstErr = *e
	}
	if len(lat) > 0 {
		m.P50 = lat[len(lat)/2]
		m.P99 = lat[len(lat)*99/100]
	}
	return m
}

func httpClient(conc int) *http.Client {
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2, IdleConnTimeout: time.Minute},
	}
}
