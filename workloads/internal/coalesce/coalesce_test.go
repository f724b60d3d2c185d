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

package coalesce

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Requests that arrive while a call is in flight share the next call, and
// each gets its own answer.
func TestRequestsShareCalls(t *testing.T) {
	var calls, largest atomic.Int64
	release := make(chan struct{})
	first := make(chan struct{}, 1)
	b := New(64, time.Second, func(_ context.Context, reqs []int) ([]int, error) {
		if calls.Add(1) == 1 {
			first <- struct{}{}
			<-release // hold the first call so the others gather
		}
		if n := int64(len(reqs)); n > largest.Load() {
			largest.Store(n)
		}
		out := make([]int, len(reqs))
		for i, r := range reqs {
			out[i] = r * r
		}
		return out, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx)

	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	answer := func(i int) {
		defer wg.Done()
		got, err := b.Do(ctx, i)
		if err != nil || got != i*i {
			errs <- errors.New("wrong answer")
		}
	}
	wg.Add(1)
	go answer(0)
	<-first
	for i := 1; i < n; i++ {
		wg.Add(1)
		go answer(i)
	}
	// Let the others queue behind the first call, then release it.
	for len(b.reqs) < n-1 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	// The first call, then 199 gathered at most 64 a call: 4 calls.
	if c := calls.Load(); c != 5 {
		t.Errorf("%d calls for %d requests, want 5 (1, then 199 by 64)", c, n)
	}
	if l := largest.Load(); l != 64 {
		t.Errorf("largest call %d requests, want the bound 64", l)
	}
}

// A failed call answers every request of its batch with its error, and a
// call that answers the wrong number of requests is an error too.
func TestErrorsAnswerTheBatch(t *testing.T) {
	fail := errors.New("store down")
	var mode atomic.Int32
	b := New(8, time.Second, func(_ context.Context, reqs []string) ([]string, error) {
		if mode.Load() == 0 {
			return nil, fail
		}
		return reqs[:len(reqs)-1], nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx)
	if _, err := b.Do(ctx, "a"); !errors.Is(err, fail) {
		t.Fatalf("err %v, want %v", err, fail)
	}
	mode.Store(1)
	if _, err := b.Do(ctx, "a"); err == nil || !strings.Contains(err.Error(), "0 answers for 1 requests") {
		t.Fatalf("err %v, want the count mismatch", err)
	}
}

// A caller whose context ends stops waiting; the batcher goes on.
func TestCallerGivesUp(t *testing.T) {
	block := make(chan struct{})
	b := New(8, time.Second, func(_ context.Context, reqs []int) ([]int, error) {
		<-block
		return reqs, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx)
	short, stop := context.WithTimeout(ctx, 20*time.Millisecond)
	defer stop()
	if _, err := b.Do(short, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	close(block)
	if got, err := b.Do(ctx, 7); err != nil || got != 7 {
		t.Fatalf("after a caller gave up: %d, %v", got, err)
	}
}

// TestGatherLingersUntilEnough: with a linger, a batch lingers only while
// it holds fewer requests than enough (the last call's size), and goes as
// soon as it has them. The linger is two seconds, so the bounds hold on a
// loaded machine.
func TestGatherLingersUntilEnough(t *testing.T) {
	const linger = 2 * time.Second
	b := New(256, time.Second, func(context.Context, []int) ([]int, error) { return nil, nil }).WithLinger(linger)
	queued := func(n int) {
		for range n {
			b.reqs <- &pending[int, int]{done: make(chan result[int], 1)}
		}
	}
	gather := func(enough int) (int, time.Duration) {
		start := time.Now()
		batch := b.gather(nil, enough)
		return len(batch), time.Since(start)
	}

	queued(5)
	if n, took := gather(5); n != 5 || took >= linger/2 {
		t.Fatalf("enough waiting: gathered %d in %v, want 5 at once", n, took)
	}
	queued(3)
	if n, took := gather(0); n != 3 || took >= linger/2 {
		t.Fatalf("no linger asked: gathered %d in %v, want the 3 waiting at once", n, took)
	}
	queued(3)
	if n, took := gather(5); n != 3 || took < linger {
		t.Fatalf("too few and none arriving: gathered %d in %v, want 3 after the whole linger", n, took)
	}
	queued(3)
	go func() { time.Sleep(50 * time.Millisecond); queued(2) }()
	if n, took := gather(5); n != 5 || took >= linger/2 {
		t.Fatalf("the missing two arrive: gathered %d in %v, want 5 as soon as they came", n, took)
	}
	queued(300)
	if n, _ := gather(1000); n != 256 {
		t.Fatalf("gathered %d, want at most the batch's maximum 256", n)
	}
	// Without a linger nothing waits, whatever the last call carried.
	b.WithLinger(0)
	for len(b.reqs) > 0 {
		<-b.reqs
	}
	queued(2)
	if n, took := gather(50); n != 2 || took >= linger/2 {
		t.Fatalf("no linger: gathered %d in %v, want the 2 waiting at once", n, took)
	}
}
