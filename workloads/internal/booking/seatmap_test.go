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

package booking

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// A refresh that takes longer than the map's max-age (a loaded database)
// does not make requests wait: the snapshot it started from is served
// until it lands, up to seatStaleFactor max-ages old. After a longer quiet
// spell the first request waits for a fresh map.
func TestSeatMapServedDuringSlowRefresh(t *testing.T) {
	_, pool := testDB(t, testSeating)
	ctx := context.Background()
	const maxAge = 200 * time.Millisecond
	c := &seatCache{store: NewStore(pool, testEvent, 5*time.Minute, 4, "EUR"), maxAge: maxAge}
	s0, err := c.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(maxAge + maxAge/4) // older than a max-age

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
		t.Fatalf("older than a max-age: %v, want the snapshot while a refresh starts", err)
	}
	time.Sleep(2 * maxAge) // older still, the refresh still blocked
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
	for c.snap.Load() == s0 {
		if time.Now().After(deadline) {
			t.Fatal("the refresh never landed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s, err := c.get(ctx); err != nil || !s.at.After(s0.at) {
		t.Fatalf("after the refresh: %v, want a newer snapshot", err)
	}

	// A quiet spell: the request waits for a refresh.
	time.Sleep((seatStaleFactor + 1) * maxAge)
	before := time.Now()
	if s, err := c.get(ctx); err != nil || s.at.Before(before) {
		t.Fatalf("after a quiet spell: %v, want a snapshot taken by this request", err)
	}
}

// A refresh reads only the seats' states against the layout it read once;
// when the event's seats no longer match the layout (a seat added, one
// gone), it reads the layout again, and the map shows the seats as they are.
func TestSeatMapLayoutFollowsTheSeats(t *testing.T) {
	_, pool := testDB(t, testSeating)
	ctx := context.Background()
	c := &seatCache{store: NewStore(pool, testEvent, 5*time.Minute, 4, "EUR"), maxAge: time.Nanosecond}
	sections := func() map[string]SectionSummary {
		t.Helper()
		s, err := c.get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var body seatRowsBody
		if err := json.Unmarshal(s.rows.Body, &body); err != nil {
			t.Fatal(err)
		}
		out := map[string]SectionSummary{}
		for _, sum := range body.Sections {
			out[sum.Name] = sum
		}
		return out
	}
	if got := sections(); got["A"].Total != 200 || got["B"].Total != 50 || got["A"].Available != 200 {
		t.Fatalf("seeded map: %+v", got)
	}
	first := c.layout.Load()

	// A seat taken: the same layout, the new state.
	if _, err := c.store.Hold(ctx, "c1", "s1", []string{SeatID("A", 1, 1)}); err != nil {
		t.Fatal(err)
	}
	if got := sections(); got["A"].Held != 1 || got["A"].Available != 199 || c.layout.Load() != first {
		t.Fatalf("after a hold: %+v, layout read again: %v", got, c.layout.Load() != first)
	}

	// A seat added, then one removed: the layout is read again each time.
	if _, err := pool.Exec(ctx, `INSERT INTO seat (event_id, seat_id, section, row_no, seat_no, price) VALUES ($1, $2, 'C', 1, 1, 10)`,
		testEvent, SeatID("C", 1, 1)); err != nil {
		t.Fatal(err)
	}
	if got := sections(); got["C"].Total != 1 || got["C"].Price != "10.00" || got["A"].Held != 1 || c.layout.Load() == first {
		t.Fatalf("after adding a seat: %+v", got)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM seat WHERE event_id = $1 AND seat_id = $2`, testEvent, SeatID("B", 5, 10)); err != nil {
		t.Fatal(err)
	}
	if got := sections(); got["B"].Total != 49 || got["C"].Total != 1 {
		t.Fatalf("after removing a seat: %+v", got)
	}
}
