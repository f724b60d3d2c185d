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
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

func TestJoinConcurrentSameCustomerOnePlace(t *testing.T) {
	base := startService(t, testConfig(t, testenv.RedisURL(t)), nil)
	tok := idToken(t, "alice")
	var mu sync.Mutex
	ids := map[string]int{}
	created := 0
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			r := do(t, "POST", queueURL(base), tok, nil)
			if r.Status != 201 && r.Status != 200 {
				t.Errorf("join: %d %s", r.Status, r.Body)
				return
			}
			v := r.view(t)
			mu.Lock()
			defer mu.Unlock()
			ids[v.QueueID]++
			if r.Status == 201 {
				created++
			}
		})
	}
	wg.Wait()
	if len(ids) != 1 || created != 1 {
		t.Fatalf("100 concurrent joins gave %d queueIds and %d creations, want 1 and 1", len(ids), created)
	}
	// A later customer gets a later place.
	r := do(t, "POST", queueURL(base), idToken(t, "bob"), []byte("{}"))
	if r.Status != 201 || r.view(t).QueueID == "" {
		t.Fatalf("bob's join: %d %s", r.Status, r.Body)
	}
}

// TestAdmissionEndToEnd joins, waits, gets admitted, claims an access token
// that the booking side can verify offline, and leaves.
func TestAdmissionEndToEnd(t *testing.T) {
	redisURL, rdb := testenv.RedisDB(t)
	cfg := testConfig(t, redisURL)
	cfg.Admitter = true
	cfg.MaxActive, cfg.RatePerSecond, cfg.TickInterval = 2, 100, 50*time.Millisecond
	base := startService(t, cfg, nil)

	var qids []string
	for i := range 3 {
		r := do(t, "POST", queueURL(base), idToken(t, fmt.Sprintf("c%d", i)), nil)
		if r.Status != 201 {
			t.Fatalf("join: %d %s", r.Status, r.Body)
		}
		qids = append(qids, r.view(t).QueueID)
	}
	poll := func(i int) queueapi.Place {
		r := do(t, "GET", queueURL(base)+"/"+qids[i], idToken(t, fmt.Sprintf("c%d", i)), nil)
		if r.Status != 200 {
			t.Fatalf("poll: %d %s", r.Status, r.Body)
		}
		v := r.view(t)
		if ra := r.Header.Get("Retry-After"); ra != strconv.Itoa(v.PollAfterSeconds) {
			t.Fatalf("Retry-After %q, pollAfterSeconds %d", ra, v.PollAfterSeconds)
		}
		return v
	}
	var v queueapi.Place
	testenv.WaitFor(t, 5*time.Second, "c0 admitted", func() bool { v = poll(0); return v.Status == "admitted" })
	if v.AccessToken == "" || v.AccessTokenExpiresAt == nil {
		t.Fatalf("admitted without a token: %+v", v)
	}
	// Verify as the booking service does: offline with the JWKS, then the session.
	jr := do(t, "GET", base+"/.well-known/jwks.json", "", nil)
	keys, err := accesstoken.ParseJWKS(jr.Body)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := accesstoken.NewVerifier(func() map[string]ed25519.PublicKey { return keys }).Verify(v.AccessToken, testEvent)
	if err != nil || claims.Customer() != "c0" {
		t.Fatalf("access token: %+v %v", claims, err)
	}
	if ok, err := zone.SessionActive(context.Background(), rdb, testEvent, claims.SessionID); !ok || err != nil {
		t.Fatalf("session not active: %v", err)
	}
	testenv.WaitFor(t, 5*time.Second, "c1 admitted", func() bool { return poll(1).Status == "admitted" })
	// The zone is full (MaxActive 2): c2 waits at the front.
	time.Sleep(200 * time.Millisecond)
	if v := poll(2); v.Status != "waiting" || v.Ahead != 0 {
		t.Fatalf("c2 with a full zone: %+v", v)
	}
	// The booking service releases c0 after a purchase: c2 gets the slot.
	if err := zone.ReleaseSession(context.Background(), rdb, testEvent, claims.SessionID); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "c2 admitted", func() bool { return poll(2).Status == "admitted" })
	if v := poll(0); v.Status != "expired" {
		t.Fatalf("released session polls as %q, want expired", v.Status)
	}
	// c1 leaves: its session ends at once.
	if r := do(t, "DELETE", queueURL(base)+"/"+qids[1], idToken(t, "c1"), nil); r.Status != 200 {
		t.Fatalf("leave: %d %s", r.Status, r.Body)
	}
	if v := poll(1); v.Status != "closed" {
		t.Fatalf("after leaving: %q", v.Status)
	}
	testenv.WaitFor(t, 5*time.Second, "1 live session", func() bool { return liveCount(t, rdb) == 1 })

	var st Stats
	r := do(t, "GET", base+"/events/42/stats", "", nil)
	if err := json.Unmarshal(r.Body, &st); err != nil || r.Status != 200 {
		t.Fatalf("stats: %d %s", r.Status, r.Body)
	}
	testenv.WaitFor(t, 5*time.Second, "stats", func() bool {
		_ = json.Unmarshal(do(t, "GET", base+"/events/42/stats", "", nil).Body, &st)
		return st.AdmittedTotal == 3 && st.Active == 1 && st.Remaining == -1 && st.SalesOpen
	})

	// What the dashboard and the alerts read: the leader, its fencing epoch
	// (the one in Redis), maxActive, the opening and the snapshot's age.
	epoch, err := rdb.Get(context.Background(), keysFor(testEvent).epoch).Int64()
	if err != nil {
		t.Fatal(err)
	}
	m := do(t, "GET", base+"/metrics", "", nil).Body
	for series, want := range map[string]float64{
		"ticketfair_queue_leader": 1, "ticketfair_queue_admitter_epoch": float64(epoch),
		"ticketfair_queue_max_active": 2, "ticketfair_queue_sales_open": 1, "ticketfair_queue_admitted_total": 3,
	} {
		if got := httpapitest.MetricValue(t, m, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if age := httpapitest.MetricValue(t, m, "ticketfair_queue_snapshot_age_seconds"); age < 0 || age > staleAfter.Seconds() {
		t.Errorf("snapshot age %vs", age)
	}
}

func TestBadInput(t *testing.T) {
	redisURL := testenv.RedisURL(t)
	base := startService(t, testConfig(t, redisURL), nil)
	alice := idToken(t, "alice")
	r := do(t, "POST", queueURL(base), alice, nil)
	if r.Status != 201 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	aliceID := r.view(t).QueueID

	expired, _ := identity.SignHS256(testSecret, testIss, testAud, "alice", -time.Hour)
	wrongAud, _ := identity.SignHS256(testSecret, testIss, "other", "alice", time.Hour)
	wrongKey, _ := identity.SignHS256("not-the-secret", testIss, testAud, "alice", time.Hour)
	pipe, _ := identity.SignHS256(testSecret, testIss, testAud, "a|b", time.Hour)
	nul, _ := identity.SignHS256(testSecret, testIss, testAud, "ali\x00ce", time.Hour)
	control, _ := identity.SignHS256(testSecret, testIss, testAud, "ali\x1bce", time.Hour)
	cases := []struct {
		name, method, url, token string
		body                     []byte
		status                   int
		code                     string
	}{
		{"missing token", "POST", queueURL(base), "", nil, 401, "unauthorized"},
		{"malformed token", "POST", queueURL(base), "x.y.z", nil, 401, "unauthorized"},
		{"expired token", "POST", queueURL(base), expired, nil, 401, "unauthorized"},
		{"wrong audience", "POST", queueURL(base), wrongAud, nil, 401, "unauthorized"},
		{"wrong key", "GET", queueURL(base) + "/" + aliceID, wrongKey, nil, 401, "unauthorized"},
		{"pipe in customer id", "POST", queueURL(base), pipe, nil, 400, "bad_customer"},
		{"NUL in customer id", "POST", queueURL(base), nul, nil, 401, "unauthorized"},
		{"control character in customer id", "POST", queueURL(base), control, nil, 401, "unauthorized"},
		{"unknown event", "POST", base + "/events/7/queue", alice, nil, 404, "unknown_event"},
		{"non-numeric event", "GET", base + "/events/x/queue/" + aliceID, alice, nil, 404, "unknown_event"},
		{"another's queueId", "GET", queueURL(base) + "/" + aliceID, idToken(t, "mallory"), nil, 404, "not_found"},
		{"another's queueId (leave)", "DELETE", queueURL(base) + "/" + aliceID, idToken(t, "mallory"), nil, 404, "not_found"},
		{"garbage queueId", "GET", queueURL(base) + "/not-a-queue-id", alice, nil, 404, "not_found"},
		{"malformed JSON", "POST", queueURL(base), alice, []byte("{"), 400, "bad_json"},
		{"JSON not an object", "POST", queueURL(base), alice, []byte(`[1]`), 400, "bad_json"},
		{"unknown field", "POST", queueURL(base), alice, []byte(`{"customerId":"mallory"}`), 400, "bad_json"},
		{"data after the object", "POST", queueURL(base), alice, []byte(`{} {}`), 400, "bad_json"},
		{"body over 64 KiB", "POST", queueURL(base), alice, []byte(`{"x":"` + strings.Repeat("a", 70<<10) + `"}`), 413, "body_too_large"},
		{"wrong method (queue)", "PUT", queueURL(base), alice, nil, 405, "method_not_allowed"},
		{"wrong method (place)", "POST", queueURL(base) + "/" + aliceID, alice, nil, 405, "method_not_allowed"},
		{"unknown path", "GET", base + "/nope", "", nil, 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, c.method, c.url, c.token, c.body)
			if r.Status != c.status || r.errorCode(t) != c.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, c.status, c.code)
			}
		})
	}
	// Nothing was lost or changed: alice still has her place.
	if r := do(t, "POST", queueURL(base), alice, nil); r.Status != 200 || r.view(t).QueueID != aliceID {
		t.Fatalf("alice's place changed: %d %s", r.Status, r.Body)
	}
}

// TestPollCostsNoRedis: polls of waiting customers are answered from the
// snapshot and the queueId; only the snapshot refresh reaches Redis.
func TestPollCostsNoRedis(t *testing.T) {
	redisURL, rdb := testenv.RedisDB(t)
	base := startService(t, testConfig(t, redisURL), nil)
	type cust struct{ tok, id string }
	var cs []cust
	for i := range 50 {
		tok := idToken(t, fmt.Sprintf("c%d", i))
		r := do(t, "POST", queueURL(base), tok, nil)
		cs = append(cs, cust{tok, r.view(t).QueueID})
	}
	time.Sleep(2 * snapshotEvery)
	before := roundTrips(t, rdb, scriptsOnly)
	start := time.Now()
	const polls = 2000
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < polls; i += 8 {
				c := cs[i%len(cs)]
				r := do(t, "GET", queueURL(base)+"/"+c.id, c.tok, nil)
				if r.Status != 200 || r.view(t).Status != "waiting" {
					t.Errorf("poll: %d %s", r.Status, r.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	calls := roundTrips(t, rdb, scriptsOnly) - before
	// The snapshot refreshes every 250 ms whatever the polls; allow for it.
	allowed := int64(elapsed/snapshotEvery) + 3
	if calls > allowed {
		t.Fatalf("%d polls in %v made %d Redis calls (snapshot alone: <= %d)", polls, elapsed, calls, allowed)
	}
	t.Logf("%d polls in %v: %d Redis calls (snapshot refreshes), %.4f per poll", polls, elapsed, calls, float64(calls)/polls)
}

// TestRedisDown: with Redis gone, requests fail fast with 503 and
// Retry-After; when Redis is back (here: a paused one resumes), they recover.
func TestRedisDown(t *testing.T) {
	srv, err := localsvc.StartRedis(context.Background())
	if err != nil {
		testenv.Unavailable(t, "redis-server", err)
	}
	stopped := false
	defer func() {
		if !stopped { // Stop must not be called twice
			_ = srv.Stop()
		}
	}()
	cfg := testConfig(t, srv.URL)
	base := startService(t, cfg, nil)
	tok := idToken(t, "alice")
	r := do(t, "POST", queueURL(base), tok, nil)
	if r.Status != 201 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	qid := r.view(t).QueueID
	opt, _ := redis.ParseURL(srv.URL)
	admin := redis.NewClient(opt)
	defer admin.Close()

	// A hung Redis: every command blocks for 4 s.
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "4000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	pausedAt := time.Now()
	start := time.Now()
	r = do(t, "POST", queueURL(base), idToken(t, "bob"), nil)
	if took := time.Since(start); r.Status != 503 || r.Header.Get("Retry-After") == "" || took > 3*time.Second {
		t.Fatalf("join with Redis hung: %d %s after %v (want 503 with Retry-After within the deadline)", r.Status, r.Body, took)
	}
	time.Sleep(staleAfter + 500*time.Millisecond - time.Since(pausedAt))
	if r := do(t, "GET", queueURL(base)+"/"+qid, tok, nil); r.Status != 503 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("poll with a stale snapshot: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", base+"/readyz", "", nil); r.Status != 503 {
		t.Fatalf("readyz with Redis hung: %d", r.Status)
	}
	// Redis returns.
	testenv.WaitFor(t, 5*time.Second, "recovery", func() bool {
		return do(t, "GET", queueURL(base)+"/"+qid, tok, nil).Status == 200
	})
	if r := do(t, "POST", queueURL(base), idToken(t, "bob"), nil); r.Status != 201 && r.Status != 200 {
		t.Fatalf("join after recovery: %d %s", r.Status, r.Body)
	}

	// Redis gone altogether.
	stopped = true
	_ = srv.Stop()
	start = time.Now()
	r = do(t, "POST", queueURL(base), idToken(t, "carol"), nil)
	if took := time.Since(start); r.Status != 503 || took > 3*time.Second {
		t.Fatalf("join with Redis stopped: %d %s after %v", r.Status, r.Body, took)
	}
	if r.errorCode(t) != "unavailable" {
		t.Fatalf("error code %s", r.Body)
	}
}

// A Redis that restarted without its data no longer has the places it
// gave: their polls answer 404 place_lost at once (not "waiting" until the
// new queue reaches the old number), and joining again gives a new place.
func TestPlaceLostWithRedisData(t *testing.T) {
	redisURL, rdb := testenv.RedisDB(t)
	cfg := testConfig(t, redisURL)
	base := startService(t, cfg, nil)
	tok := idToken(t, "lost")
	r := do(t, "POST", queueURL(base), tok, nil)
	if r.Status != 201 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	old := r.view(t).QueueID
	if r := do(t, "GET", queueURL(base)+"/"+old, tok, nil); r.Status != 200 || r.view(t).Status != "waiting" {
		t.Fatalf("poll: %d %s", r.Status, r.Body)
	}
	// What SHUTDOWN NOSAVE and a new server leave: nothing.
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "the lost place is reported", func() bool {
		r := do(t, "GET", queueURL(base)+"/"+old, tok, nil)
		return r.Status == 404 && r.errorCode(t) == "place_lost"
	})
	// Someone else joins: the queue has a generation again, still not the old one.
	if r := do(t, "POST", queueURL(base), idToken(t, "other"), nil); r.Status != 201 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	time.Sleep(2 * snapshotEvery)
	if r := do(t, "GET", queueURL(base)+"/"+old, tok, nil); r.Status != 404 || r.errorCode(t) != "place_lost" {
		t.Fatalf("poll of a lost place after new joins: %d %s", r.Status, r.Body)
	}
	if r := do(t, "DELETE", queueURL(base)+"/"+old, tok, nil); r.Status != 404 {
		t.Fatalf("leave of a lost place: %d %s", r.Status, r.Body)
	}
	r = do(t, "POST", queueURL(base), tok, nil)
	if r.Status != 201 {
		t.Fatalf("join again: %d %s", r.Status, r.Body)
	}
	fresh := r.view(t).QueueID
	testenv.WaitFor(t, 5*time.Second, "the new place polls", func() bool {
		r := do(t, "GET", queueURL(base)+"/"+fresh, tok, nil)
		return r.Status == 200 && r.view(t).Status == "waiting"
	})
}
