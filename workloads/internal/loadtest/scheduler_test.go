package loadtest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A generator that fell behind serves, among due tasks, admitted people
// first, then people in line, then joins, each kind in time order.
func TestSchedulerServesAdmittedThenWaitingThenJoins(t *testing.T) {
	s := newScheduler()
	past := time.Now().Add(-time.Minute)
	var customers []*customer
	for i, st := range []step{stepJoin, stepPoll, stepChoose, stepJoin, stepPoll, stepPay} {
		c := &customer{id: int32(i), next: st}
		customers = append(customers, c)
		s.add(c, past.Add(time.Duration(i)*time.Second))
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
