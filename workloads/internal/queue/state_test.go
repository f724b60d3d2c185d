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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

func stateURL(base string) string { return queueURL(base) + "/state" }

func getState(t testing.TB, base, token string) (queueapi.State, reply) {
	t.Helper()
	r := do(t, "GET", stateURL(base), token, nil)
	var p queueapi.State
	if r.Status == http.StatusOK {
		if err := json.Unmarshal(r.Body, &p); err != nil {
			t.Fatalf("state %s: %v", r.Body, err)
		}
	}
	return p, r
}

// aheadFromState is what the waiting page computes from the public state
// and its own place.
func aheadFromState(p queueapi.State, place int64) int64 {
	snap := Snapshot{state: state{Waiting: p.Waiting}}
	for _, s := range p.Samples {
		snap.Samples = append(snap.Samples, sample{Rank: s[0], Score: s[1]})
	}
	return snap.ahead(place)
}

// TestPublicState: the state is public, identical for everyone, cacheable
// (max-age=1, ETag, 304), and lets a waiting person compute their place and
// see when the watermark passes it, with no per-person request.
func TestPublicState(t *testing.T) {
	redisURL, _ := testenv.RedisDB(t)
	cfg := testConfig(t, redisURL)
	cfg.Admitter = true
	cfg.MaxActive, cfg.RatePerSecond, cfg.TickInterval = 2, 100, 50*time.Millisecond
	base := startService(t, cfg, nil)

	places := map[string]int64{}
	ids := map[string]string{}
	for i := range 6 {
		c := fmt.Sprintf("c%d", i)
		r := do(t, "POST", queueURL(base), idToken(t, c), nil)
		if r.Status != http.StatusCreated {
			t.Fatalf("join: %d %s", r.Status, r.Body)
		}
		v := r.view(t)
		if v.Place <= 0 {
			t.Fatalf("join answer without a place: %s", r.Body)
		}
		places[c], ids[c] = v.Place, v.QueueID
	}
	var p queueapi.State
	testenv.WaitFor(t, 5*time.Second, "two admitted, four waiting", func() bool {
		p, _ = getState(t, base, "")
		return p.Watermark >= places["c1"] && p.Waiting == 4
	})
	if p.Status != "open" || !p.SalesOpen || p.SoldOut || p.Paused || p.AdmissionRate <= 0 {
		t.Fatalf("state: %+v", p)
	}
	// The watermark passed the first two places and no other.
	for c, pl := range places {
		admitted := c == "c0" || c == "c1"
		if (pl <= p.Watermark) != admitted {
			t.Fatalf("%s place %d vs watermark %d: admitted=%v", c, pl, p.Watermark, admitted)
		}
	}
	// The page's own estimate equals what the per-person endpoint says.
	for i := 2; i < 6; i++ {
		c := fmt.Sprintf("c%d", i)
		v := do(t, "GET", queueURL(base)+"/"+ids[c], idToken(t, c), nil).view(t)
		if got := aheadFromState(p, places[c]); got != v.Ahead || v.Place != places[c] {
			t.Fatalf("%s: ahead from state %d, endpoint %+v", c, got, v)
		}
		if got := p.Ahead(places[c]); got != v.Ahead {
			t.Fatalf("%s: queueapi.State.Ahead %d, endpoint %+v", c, got, v)
		}
	}
	// Identical for everyone and cacheable.
	_, anon := getState(t, base, "")
	_, auth := getState(t, base, idToken(t, "c3"))
	if string(anon.Body) != string(auth.Body) || anon.Header.Get("ETag") != auth.Header.Get("ETag") {
		t.Fatalf("state differs by caller:\n%s\n%s", anon.Body, auth.Body)
	}
	if cc := anon.Header.Get("Cache-Control"); cc != "public, max-age=1" {
		t.Fatalf("Cache-Control %q", cc)
	}
	etag := anon.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req, _ := http.NewRequest("GET", stateURL(base), nil)
	req.Header.Set("If-None-Match", etag)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match with the current ETag: %d, want 304", resp.StatusCode)
	}
	if r := do(t, "POST", stateURL(base), "", nil); r.Status != http.StatusMethodNotAllowed || r.errorCode(t) != "method_not_allowed" {
		t.Fatalf("POST state: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", base+"/events/7/queue/state", "", nil); r.Status != http.StatusNotFound || r.errorCode(t) != "unknown_event" {
		t.Fatalf("other event: %d %s", r.Status, r.Body)
	}
}

// TestPublicStateBeforeOpening: no ranks and no places before the
// opening shuffle, only the opening time.
func TestPublicStateBeforeOpening(t *testing.T) {
	redisURL, _ := testenv.RedisDB(t)
	cfg := testConfig(t, redisURL)
	cfg.SalesOpenAt = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	base := startService(t, cfg, nil)
	for i := range 3 {
		r := do(t, "POST", queueURL(base), idToken(t, fmt.Sprintf("p%d", i)), nil)
		if v := r.view(t); r.Status != http.StatusCreated || v.Place != 0 {
			t.Fatalf("pre-queue join reveals its place: %s", r.Body)
		}
	}
	var p queueapi.State
	testenv.WaitFor(t, 5*time.Second, "3 waiting", func() bool { p, _ = getState(t, base, ""); return p.Waiting == 3 })
	if p.Status != "prequeue" || p.SalesOpen || p.SalesOpenAt == nil || len(p.Samples) != 0 || p.Watermark != -1 {
		t.Fatalf("state before opening: %+v", p)
	}
}

// TestStateThroughCache: a crowd polling the state through nginx (the
// local sale's CDN stand-in) reaches the origin about once per second.
func TestStateThroughCache(t *testing.T) {
	redisURL, _ := testenv.RedisDB(t)
	base := startService(t, testConfig(t, redisURL), nil)
	cache := testenv.Nginx(t, base)
	before := stateRequests(t, base)
	start := time.Now()
	const polls = 2000
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < polls; i += 16 {
				r := do(t, "GET", stateURL(cache), idToken(t, "x"), nil)
				if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"status":"open"`) {
					t.Errorf("state through the cache: %d %s", r.Status, r.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	origin := stateRequests(t, base) - before
	// max-age=1 and one fill at a time: about one origin request a second.
	if allowed := int64(elapsed/time.Second) + 3; origin > allowed {
		t.Fatalf("%d polls through the cache in %v reached the origin %d times (want <= %d)", polls, elapsed, origin, allowed)
	}
	if origin < 1 {
		t.Fatalf("no request reached the origin: the cache did not proxy")
	}
	t.Logf("%d state polls through nginx in %v: %d origin requests", polls, elapsed, origin)
}

// stateRequests reads the queue's own count of answered state requests.
func stateRequests(t testing.TB, base string) int64 {
	t.Helper()
	r := do(t, "GET", base+"/metrics", "", nil)
	var n int64
	for _, line := range strings.Split(string(r.Body), "\n") {
		if strings.HasPrefix(line, `ticketfair_queue_request_seconds_count{`) && strings.Contains(line, `op="state"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += int64(v)
		}
	}
	return n
}
