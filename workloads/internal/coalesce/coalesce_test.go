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
