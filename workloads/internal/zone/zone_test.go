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

package zone

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// commandCalls reads how often Redis ran cmd, from INFO commandstats.
func commandCalls(t *testing.T, info, cmd string) int {
	t.Helper()
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatalf("commandstats line %q: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// PublishInventory writes the remaining seats (AVAILABLE or HELD) and the
// held and sold figures in one MULTI/EXEC, and a later publish replaces
// all three.
func TestPublishInventory(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	const event = 9
	stats := func() (multi, exec int) {
		t.Helper()
		info, err := rdb.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		return commandCalls(t, info, "multi"), commandCalls(t, info, "exec")
	}
	multi0, exec0 := stats()
	if err := PublishInventory(ctx, rdb, event, Inventory{Available: 40, Held: 5, Sold: 55, Holds: 2}); err != nil {
		t.Fatal(err)
	}
	check := func(remaining int64, held, sold, holds string) {
		t.Helper()
		rem, err := rdb.Get(ctx, RemainingKey(event)).Int64()
		if err != nil || rem != remaining {
			t.Fatalf("%s = %d (%v), want %d", RemainingKey(event), rem, err, remaining)
		}
		inv, err := rdb.HGetAll(ctx, InventoryKey(event)).Result()
		if err != nil || len(inv) != 3 || inv["held"] != held || inv["sold"] != sold || inv["holds"] != holds {
			t.Fatalf("%s = %v (%v), want held %s sold %s holds %s", InventoryKey(event), inv, err, held, sold, holds)
		}
	}
	check(45, "5", "55", "2")
	// The database is this test's own but the server may be shared, so
	// other clients' transactions may add to the counts, never subtract.
	if multi, exec := stats(); multi <= multi0 || exec <= exec0 {
		t.Fatalf("PublishInventory ran no MULTI/EXEC: multi %d -> %d, exec %d -> %d", multi0, multi, exec0, exec)
	}

	// Sold out: remaining 0 is the queue's sold-out signal.
	if err := PublishInventory(ctx, rdb, event, Inventory{Held: 0, Sold: 100}); err != nil {
		t.Fatal(err)
	}
	check(0, "0", "100", "0")
	if got := InventoryKey(event); got != "tf:{9}:inventory" {
		t.Fatalf("InventoryKey = %q", got)
	}
}

// Holds racing on one booking replica check their sessions through one
// Sessions: each gets its own session's answer by Redis's clock (active,
// expired or unknown), and the checks share script calls.
func TestSessionsCoalesced(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const event = 11
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	ms := now.UnixMilli()
	// Session i is active when i%3 == 0, expired when i%3 == 1, unknown
	// otherwise.
	const n = 600
	sid := func(i int) string { return "s" + strconv.Itoa(i) }
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			rdb.ZAdd(ctx, ActiveKey(event), redis.Z{Score: float64(ms + 60_000), Member: sid(i)})
		case 1:
			rdb.ZAdd(ctx, ActiveKey(event), redis.Z{Score: float64(ms - 1), Member: sid(i)})
		}
	}
	scripts := func() int {
		t.Helper()
		info, err := rdb.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		return commandCalls(t, info, "evalsha") + commandCalls(t, info, "eval")
	}
	s := NewSessions(rdb, event)
	go s.Run(ctx)
	before := scripts()
	var wg sync.WaitGroup
	wrong := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			active, err := s.Active(ctx, sid(i))
			if err != nil || active != (i%3 == 0) {
				wrong <- fmt.Sprintf("%s: active %v, err %v", sid(i), active, err)
			}
		}()
	}
	wg.Wait()
	close(wrong)
	for w := range wrong {
		t.Error(w)
	}
	calls := scripts() - before
	t.Logf("%d checks in %d script calls", n, calls)
	if calls < 1 || calls >= n {
		t.Errorf("%d script calls for %d concurrent checks: not shared", calls, n)
	}
	// The one-off check of the queue's tests agrees.
	for _, i := range []int{0, 1, 2} {
		if active, err := SessionActive(ctx, rdb, event, sid(i)); err != nil || active != (i%3 == 0) {
			t.Errorf("SessionActive(%s) = %v, %v", sid(i), active, err)
		}
	}
}
