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
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// failoverCustomers is the crowd of the Redis failover tests: small in
// make test, TICKETFAIR_FAILOVER_CUSTOMERS for the long version.
func failoverCustomers(t *testing.T) int {
	if s := os.Getenv("TICKETFAIR_FAILOVER_CUSTOMERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 10 {
			t.Fatalf("TICKETFAIR_FAILOVER_CUSTOMERS=%q", s)
		}
		return n
	}
	return 120
}

// TestSentinelFailoverMidSale SIGKILLs the master while a crowd joins,
// polls, is admitted and "buys" (releases its session, as booking does
// after a purchase). The sentinels promote the replica; the queue
// reconnects through them. It reports the seconds of 503s, the places lost
// to asynchronous replication and what their customers saw, and checks
// that every customer is admitted in the end (re-joining after a lost
// place), that the zone never held more than MaxActive, and that the
// customers who kept their place were admitted in FIFO order.
func TestSentinelFailoverMidSale(t *testing.T) {
	h, rc := testenv.RedisSentinel(t, time.Second)
	failoverSale(t, rc, failoverCustomers(t), func() string {
		master, err := h.KillMaster(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return "SIGKILL of the master " + master.Addr
	})
}

// TestClusterFailoverMidSale kills the master of the event's hash slot in
// a 3+3 Redis Cluster mid-sale; its replica takes the slot over.
func TestClusterFailoverMidSale(t *testing.T) {
	c, rc := testenv.RedisCluster(t, 2*time.Second)
	failoverSale(t, rc, failoverCustomers(t), func() string {
		master := slotMaster(t, c, rc)
		master.Kill()
		return "SIGKILL of the slot's master " + master.Addr
	})
}

// slotMaster finds the node serving the event's slot.
func slotMaster(t *testing.T, c *localsvc.RedisCluster, rc config.Redis) *localsvc.Server {
	rdb, err := redisconn.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	slot, _ := rdb.ClusterKeySlot(ctx, zone.Prefix(testEvent)+"queue").Result()
	slots, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			for _, n := range c.Nodes {
				if n.Addr == s.Nodes[0].Addr {
					return n
				}
			}
		}
	}
	t.Fatalf("no master for slot %d", slot)
	return nil
}

type failoverCustomer struct {
	id       string
	rejoined int // places lost (not_found or a session gone) and joined again
	saw      map[string]int
}

func failoverSale(t *testing.T, rc config.Redis, customers int, kill func() string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := testConfig(t, "")
	cfg.Redis = rc
	cfg.Admitter = true
	const maxActive = 15
	cfg.MaxActive, cfg.RatePerSecond, cfg.TickInterval = maxActive, 100, 50*time.Millisecond
	base := startService(t, cfg, nil)
	rdb, err := redisconn.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	ks, err := accesstoken.ParseKeys(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	verifier := accesstoken.NewVerifier(func() map[string]ed25519.PublicKey { return ks.PublicKeys() })
	verifyToken := func(tok string) (*accesstoken.Claims, error) { return verifier.Verify(tok, testEvent) }
	req := func(method, url, tok string) (int, queueapi.Place, error) {
		r, _ := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(nil))
		r.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(r)
		if err != nil {
			return 0, queueapi.Place{}, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v queueapi.Place
		if resp.StatusCode < 300 {
			_ = json.Unmarshal(b, &v)
		}
		return resp.StatusCode, v, nil
	}

	var (
		mu        sync.Mutex
		firstFail time.Time
		lastFail  time.Time
		failures  int
		killedAt  time.Time
		bought    atomic.Int64
		peak      atomic.Int64
	)
	fail := func() {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if firstFail.IsZero() {
			firstFail = now
		}
		lastFail, failures = now, failures+1
	}
	all := make([]*failoverCustomer, customers)
	var wg sync.WaitGroup
	for i := range customers {
		c := &failoverCustomer{id: fmt.Sprintf("c%05d", i), saw: map[string]int{}}
		all[i] = c
		tok := idToken(t, c.id)
		time.Sleep(5 * time.Millisecond) // arrivals spread over the sale
		wg.Go(func() {
			join := func() string {
				for ctx.Err() == nil {
					st, v, err := req("POST", queueURL(base), tok)
					if err == nil && (st == 201 || st == 200) {
						return v.QueueID
					}
					c.saw[fmt.Sprintf("join %d", st)]++
					fail()
					time.Sleep(100 * time.Millisecond)
				}
				return ""
			}
			qid := join()
			for ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
				st, v, err := req("GET", queueURL(base)+"/"+qid, tok)
				switch {
				case err != nil || st >= 500:
					c.saw[fmt.Sprintf("poll %d", st)]++
					fail()
					continue
				case st == 404 || v.Status == "expired" || v.Status == "closed":
					// The place (or the session) did not survive the failover.
					c.saw[fmt.Sprintf("poll %d %s", st, v.Status)]++
					c.rejoined++
					qid = join()
					continue
				case v.Status != "admitted":
					continue
				}
				c.saw["admitted"]++
				// Booking's session check, then the purchase releases it.
				sid := ""
				if cl, err := verifyToken(v.AccessToken); err == nil {
					sid = cl.SessionID
				}
				active, err := zone.SessionActive(ctx, rdb, testEvent, sid)
				if err != nil {
					fail()
					c.saw["session check 503"]++
				}
				if err == nil && !active {
					c.saw["session lost"]++
					c.rejoined++
					qid = join()
					continue
				}
				time.Sleep(30 * time.Millisecond)
				for zone.ReleaseSession(ctx, rdb, testEvent, sid) != nil && ctx.Err() == nil {
					time.Sleep(50 * time.Millisecond)
				}
				bought.Add(1)
				return
			}
		})
		if i == customers/3 {
			// Mid-sale: a third have arrived, some are admitted.
			testenv.WaitFor(t, time.Minute, "the first purchases", func() bool { return bought.Load() > 5 })
			what := kill()
			mu.Lock()
			killedAt = time.Now()
			mu.Unlock()
			t.Logf("%s at %d customers, %d bought", what, i+1, bought.Load())
		}
	}
	stop := make(chan struct{})
	var mon sync.WaitGroup
	mon.Go(func() { // MaxActive, counted independently on whichever node is the master
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if n, err := liveCountScript.Run(ctx, rdb, []string{keysFor(testEvent).active}).Int64(); err == nil {
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
			}
		}
	})
	wg.Wait()
	close(stop)
	mon.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the sale did not end within 5 minutes: %d of %d bought", bought.Load(), customers)
	}

	lost, rejoined := 0, map[string]bool{}
	saw := map[string]int{}
	for _, c := range all {
		if c.rejoined > 0 {
			lost++
			rejoined[c.id] = true
		}
		for k, v := range c.saw {
			saw[k] += v
		}
	}
	mu.Lock()
	unavailable := lastFail.Sub(firstFail)
	if failures == 0 {
		unavailable = 0
	}
	mu.Unlock()
	if got := bought.Load(); got != int64(customers) {
		t.Fatalf("%d of %d customers bought", got, customers)
	}
	if p := peak.Load(); p > maxActive {
		t.Fatalf("%d sessions live at once, MaxActive %d", p, maxActive)
	}
	// FIFO among those who kept their place: the admit log (on the new
	// master) lists their queue sequence numbers in increasing order.
	log, err := rdb.LRange(ctx, keysFor(testEvent).admitLog, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var prev int64 = -1
	admittedTwice := map[string]int{}
	for _, e := range log {
		parts := strings.Split(e, "|")
		admittedTwice[parts[0]]++
		if rejoined[parts[0]] {
			continue
		}
		q, _ := strconv.ParseInt(parts[2], 10, 64)
		if q <= prev {
			t.Fatalf("FIFO broken among surviving places: %s after sequence %d", e, prev)
		}
		prev = q
	}
	for c, n := range admittedTwice {
		if n > 1 && !rejoined[c] {
			t.Fatalf("%s admitted %d times without losing a place", c, n)
		}
	}
	t.Logf("FAILOVER: %d customers, MaxActive %d; Redis unavailable to customers for %.2fs (first to last failed request, %d failed requests, kill at +0s, first failure %+.2fs); places lost %d (re-joined and bought); peak live sessions %d; admit log %d entries; customers saw %v",
		customers, maxActive, unavailable.Seconds(), failures, firstFail.Sub(killedAt).Seconds(), lost, peak.Load(), len(log), saw)
}
