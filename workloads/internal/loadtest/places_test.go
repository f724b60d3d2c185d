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
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// testVenue has a standing floor, a seated section of two categories (row
// 2 named "B", numbered right to left, with a wheelchair place and its
// companion) and a seat map that shows them.
var testVenue = config.Venue{
	Categories: []config.Category{{Name: "1", Price: "90.00"}, {Name: "2", Price: "50.00"}, {Name: "F", Price: "70.00"}},
	Sections: []config.VenueSection{
		{Name: "FLOOR", Kind: config.SectionStanding, Category: "F", Capacity: 3},
		{Name: "S1", Category: "1", Rows: []config.VenueRow{
			{Name: "A", Seats: 3},
			{Name: "B", Seats: 4, Numbering: config.NumberRightToLeft, Category: "2", Wheelchair: []int{1}, Companion: []int{2}},
		}},
	},
}

const testSeatMap = `{"sections":[{"name":"FLOOR","price":"70.00","available":2},{"name":"S1","price":"90.00","available":5}],
	"rows":[{"section":"FLOOR","row":0,"first":1,"seats":"AAS"},
	{"section":"S1","row":1,"first":1,"seats":"AHA"},{"section":"S1","row":2,"first":1,"seats":"AAAS"}]}`

func TestPlacesOf(t *testing.T) {
	var m seatMap
	if err := json.Unmarshal([]byte(testSeatMap), &m); err != nil {
		t.Fatal(err)
	}
	p := placesOf(&testVenue, m)
	if !slices.Equal(p.seated, []string{"S1"}) || !slices.Equal(p.standing, []string{"FLOOR"}) ||
		!slices.Equal(p.targets, []string{"1", "2"}) || !p.byCategory {
		t.Fatalf("from the venue: %+v", p)
	}
	// People who pick get the seats by their row's name, without the
	// wheelchair place and its companion, and never standing places.
	if got := m.available("S1", p); !slices.Equal(got, []string{"S1-A-1", "S1-A-3", "S1-B-3"}) {
		t.Fatalf("available to pick: %v", got)
	}
	// Once only they are left, they are sold to all.
	last := seatMap{Rows: slices.Clone(m.Rows[2:])}
	last.Rows[0].Seats = "AASS"
	if got := last.available("S1", p); !slices.Equal(got, []string{"S1-B-1", "S1-B-2"}) {
		t.Fatalf("the accessible seats last: %v", got)
	}
	if got := m.available("FLOOR", p); len(got) != 0 {
		t.Fatalf("standing places to pick: %v", got)
	}
	// Without the venue: the standing area from its row 0, each seated
	// section a target by name, the rows by number.
	p = placesOf(nil, m)
	if !slices.Equal(p.seated, []string{"S1"}) || !slices.Equal(p.standing, []string{"FLOOR"}) ||
		!slices.Equal(p.targets, []string{"S1"}) || p.byCategory {
		t.Fatalf("from the seat map: %+v", p)
	}
	if got := m.available("S1", p); !slices.Equal(got, []string{"S1-1-1", "S1-1-3", "S1-2-1", "S1-2-2", "S1-2-3"}) {
		t.Fatalf("available to pick without a venue: %v", got)
	}
}

// fakeBooking answers the seat map and holds: each hold request's body is
// recorded, and answers[i] answers the i-th (status and body).
type fakeBooking struct {
	mu      sync.Mutex
	bodies  []map[string]any
	answers []struct {
		status int
		body   string
	}
}

func (f *fakeBooking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		_, _ = io.WriteString(w, testSeatMap)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.bodies = append(f.bodies, body)
	a := f.answers[len(f.bodies)-1]
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func (f *fakeBooking) answer(status int, body string) {
	f.answers = append(f.answers, struct {
		status int
		body   string
	}{status, body})
}

func testCrowd(t *testing.T, f *fakeBooking, p Profile) *crowd {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var m seatMap
	_ = json.Unmarshal([]byte(testSeatMap), &m)
	pl := placesOf(&testVenue, m)
	return &crowd{
		cfg:       Config{Profile: p},
		api:       &api{http: srv.Client(), bookingURL: srv.URL, eventID: 1, rec: newRecorder(), refusals: newRefusals()},
		sched:     newScheduler(),
		rnd:       newLockedRand(1),
		seatCache: map[string]*cachedSection{},
		places:    pl,
		sections:  pl.seated,
	}
}

// A best-available party asks for its category by quantity, together; told
// no seats are together, it takes a split (AcceptSplit 1): it asks again
// with together false, and that hold is counted as a split. A refusal "not enough" whose answer
// says enough were left counts as a race lost.
func TestChooseBest(t *testing.T) {
	f := &fakeBooking{}
	f.answer(http.StatusConflict, `{"error":{"code":"no_seats_together","split":["S1-A-1","S1-A-3"]}}`)
	f.answer(http.StatusCreated, `{"orderId":"o-1","seats":["S1-A-1","S1-A-3"],"amount":"180.00","expiresAt":"2030-01-01T00:00:00Z"}`)
	f.answer(http.StatusConflict, `{"error":{"code":"not_enough_places","available":5}}`)
	f.answer(http.StatusCreated, `{"orderId":"o-2","seats":["FLOOR-1","FLOOR-2"],"amount":"140.00","expiresAt":"2030-01-01T00:00:00Z"}`)
	p := DefaultProfile()
	p.AcceptSplit = 1
	cr := testCrowd(t, f, p)
	ctx := context.Background()

	party := &customer{id: 1, want: 2, ask: askBest, access: "tok"}
	cr.sched.add(party, time.Now())
	cr.chooseBest(ctx, party)
	if len(f.bodies) != 2 {
		t.Fatalf("%d hold requests, want the quantity and the split: %v", len(f.bodies), f.bodies)
	}
	if q := f.bodies[0]; q["quantity"] != 2.0 || q["together"] != true || (q["category"] != "1" && q["category"] != "2") {
		t.Fatalf("best available asked %v", q)
	}
	if q := f.bodies[1]; q["quantity"] != 2.0 || q["together"] != false || q["category"] != f.bodies[0]["category"] {
		t.Fatalf("the split asked as %v after %v", q, f.bodies[0])
	}
	if party.orderID != "o-1" || party.seats != 2 || party.next != stepPay {
		t.Fatalf("after the split's hold: %+v", party)
	}

	// The floor shows 2 places left: a standing party of 2 asks for them.
	standing := &customer{id: 2, want: 2, ask: askStanding, access: "tok"}
	cr.sched.add(standing, time.Now())
	cr.staleOverview()
	cr.chooseBest(ctx, standing) // refused: not enough although 5 left
	if q := f.bodies[2]; q["section"] != "FLOOR" || q["quantity"] != 2.0 || q["category"] != nil {
		t.Fatalf("a standing party asked %v", q)
	}
	cr.staleOverview()
	cr.chooseBest(ctx, standing)
	if standing.orderID != "o-2" {
		t.Fatalf("standing party: %+v", standing)
	}

	h := cr.snapshotCounts().Holds
	want := Holds{
		Best:     HoldCounts{Requests: 1, Refused: 1, NoBlock: 1, SplitsAccepted: 1},
		Split:    HoldCounts{Requests: 1, Held: 1},
		Standing: HoldCounts{Requests: 2, Held: 1, Refused: 1, NotEnough: 1, WhileLeft: 1},
	}
	if h != want {
		t.Fatalf("holds %+v, want %+v", h, want)
	}
	if c := cr.snapshotCounts(); c.HoldsOK != 2 || c.HoldConflicts != 2 {
		t.Fatalf("holds ok %d, conflicts %d", c.HoldsOK, c.HoldConflicts)
	}
	if tot := h.Total(); tot.Requests != 4 || tot.FailureShare() != 0.5 || tot.Conflicts() != 1 {
		t.Fatalf("total %+v", tot)
	}
	if len(cr.bestOrders) != 0 {
		t.Fatalf("best orders %v: a split's seats are apart, a standing hold has no seats", cr.bestOrders)
	}
}

// A party whose category the counts show sold out asks for the target
// with the most places left, and for fewer places if none has enough; a
// party that needs a wheelchair place asks for one where one is free.
func TestBestRequestFallsBack(t *testing.T) {
	f := &fakeBooking{}
	cr := testCrowd(t, f, DefaultProfile())
	ctx := context.Background()
	// Category 1: S1-A-1 and S1-A-3 left; category 2: S1-B-2 (the
	// companion) and S1-B-3, and the wheelchair place S1-B-1 apart.
	seen := map[string]bool{}
	for i := range 20 {
		req, _, ok := cr.bestRequest(ctx, &customer{id: int32(i), want: 3, ask: askBest})
		if !ok || req.Quantity != 2 || req.Category != "1" {
			t.Fatalf("a party of 3 with 2 left in category 1 at most: %+v %v", req, ok)
		}
		req, _, _ = cr.bestRequest(ctx, &customer{id: int32(i), want: 1, ask: askBest})
		seen[req.Category] = true
	}
	if !seen["1"] || !seen["2"] {
		t.Fatalf("parties of one asked only for %v", seen)
	}
	for range 20 {
		req, _, ok := cr.bestRequest(ctx, &customer{id: 1, want: 2, ask: askBest, wheel: true})
		if !ok || req.Quantity != 2 || (req.Category == "2") != (req.Wheelchair == 1) {
			t.Fatalf("a wheelchair party: %+v", req)
		}
	}
}

// With FreshCounts a copy of the counts leaves out the crowd's holds after
// the map's asOf, which the map does not show yet, and forgets old ones.
func TestFreshCounts(t *testing.T) {
	now := time.Now()
	o := &overview{left: map[string]int{"1": 10, "FLOOR": 3}, recent: []heldPlaces{
		{"1", 4, now.Add(-time.Minute)},            // forgotten
		{"1", 2, now.Add(-2 * time.Second)},        // in the map
		{"1", 3, now.Add(-500 * time.Millisecond)}, // not yet
		{"FLOOR", 5, now},
	}}
	o.subtractSince(now.Add(-time.Second))
	if o.left["1"] != 7 || o.left["FLOOR"] != 0 || len(o.recent) != 3 {
		t.Fatalf("left %v, recent %v", o.left, o.recent)
	}
}

// A seat a hold was refused as unavailable stays out of the copies of the
// seat map as of before the refusal, as the page marks it taken; a map
// newer than the refusal decides again.
func TestTakenSeatsLeftOut(t *testing.T) {
	var mu sync.Mutex
	asOf := time.Now().Add(-3 * time.Second)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(map[string]any{"asOf": asOf, "sections": []any{map[string]any{"name": "A"}},
			"rows": []any{map[string]any{"section": "A", "row": 1, "first": 1, "seats": "AA"}}})
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	cr := &crowd{api: &api{http: srv.Client(), bookingURL: srv.URL, eventID: 1, rec: newRecorder()}, rnd: newLockedRand(1), seatCache: map[string]*cachedSection{}}
	ctx := context.Background()
	if got := cr.pick(ctx, "A", 2); len(got) != 2 {
		t.Fatalf("first pick %v", got)
	}
	cr.invalidate("A", []string{"A-1-1"})
	if got := cr.pick(ctx, "A", 2); !slices.Equal(got, []string{"A-1-2"}) {
		t.Fatalf("after A-1-1 was refused: %v", got)
	}
	mu.Lock()
	asOf = time.Now().Add(time.Second)
	mu.Unlock()
	cr.invalidate("A", nil)
	if got := cr.pick(ctx, "A", 2); len(got) != 2 {
		t.Fatalf("a map newer than the refusal: %v", got)
	}
}

// staleOverview makes the next look at the counts refresh them.
func (cr *crowd) staleOverview() {
	o := &cr.overview
	o.mu.Lock()
	defer o.mu.Unlock()
	o.at = time.Time{}
}
