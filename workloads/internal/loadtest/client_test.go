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

package loadtest

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A request the crowd gives up (its stop cancels the context) is not the
// service's failure: it is not recorded. A transport error is, with its text.
func TestAbandonedRequestNotRecorded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	a := &api{http: srv.Client(), queueURL: srv.URL, eventID: 1, rec: newRecorder()}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, ok := a.stats(ctx); ok {
		t.Fatal("a cancelled request answered")
	}
	if n := a.rec.requests(); n != 0 {
		t.Fatalf("a request the crowd gave up was recorded: %d requests, %+v", n, a.rec.snapshot())
	}

	dead := &api{http: srv.Client(), queueURL: "http://127.0.0.1:1", eventID: 1, rec: newRecorder()}
	dead.stats(context.Background())
	s := dead.rec.snapshot()
	if len(s) != 1 || s[0].ByStatus[0] != 1 || s[0].Errors != 1 || s[0].FirstError == "" {
		t.Fatalf("a refused connection is not recorded as a transport error with its text: %+v", s)
	}
}

// The crowd's copy of a section's seat map is refreshed by one customer at
// a time, as a CDN refreshes its copy: the others pick from the copy
// meanwhile, and wait for the refresh only when the copy has no seat left.
// A pick never hands out a seat twice from one copy.
func TestSeatCopyRefreshedByOneCustomer(t *testing.T) {
	var requests atomic.Int64
	release := make(chan struct{}, 2) // one token answers one request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"sections":[{"name":"A","price":"10.00","available":5},{"name":"B","price":"5.00","available":1}],
			"rows":[{"section":"A","row":1,"first":1,"seats":"AAHSA"},{"section":"A","row":2,"first":3,"seats":"AA"},
			{"section":"B","row":1,"first":1,"seats":"A"}]}`)
	}))
	defer srv.Close()
	cr := &crowd{
		api:       &api{http: srv.Client(), bookingURL: srv.URL, eventID: 1, rec: newRecorder()},
		rnd:       newLockedRand(1),
		seatCache: map[string]*cachedSection{},
	}
	ctx := context.Background()

	// Eight customers at once with an empty copy: one request; five seats
	// for five of them, each a different seat; nothing for the others.
	got := make([][]string, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = cr.pick(ctx, "A", 1) }()
	}
	time.Sleep(50 * time.Millisecond) // let them all reach the empty copy
	release <- struct{}{}
	wg.Wait()
	seen := map[string]bool{}
	for _, g := range got {
		for _, id := range g {
			if seen[id] {
				t.Fatalf("seat %s picked twice from one copy: %v", id, got)
			}
			seen[id] = true
		}
	}
	want := map[string]bool{"A-1-1": true, "A-1-2": true, "A-1-5": true, "A-2-3": true, "A-2-4": true}
	if n := requests.Load(); n != 1 || len(seen) != 5 || !maps.Equal(seen, want) {
		t.Fatalf("%d requests, picked %v; want 1 request and the seats %v", n, got, want)
	}

	// A conflict marks the copy stale: the next pick refreshes it, and picks
	// during that refresh are served from the copy without waiting.
	cr.invalidate("A", nil)
	cr.seatsMu.Lock()
	cr.seatCache["A"].avail = []string{"A-9-9"} // a seat left in the copy
	cr.seatsMu.Unlock()
	refreshed := make(chan []string)
	go func() { refreshed <- cr.pick(ctx, "A", 1) }()
	for requests.Load() < 2 { // the refresh is in flight, held by the server
		time.Sleep(time.Millisecond)
	}
	during := make(chan []string)
	go func() { during <- cr.pick(ctx, "A", 1) }()
	select {
	case p := <-during:
		if len(p) != 1 || p[0] != "A-9-9" {
			t.Fatalf("a pick during the refresh got %v, want the copy's seat", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a pick waited for the refresh although the copy had a seat")
	}
	release <- struct{}{}
	if p := <-refreshed; len(p) != 1 || !want[p[0]] {
		t.Fatalf("the refreshing pick got %v", p)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests after one invalidation, want 2", n)
	}
}
