package booking

import (
	"context"
	"testing"
	"time"
)

// A refresh that takes longer than the map's max-age (a loaded database)
// does not make requests wait: the snapshot it started from is served
// until it lands. After a quiet spell, with no refresh under way, the
// first request waits for a fresh map.
func TestSeatMapServedDuringSlowRefresh(t *testing.T) {
	_, pool := testDB(t, testSeating)
	ctx := context.Background()
	const maxAge = 200 * time.Millisecond
	c := &seatCache{store: NewStore(pool, testEvent, 5*time.Minute, 4, "EUR"), maxAge: maxAge}
	s0, err := c.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(maxAge + maxAge/4) // between one and two max-ages old

	// The seat table locked: the refresh's read waits for the lock.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE seat IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	if s, err := c.get(ctx); err != nil || s != s0 {
		t.Fatalf("between one and two max-ages: %v, want the snapshot while a refresh starts", err)
	}
	time.Sleep(2 * maxAge) // now older than two max-ages, the refresh still blocked
	got := make(chan *seatSnapshot, 1)
	go func() {
		s, _ := c.get(ctx)
		got <- s
	}()
	select {
	case s := <-got:
		if s != s0 {
			t.Fatal("during the slow refresh: not the snapshot it started from")
		}
	case <-time.After(time.Second):
		t.Fatal("a request waited for the refresh started from the snapshot it could serve")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.refreshing.Load() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the refresh never landed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s, err := c.get(ctx); err != nil || !s.at.After(s0.at) {
		t.Fatalf("after the refresh: %v, want a newer snapshot", err)
	}

	// A quiet spell: no refresh under way, so the request waits for one.
	time.Sleep(3 * maxAge)
	before := time.Now()
	if s, err := c.get(ctx); err != nil || s.at.Before(before) {
		t.Fatalf("after a quiet spell: %v, want a snapshot taken by this request", err)
	}
}
