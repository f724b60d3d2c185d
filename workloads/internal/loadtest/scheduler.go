package loadtest

import (
	"container/heap"
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
	wake    chan struct{}
	pending sync.WaitGroup // customers not finished yet
}

type task struct {
	at time.Time
	c  *customer
}

type taskHeap []task

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h taskHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *taskHeap) Push(x any)        { *h = append(*h, x.(task)) }
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func newScheduler() *scheduler { return &scheduler{wake: make(chan struct{}, 1)} }

// add schedules a new customer's first step.
func (s *scheduler) add(c *customer, at time.Time) {
	s.pending.Add(1)
	s.at(c, at)
}

// at schedules the customer's next step.
func (s *scheduler) at(c *customer, at time.Time) {
	s.mu.Lock()
	switch {
	case c.next >= stepChoose:
		heap.Push(&s.urgent, task{at: at, c: c})
	case c.next == stepPoll:
		heap.Push(&s.polls, task{at: at, c: c})
	default:
		heap.Push(&s.joins, task{at: at, c: c})
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
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
		now := time.Now()
		for _, h := range []*taskHeap{&s.urgent, &s.polls, &s.joins} {
			if len(*h) == 0 {
				continue
			}
			t := (*h)[0]
			if !t.at.After(now) {
				heap.Pop(h)
				next, due = &t, true
				break
			}
			if next == nil || t.at.Before(next.at) {
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
			wait = time.Until(next.at)
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
