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
	"sync"
	"time"
)

// scheduler runs many simulated customers with a fixed number of workers:
// an idle customer is an entry in a heap, not a sleeping goroutine, so
// millions of them fit in memory.
type scheduler struct {
	mu sync.Mutex
	// Due tasks are served urgent first, then polls, then joins: people
	// run in parallel, the generator cannot, and when it falls behind an
	// admitted person must not miss the claim window or let a hold expire
	// behind a backlog of other people's joins.
	urgent taskHeap // admitted customers
	polls  taskHeap // customers waiting in line
	joins  taskHeap
	// parked are people far back in line, by place, per queue (see park).
	parked  []taskHeap
	wake    chan struct{}
	pending sync.WaitGroup // customers not finished yet
}

type task struct {
	// key orders the heap: unix nanoseconds when due, or the place of a
	// parked person.
	key   int64
	c     *customer
	epoch uint32 // c.epoch when scheduled: a task of an older epoch is void
}

// taskHeap is a min-heap of tasks by key, written out for its one element
// type: with two million people, the scheduler was 6% of the load
// generator's CPU, most of it in container/heap's interface calls.
type taskHeap []task

func (h *taskHeap) push(t task) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].key <= t.key {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = t
}

func (h *taskHeap) pop() task {
	s := *h
	top, n := s[0], len(s)-1
	last := s[n]
	s[n] = task{} // no hold on the customer
	s = s[:n]
	*h = s
	if n > 0 {
		i := 0
		for {
			l := 2*i + 1
			if l >= n {
				break
			}
			if r := l + 1; r < n && s[r].key < s[l].key {
				l = r
			}
			if last.key <= s[l].key {
				break
			}
			s[i] = s[l]
			i = l
		}
		s[i] = last
	}
	return top
}

func newScheduler() *scheduler { return &scheduler{wake: make(chan struct{}, 1)} }

// add schedules a new customer's first step.
func (s *scheduler) add(c *customer, at time.Time) {
	s.pending.Add(1)
	s.at(c, at)
}

// at schedules the customer's next step, voiding any other it had.
func (s *scheduler) at(c *customer, at time.Time) {
	s.mu.Lock()
	s.push(c, at)
	s.mu.Unlock()
	s.poke()
}

func (s *scheduler) push(c *customer, at time.Time) {
	c.epoch++
	t := task{key: at.UnixNano(), c: c, epoch: c.epoch}
	switch {
	case c.next >= stepChoose:
		s.urgent.push(t)
	case c.next == stepPoll:
		s.polls.push(t)
	default:
		s.joins.push(t)
	}
}

func (s *scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// park puts a person far back in line to sleep until wakeUpTo reaches
// their place, or until heartbeat, whichever is first.
func (s *scheduler) park(c *customer, queue uint8, place int64, heartbeat time.Time) {
	s.mu.Lock()
	s.push(c, heartbeat)
	for len(s.parked) <= int(queue) {
		s.parked = append(s.parked, nil)
	}
	s.parked[queue].push(task{key: place, c: c, epoch: c.epoch})
	s.mu.Unlock()
	s.poke()
}

// wakeUpTo schedules, at a time from after, every person parked in queue
// whose place near says is near.
func (s *scheduler) wakeUpTo(queue uint8, near func(place int64) bool, after func() time.Duration) {
	s.mu.Lock()
	now := time.Now()
	if int(queue) >= len(s.parked) {
		s.mu.Unlock()
		return
	}
	h := &s.parked[queue]
	for len(*h) > 0 && near((*h)[0].key) {
		t := h.pop()
		if t.epoch == t.c.epoch { // still asleep
			s.push(t.c, now.Add(after()))
		}
	}
	s.mu.Unlock()
	s.poke()
}

// done marks a customer finished.
func (s *scheduler) done() { s.pending.Done() }

// run hands due customers to workers until ctx ends or every customer is done.
func (s *scheduler) run(ctx context.Context, workers int, step func(context.Context, *customer)) {
	work := make(chan *customer, workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				step(ctx, c)
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { s.pending.Wait(); close(allDone) }()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		var next *task
		due := false
		now := time.Now().UnixNano()
		for _, h := range []*taskHeap{&s.urgent, &s.polls, &s.joins} {
			for len(*h) > 0 && (*h)[0].epoch != (*h)[0].c.epoch {
				h.pop() // rescheduled since
			}
			if len(*h) == 0 {
				continue
			}
			t := (*h)[0]
			if t.key <= now {
				h.pop()
				// Running now: void its other task (a parked one).
				t.c.epoch++
				next, due = &t, true
				break
			}
			if next == nil || t.key < next.key {
				next = &t
			}
		}
		s.mu.Unlock()
		if due {
			select {
			case work <- next.c:
				continue
			case <-ctx.Done():
				close(work)
				wg.Wait()
				return
			}
		}
		wait := time.Hour
		if next != nil {
			wait = time.Until(time.Unix(0, next.key))
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.wake:
		case <-allDone:
			close(work)
			wg.Wait()
			return
		case <-ctx.Done():
			close(work)
			wg.Wait()
			return
		}
	}
}
