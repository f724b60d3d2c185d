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
	"crypto/ed25519"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// TestRedisModes runs a small sale's Redis path (join, poll, admission,
// booking's session check and release, the inventory, leave) against each
// kind of Redis a managed service offers, all real servers on loopback.
func TestRedisModes(t *testing.T) {
	t.Run("TLSAndACL", func(t *testing.T) {
		cfg, _ := testenv.RedisSecure(t)
		saleOn(t, cfg)
	})
	t.Run("Sentinel", func(t *testing.T) {
		_, cfg := testenv.RedisSentinel(t, 5*time.Second)
		saleOn(t, cfg)
	})
	t.Run("Cluster", func(t *testing.T) {
		_, cfg := testenv.RedisCluster(t, 5*time.Second)
		rdb := saleOn(t, cfg)
		oneSlot(t, rdb.(*redis.ClusterClient))
	})
}

// saleOn runs the queue on rc and walks customers through it; it returns a
// client of the same Redis, for the caller to inspect.
func saleOn(t *testing.T, rc config.Redis) redis.UniversalClient {
	t.Helper()
	ctx := context.Background()
	rdb, err := redisconn.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	cfg := testConfig(t, "")
	cfg.Redis = rc
	cfg.Admitter = true
	cfg.MaxActive, cfg.RatePerSecond, cfg.TickInterval = 3, 100, 50*time.Millisecond
	base := startService(t, cfg, nil)

	const n = 5
	qids := make([]string, n)
	for i := range n {
		r := do(t, "POST", queueURL(base), idToken(t, fmt.Sprintf("c%d", i)), nil)
		if r.Status != 201 {
			t.Fatalf("join: %d %s", r.Status, r.Body)
		}
		qids[i] = r.view(t).QueueID
	}
	poll := func(i int) queueapi.Place {
		r := do(t, "GET", queueURL(base)+"/"+qids[i], idToken(t, fmt.Sprintf("c%d", i)), nil)
		if r.Status != 200 {
			t.Fatalf("poll: %d %s", r.Status, r.Body)
		}
		return r.view(t)
	}
	ks, err := accesstoken.ParseKeys(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	verifier := accesstoken.NewVerifier(func() map[string]ed25519.PublicKey { return ks.PublicKeys() })
	var sids []string
	for i := range 3 {
		var v queueapi.Place
		testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("c%d admitted", i), func() bool { v = poll(i); return v.Status == "admitted" })
		c, err := verifier.Verify(v.AccessToken, testEvent)
		if err != nil {
			t.Fatal(err)
		}
		// The booking service's check before a hold.
		if ok, err := zone.SessionActive(ctx, rdb, testEvent, c.SessionID); !ok || err != nil {
			t.Fatalf("c%d's session not active: %v", i, err)
		}
		sids = append(sids, c.SessionID)
	}
	time.Sleep(200 * time.Millisecond)
	if v := poll(3); v.Status != "waiting" || v.Ahead != 0 {
		t.Fatalf("c3 with a full zone (MaxActive 3): %+v", v)
	}
	// A purchase releases the session and publishes the inventory.
	if err := zone.ReleaseSession(ctx, rdb, testEvent, sids[0]); err != nil {
		t.Fatal(err)
	}
	if err := zone.PublishInventory(ctx, rdb, testEvent, zone.Inventory{Available: 7, Held: 2, Sold: 1}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := zone.SessionActive(ctx, rdb, testEvent, sids[0]); ok {
		t.Fatal("released session still active")
	}
	testenv.WaitFor(t, 10*time.Second, "c3 admitted", func() bool { return poll(3).Status == "admitted" })
	if r := do(t, "DELETE", queueURL(base)+"/"+qids[4], idToken(t, "c4"), nil); r.Status != 200 {
		t.Fatalf("leave: %d %s", r.Status, r.Body)
	}
	testenv.WaitFor(t, 5*time.Second, "stats with the inventory", func() bool {
		r := do(t, "GET", base+"/events/42/stats", "", nil)
		return r.Status == 200 && strings.Contains(string(r.Body), `"remaining":9`) && strings.Contains(string(r.Body), `"admittedTotal":4`)
	})
	return rdb
}

// oneSlot proves on the real cluster that every key the sale wrote is in
// the event's hash slot, so on one master: the queue's Lua scripts and
// booking's MULTI/EXEC never cross slots.
func oneSlot(t *testing.T, c *redis.ClusterClient) {
	ctx := context.Background()
	slot, err := c.ClusterKeySlot(ctx, zone.Prefix(testEvent)+"queue").Result()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex // ForEachMaster calls fn on every master at once
		keys    []string
		holders = 0
	)
	err = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		ks, err := m.Keys(ctx, "*").Result()
		mu.Lock()
		defer mu.Unlock()
		if len(ks) > 0 {
			holders++
		}
		for _, k := range ks {
			s, err := m.ClusterKeySlot(ctx, k).Result()
			if err != nil {
				return err
			}
			if s != slot || !strings.HasPrefix(k, zone.Prefix(testEvent)) {
				return fmt.Errorf("key %s is in slot %d, the event's is %d", k, s, slot)
			}
		}
		// The count the node itself keeps for the slot agrees.
		if n, _ := m.ClusterCountKeysInSlot(ctx, int(slot)).Result(); n != int64(len(ks)) && len(ks) > 0 {
			return fmt.Errorf("CLUSTER COUNTKEYSINSLOT %d = %d, KEYS * = %d", slot, n, len(ks))
		}
		keys = append(keys, ks...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if holders != 1 || len(keys) < 8 {
		t.Fatalf("%d keys on %d masters, want the sale's keys (queue, customers, active, admit log, ...) on 1", len(keys), holders)
	}
	t.Logf("all %d keys of event %d in slot %d on one master: %v", len(keys), testEvent, slot, keys)
}
