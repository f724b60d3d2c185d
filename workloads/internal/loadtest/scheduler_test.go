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

package loadtest

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// A generator that fell behind serves, among due tasks, admitted people
// first, then people in line, then joins, each kind in time order.
func TestSchedulerServesAdmittedThenWaitingThenJoins(t *testing.T) {
	s := newScheduler()
	past := time.Now().Add(-time.Minute)
	for i, st := range []step{stepJoin, stepPoll, stepChoose, stepJoin, stepPoll, stepPay} {
		s.add(&customer{id: int32(i), next: st}, past.Add(time.Duration(i)*time.Second))
	}
	var (
		mu    sync.Mutex
		order []int32
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// One worker, so the order of service is the order of dispatch.
	s.run(ctx, 1, func(_ context.Context, c *customer) {
		mu.Lock()
		order = append(order, c.id)
		mu.Unlock()
		s.done()
	})
	want := []int32{2, 5, 1, 4, 0, 3}
	if len(order) != len(want) {
		t.Fatalf("served %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("served %v, want %v", order, want)
		}
	}
}

// A parked person runs once: when the watermark nears their place or at
// their heartbeat, whichever is first, never both.
func TestSchedulerParkedRunOnce(t *testing.T) {
	s := newScheduler()
	near := &customer{id: 1, next: stepPoll}
	far := &customer{id: 2, next: stepPoll}
	beat := &customer{id: 3, next: stepPoll}
	s.pending.Add(3)
	s.park(near, 0, 10, time.Now().Add(time.Hour))
	s.park(far, 0, 20, time.Now().Add(time.Hour))
	s.park(beat, 0, 30, time.Now().Add(50*time.Millisecond))
	var (
		mu   sync.Mutex
		runs = map[int32]int{}
		ran  = make(chan int32, 10)
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go s.run(ctx, 2, func(_ context.Context, c *customer) {
		mu.Lock()
		runs[c.id]++
		mu.Unlock()
		ran <- c.id
		s.done()
	})
	now := func() time.Duration { return 0 }
	if id := <-ran; id != beat.id {
		t.Fatalf("first to run: %d, want the heartbeat's %d", id, beat.id)
	}
	s.wakeUpTo(0, func(place int64) bool { return place <= 15 }, now)
	if id := <-ran; id != near.id {
		t.Fatalf("woken: %d, want %d", id, near.id)
	}
	select {
	case id := <-ran:
		t.Fatalf("%d ran, not woken", id)
	case <-time.After(200 * time.Millisecond):
	}
	s.wakeUpTo(0, func(int64) bool { return true }, now)
	if id := <-ran; id != far.id {
		t.Fatalf("woken: %d, want %d", id, far.id)
	}
	select {
	case id := <-ran:
		t.Fatalf("%d ran twice", id)
	case <-time.After(200 * time.Millisecond):
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range runs {
		if n != 1 {
			t.Fatalf("%d ran %d times", id, n)
		}
	}
}

// The task heap pops in key order through any interleaving of pushes and
// pops, ties and negative keys included.
func TestTaskHeapPopsInKeyOrder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var h taskHeap
	var shadow []int64 // the keys in h, kept sorted
	for i := 0; i < 20000; i++ {
		if len(h) > 0 && rnd.IntN(3) == 0 {
			got := h.pop().key
			if got != shadow[0] {
				t.Fatalf("pop %d: %d, want %d", i, got, shadow[0])
			}
			shadow = shadow[1:]
			continue
		}
		k := rnd.Int64N(1000) - 500
		h.push(task{key: k})
		j, _ := slices.BinarySearch(shadow, k)
		shadow = slices.Insert(shadow, j, k)
	}
	for len(h) > 0 {
		if got := h.pop().key; got != shadow[0] {
			t.Fatalf("draining: %d, want %d", got, shadow[0])
		}
		shadow = shadow[1:]
	}
	if len(shadow) != 0 {
		t.Fatalf("%d keys never popped", len(shadow))
	}
}
