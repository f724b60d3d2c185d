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

package txgate

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestNeverMoreThanTheLimit races 200 goroutines through a gate of 5:
// never more than 5 run at once, 5 do run at once, and every slot comes
// back.
func TestNeverMoreThanTheLimit(t *testing.T) {
	g := New(Config{Min: 5, Max: 5})
	var running, peak atomic.Int64
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for range 20 {
				if err := g.Acquire(context.Background()); err != nil {
					t.Error(err)
					return
				}
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
				running.Add(-1)
				g.Done(time.Duration(1+r.IntN(5)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p != 5 {
		t.Fatalf("peak concurrency %d, want exactly 5", p)
	}
	if g.InFlight() != 0 || g.Waiting() != 0 {
		t.Fatalf("in flight %d, waiting %d after all were done", g.InFlight(), g.Waiting())
	}
}

// TestFirstComeFirstServed: waiters are let in in the order they came.
func TestFirstComeFirstServed(t *testing.T) {
	g := New(Config{Min: 1, Max: 1})
	if err := g.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 10)
	for i := range 10 {
		go func() {
			if err := g.Acquire(context.Background()); err != nil {
				t.Error(err)
				return
			}
			order <- i
		}()
		for g.Waiting() != i+1 { // queue them one after the other
			time.Sleep(time.Millisecond)
		}
	}
	for want := range 10 {
		g.Done(time.Millisecond)
		if got := <-order; got != want {
			t.Fatalf("waiter %d let in when %d was next", got, want)
		}
	}
	g.Done(time.Millisecond)
	if g.InFlight() != 0 {
		t.Fatalf("in flight %d", g.InFlight())
	}
}

// TestCancelledWaitersLeakNothing: waiters that give up leave the queue,
// and a slot granted to one as it gave up goes to the next.
func TestCancelledWaitersLeakNothing(t *testing.T) {
	g := New(Config{Min: 2, Max: 2})
	var wg sync.WaitGroup
	var admitted, gaveUp atomic.Int64
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%7)*100*time.Microsecond)
			defer cancel()
			if err := g.Acquire(ctx); err != nil {
				gaveUp.Add(1)
				return
			}
			admitted.Add(1)
			time.Sleep(200 * time.Microsecond)
			g.Done(time.Millisecond)
		}()
	}
	wg.Wait()
	if g.InFlight() != 0 || g.Waiting() != 0 {
		t.Fatalf("in flight %d, waiting %d after all left", g.InFlight(), g.Waiting())
	}
	if admitted.Load() == 0 || gaveUp.Load() == 0 {
		t.Fatalf("admitted %d, gave up %d: the test did not exercise both", admitted.Load(), gaveUp.Load())
	}
	// Both slots are free: two acquire at once without waiting.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for range 2 {
		if err := g.Acquire(ctx); err != nil {
			t.Fatalf("a slot leaked: %v", err)
		}
	}
}

// simulate runs a database whose transactions take base while at most
// knee run at once, and proportionally longer past it, with the gate kept
// full, for n completions; it returns the limits seen over the last half.
func simulate(g *Gate, knee int, base time.Duration, n int) (lo, hi int) {
	lo, hi = 1<<30, 0
	for i := range n {
		for g.InFlight() < g.Limit() {
			_ = g.Acquire(context.Background())
		}
		c := g.InFlight()
		d := base
		if c > knee {
			d = base * time.Duration(c) / time.Duration(knee)
		}
		g.Done(d)
		if i > n/2 {
			lo, hi = min(lo, g.Limit()), max(hi, g.Limit())
		}
	}
	return lo, hi
}

// TestLimitFindsTheKnee: from the minimum the limit settles around the
// concurrency past which the simulated database only gets slower, and it
// follows the knee when it moves, and the floor when the database gets
// slower for good.
func TestLimitFindsTheKnee(t *testing.T) {
	cfg := Config{Min: 2, Max: 64, Slack: time.Microsecond, Window: 500}
	g := New(cfg)
	// Tolerance 2: the limit may run up to twice the knee before the
	// latency says so.
	if lo, hi := simulate(g, 10, 2*time.Millisecond, 20000); lo < 8 || hi > 21 {
		t.Errorf("limit between %d and %d, want around the knee 10 (8-21)", lo, hi)
	}
	if lo, hi := simulate(g, 4, 2*time.Millisecond, 20000); lo < 3 || hi > 9 {
		t.Errorf("after the knee moved to 4: limit between %d and %d, want 3-9", lo, hi)
	}
	if lo, hi := simulate(g, 10, 2*time.Millisecond, 20000); lo < 8 || hi > 21 {
		t.Errorf("after the knee moved back to 10: limit between %d and %d, want 8-21", lo, hi)
	}
	if lo, hi := simulate(g, 10, 6*time.Millisecond, 40000); lo < 8 || hi > 21 {
		t.Errorf("after the database got 3x slower: limit between %d and %d, want 8-21", lo, hi)
	}
	// A database that is fast at any concurrency gets the maximum.
	g = New(Config{Min: 2, Max: 16, Slack: time.Microsecond})
	if lo, _ := simulate(g, 1000, time.Millisecond, 5000); lo != 16 {
		t.Errorf("no knee: limit %d, want the maximum 16", lo)
	}
}
