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

package queue

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// callCounter counts the commands and pipelines a client sends.
type callCounter struct{ n atomic.Int64 }

func (h *callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

// The snapshot read returns the inventory booking publishes (held and sold
// next to remaining; -1 while unpublished) and still the queue samples
// after them, in one round trip.
func TestSnapshotReadsInventory(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	st := newStore(rdb, testEvent)
	joinMany(t, st, testSettings(), "c", 100)

	s, err := st.read(ctx, 8)
	if err != nil {
		t.Fatal(err)
	}
	if s.Remaining != -1 || s.Held != -1 || s.Sold != -1 || s.Waiting != 100 {
		t.Fatalf("before booking published: %+v", s)
	}
	if err := zone.PublishInventory(ctx, rdb, testEvent, zone.Inventory{Available: 40, Held: 7, Sold: 53}); err != nil {
		t.Fatal(err)
	}
	hook := &callCounter{}
	rdb.AddHook(hook)
	s, err = st.read(ctx, 8)
	if err != nil {
		t.Fatal(err)
	}
	if n := hook.n.Load(); n != 1 {
		t.Fatalf("snapshot read took %d round trips, want 1", n)
	}
	if s.Remaining != 47 || s.Held != 7 || s.Sold != 53 || s.Waiting != 100 || s.Watermark != -1 {
		t.Fatalf("after PublishInventory: %+v", s)
	}
	// The samples follow the inventory: ranks 0, 13, 26, ... 99 with the
	// scores Redis holds at those ranks.
	want, err := rdb.ZRangeWithScores(ctx, keysFor(testEvent).queue, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Samples) != 9 || s.Samples[0].Rank != 0 || s.Samples[len(s.Samples)-1].Rank != 99 {
		t.Fatalf("samples %+v", s.Samples)
	}
	for _, sm := range s.Samples {
		if sm.Score != int64(want[sm.Rank].Score) {
			t.Fatalf("sample %+v, Redis has score %.0f at that rank", sm, want[sm.Rank].Score)
		}
	}
}

// GET /events/{id}/stats reports held and sold as booking publishes them
// through zone.PublishInventory (-1 before), with remaining and soldOut
// from the same write.
func TestStatsReportInventory(t *testing.T) {
	redisURL, rdb := testenv.RedisDB(t) // the queue's database
	base := startService(t, testConfig(t, redisURL), nil)
	stats := func() Stats {
		t.Helper()
		r := do(t, "GET", base+"/events/42/stats", "", nil)
		var s Stats
		if err := json.Unmarshal(r.Body, &s); err != nil || r.Status != 200 {
			t.Fatalf("stats: %d %s", r.Status, r.Body)
		}
		return s
	}
	var s Stats
	if s = stats(); s.Held != -1 || s.Sold != -1 || s.Remaining != -1 || s.SoldOut {
		t.Fatalf("before booking published: %+v", s)
	}
	raw := do(t, "GET", base+"/events/42/stats", "", nil).Body
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["held"]; !ok {
		t.Fatalf("no held in %s", raw)
	}
	if _, ok := fields["sold"]; !ok {
		t.Fatalf("no sold in %s", raw)
	}

	ctx := context.Background()
	if err := zone.PublishInventory(ctx, rdb, testEvent, zone.Inventory{Available: 41000, Held: 1500, Sold: 7500}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "held 1500, sold 7500", func() bool { s = stats(); return s.Held == 1500 && s.Sold == 7500 })
	if s.Remaining != 42500 || s.SoldOut {
		t.Fatalf("after publishing: %+v", s)
	}
	if err := zone.PublishInventory(ctx, rdb, testEvent, zone.Inventory{Sold: 50000}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "sold out", func() bool { s = stats(); return s.Sold == 50000 })
	if s.Held != 0 || s.Remaining != 0 || !s.SoldOut {
		t.Fatalf("after selling out: %+v", s)
	}
}
