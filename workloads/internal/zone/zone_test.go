package zone

import (
	"context"
	"strconv"
	"strings"
	"testing"

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
