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
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// How a customer asks for places.
type ask uint8

const (
	askPicked   ask = iota // picks seat ids from the seat map
	askBest                // "N in category C", best available, together
	askStanding            // N places of a standing area
)

// HoldCounts are one kind of hold's requests and their answers.
type HoldCounts struct {
	Requests int64 `json:"requests"`
	Held     int64 `json:"held"`
	// Refused counts the 409s, whatever the reason; the fields after it
	// split them by code.
	Refused int64 `json:"refused"`
	// Taken: seats_unavailable, another hold had a seat first (a picked
	// hold's race).
	Taken int64 `json:"taken"`
	// NotEnough: not_enough_places, fewer places left than asked for;
	// WhileLeft those of them whose answer said enough were left, which
	// a hold by quantity must never answer (a race it lost).
	NotEnough int64 `json:"notEnough"`
	WhileLeft int64 `json:"notEnoughWhileLeft"`
	// NoBlock: no_seats_together; of those, the parties that held the
	// split offered (as kind "split") and those that asked again.
	NoBlock        int64 `json:"noBlock"`
	SplitsAccepted int64 `json:"splitsAccepted"`
	SplitsDeclined int64 `json:"splitsDeclined"`
	Limit          int64 `json:"limit"` // seat_limit
}

// FailureShare is the share of requests refused with a 409.
func (h HoldCounts) FailureShare() float64 {
	if h.Requests == 0 {
		return 0
	}
	return float64(h.Refused) / float64(h.Requests)
}

// Conflicts are the refusals that are races, not a lack of places:
// seats taken by another hold, and "not enough" while enough were left.
func (h HoldCounts) Conflicts() int64 { return h.Taken + h.WhileLeft }

// Holds are the crowd's holds by kind. Split are the holds of the seats a
// no_seats_together answer offered, held by id.
type Holds struct {
	Best     HoldCounts `json:"best"`
	Picked   HoldCounts `json:"picked"`
	Standing HoldCounts `json:"standing"`
	Split    HoldCounts `json:"split"`
}

// Total sums the kinds.
func (h Holds) Total() HoldCounts {
	var t HoldCounts
	for _, k := range []HoldCounts{h.Best, h.Picked, h.Standing, h.Split} {
		t.Requests += k.Requests
		t.Held += k.Held
		t.Refused += k.Refused
		t.Taken += k.Taken
		t.NotEnough += k.NotEnough
		t.WhileLeft += k.WhileLeft
		t.NoBlock += k.NoBlock
		t.SplitsAccepted += k.SplitsAccepted
		t.SplitsDeclined += k.SplitsDeclined
		t.Limit += k.Limit
	}
	return t
}

func (h *HoldCounts) load() HoldCounts {
	l := func(p *int64) int64 { return atomic.LoadInt64(p) }
	return HoldCounts{Requests: l(&h.Requests), Held: l(&h.Held), Refused: l(&h.Refused), Taken: l(&h.Taken),
		NotEnough: l(&h.NotEnough), WhileLeft: l(&h.WhileLeft), NoBlock: l(&h.NoBlock),
		SplitsAccepted: l(&h.SplitsAccepted), SplitsDeclined: l(&h.SplitsDeclined), Limit: l(&h.Limit)}
}

func (h *Holds) load() Holds {
	return Holds{Best: h.Best.load(), Picked: h.Picked.load(), Standing: h.Standing.load(), Split: h.Split.load()}
}

// refused counts a 409 of a hold of quantity asked (0 for a hold by ids).
func (h *HoldCounts) refused(rf refusal, asked int) {
	inc(&h.Refused)
	switch rf.Code {
	case "seats_unavailable":
		inc(&h.Taken)
	case "not_enough_places":
		inc(&h.NotEnough)
		if rf.Available != nil && asked > 0 && *rf.Available >= asked {
			inc(&h.WhileLeft)
		}
	case "no_seats_together":
		inc(&h.NoBlock)
	case "seat_limit":
		inc(&h.Limit)
	}
}

// places is what the crowd knows of the venue: the seated sections people
// pick in, the targets best available asks for (the venue's seated
// categories, else each seated section by name) and the standing areas.
type places struct {
	seated   []string
	standing []string
	targets  []string
	// byCategory: targets are categories; else sections.
	byCategory bool
	// targetOf names the target of a seated row: category or section.
	rowTarget map[string][]string // section → per row_no-1
	rowNames  map[string][]string // section → row names per row_no-1 (none: the number)
	// accessible are the wheelchair and companion seats: people who pick
	// leave them, as the page shows them only to those who ask.
	accessible     map[string]bool
	wheelchair     map[string]bool
	withWheelchair map[string]bool // sections that have wheelchair places
	// rowTargetByName is the target of "<section>-<row name>".
	rowTargetByName map[string]string
}

// placesOf reads the places from the venue when the crowd has it, else
// from the seat map: a section whose rows are all row 0 is a standing
// area, and each seated section is asked for by its name.
func placesOf(v *config.Venue, m seatMap) *places {
	p := &places{rowTarget: map[string][]string{}, rowNames: map[string][]string{}, accessible: map[string]bool{},
		wheelchair: map[string]bool{}, withWheelchair: map[string]bool{}, rowTargetByName: map[string]string{}}
	if v != nil {
		p.byCategory = true
		seen := map[string]bool{}
		for _, c := range v.Categories {
			seen[c.Name] = false
		}
		for _, s := range v.Sections {
			if s.Kind == config.SectionStanding {
				p.standing = append(p.standing, s.Name)
				continue
			}
			p.seated = append(p.seated, s.Name)
			targets := make([]string, len(s.Rows))
			names := make([]string, len(s.Rows))
			for j, r := range s.Rows {
				targets[j], names[j] = r.Category, r.Name
				if targets[j] == "" {
					targets[j] = s.Category
				}
				seen[targets[j]] = true
				p.rowTargetByName[s.Name+"-"+r.Name] = targets[j]
				for _, n := range r.Wheelchair {
					p.withWheelchair[s.Name] = true
					p.accessible[config.SeatID(s.Name, r.Name, n)] = true
					p.wheelchair[config.SeatID(s.Name, r.Name, n)] = true
				}
				for _, n := range r.Companion {
					p.accessible[config.SeatID(s.Name, r.Name, n)] = true
				}
			}
			p.rowTarget[s.Name], p.rowNames[s.Name] = targets, names
		}
		// In the venue's order, best first: only those with seats.
		for _, c := range v.Categories {
			if seen[c.Name] {
				p.targets = append(p.targets, c.Name)
			}
		}
		return p
	}
	rowsOf := map[string]int{}
	standing := map[string]bool{}
	for _, r := range m.Rows {
		rowsOf[r.Section]++
		if r.Row == 0 {
			standing[r.Section] = true
		} else {
			delete(standing, r.Section)
		}
	}
	for _, s := range m.Sections {
		if standing[s.Name] {
			p.standing = append(p.standing, s.Name)
			continue
		}
		p.seated = append(p.seated, s.Name)
		p.targets = append(p.targets, s.Name)
	}
	return p
}

// seatID is the id of seat number n of row_no row in section.
func (p *places) seatID(section string, row, n int) string {
	name := strconv.Itoa(row)
	if p != nil {
		if names := p.rowNames[section]; row >= 1 && row <= len(names) {
			name = names[row-1]
		}
	}
	return config.SeatID(section, name, n)
}

// target is the target a seat of row_no row of section counts for.
func (p *places) target(section string, row int) string {
	if t := p.rowTarget[section]; row >= 1 && row <= len(t) {
		return t[row-1]
	}
	return section
}

// overview is the crowd's copy of the whole seat map's counts, as the
// page shows them beside "how many tickets, which category": the places
// left per target and standing area, and the free wheelchair places. One
// customer at a time refreshes it, about once a second; the others read
// the copy meanwhile, and wait only for the first.
type overview struct {
	mu     sync.Mutex
	at     time.Time
	left   map[string]int
	wheels map[string]int
	fetch  chan struct{} // closed when the refresh in flight ends; nil: none
	// recent are the crowd's holds of the last seconds, which a map as of
	// before them does not show (Profile.FreshCounts).
	recent []heldPlaces
	// inflight are the places reserved by holds not yet answered, per
	// target: no map shows them yet either.
	inflight map[string]int
	gen      uint64 // one more each refresh
}

// heldPlaces are n places of target the crowd held at at.
type heldPlaces struct {
	target string
	n      int
	at     time.Time
}

// recentFor is how long the crowd remembers its holds for FreshCounts:
// longer than a seat map can lag (booking serves one up to five times its
// one-second max-age while it refreshes).
const recentFor = 10 * time.Second

// placesLeft returns a copy of the places left per target and standing
// area, and the free wheelchair places per target (nil maps: the seat map
// could not be read).
func (cr *crowd) placesLeft(ctx context.Context) (left, wheels map[string]int) {
	o := &cr.overview
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fetch == nil && (o.left == nil || time.Since(o.at) > time.Second) {
		done := make(chan struct{})
		o.fetch = done
		o.mu.Unlock()
		l, w, asOf, ok := cr.countPlaces(ctx)
		o.mu.Lock()
		if ok {
			o.at, o.left, o.wheels = time.Now(), l, w
			o.gen++
			if cr.cfg.Profile.FreshCounts {
				o.subtractSince(asOf)
				for t, n := range o.inflight {
					o.left[t] = max(o.left[t]-n, 0)
				}
			}
		}
		o.fetch = nil
		close(done)
	}
	for o.left == nil && o.fetch != nil {
		done := o.fetch
		o.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
		o.mu.Lock()
		if ctx.Err() != nil {
			return nil, nil
		}
	}
	if o.left == nil {
		return nil, nil
	}
	left, wheels = make(map[string]int, len(o.left)), make(map[string]int, len(o.wheels))
	for k, v := range o.left {
		left[k] = v
	}
	for k, v := range o.wheels {
		wheels[k] = v
	}
	return left, wheels
}

// countPlaces reads the whole seat map and counts its available places by
// target and standing area, the wheelchair places apart (best available
// without a wheelchair leaves them).
func (cr *crowd) countPlaces(ctx context.Context) (left, wheels map[string]int, asOf time.Time, ok bool) {
	m, ok := cr.api.seats(ctx, "")
	if !ok {
		return nil, nil, asOf, false
	}
	left, wheels = map[string]int{}, map[string]int{}
	for _, row := range m.Rows {
		t := row.Section
		if row.Row != 0 {
			t = cr.places.target(row.Section, row.Row)
		}
		accessible := row.Row != 0 && cr.places.withWheelchair[row.Section]
		for i := 0; i < len(row.Seats); i++ {
			if row.Seats[i] != 'A' {
				continue
			}
			if accessible && cr.places.wheelchair[cr.places.seatID(row.Section, row.Row, row.First+i)] {
				wheels[t]++
				continue
			}
			left[t]++
		}
	}
	return left, wheels, m.AsOf, true
}

// subtractSince takes the crowd's holds after asOf, which the map does
// not show yet, from the counts, and forgets those older than recentFor;
// o.mu is held.
func (o *overview) subtractSince(asOf time.Time) {
	keep := o.recent[:0]
	for _, h := range o.recent {
		if h.at.After(asOf) {
			o.left[h.target] = max(o.left[h.target]-h.n, 0)
		}
		if time.Since(h.at) < recentFor {
			keep = append(keep, h)
		}
	}
	o.recent = keep
}

// reserve counts n places of target as gone in the copy while a hold asks
// for them, as pick does for seats: the next party asks elsewhere. It
// answers the copy's generation, for unreserve.
func (cr *crowd) reserve(target string, n int) uint64 {
	o := &cr.overview
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.left != nil {
		o.left[target] = max(o.left[target]-n, 0)
	}
	if o.inflight == nil {
		o.inflight = map[string]int{}
	}
	o.inflight[target] += n
	return o.gen
}

// answered ends a reservation of reserve's.
func (o *overview) answered(target string, n int) {
	if o.inflight[target] -= n; o.inflight[target] <= 0 {
		delete(o.inflight, target)
	}
}

// unreserve gives back what reserve took when the hold did not get it, to
// the same copy only; available, when the refusal said, is what is left.
func (cr *crowd) unreserve(gen uint64, target string, n int, available *int) {
	o := &cr.overview
	o.mu.Lock()
	defer o.mu.Unlock()
	o.answered(target, n)
	if o.left == nil || o.gen != gen {
		return
	}
	o.left[target] += n
	if available != nil {
		o.left[target] = min(o.left[target], *available)
	}
}

// keep ends the reservation of asked places of target by a hold that got
// n, and remembers them (Profile.FreshCounts): the copies after it count
// them gone until they show the hold themselves.
func (cr *crowd) keep(target string, asked, n int) {
	o := &cr.overview
	o.mu.Lock()
	defer o.mu.Unlock()
	o.answered(target, asked)
	if cr.cfg.Profile.FreshCounts {
		o.recent = append(o.recent, heldPlaces{target: target, n: n, at: time.Now()})
	}
}

// took counts n places of target as gone: in the copy, and in those after
// it with Profile.FreshCounts.
func (cr *crowd) took(target string, n int) {
	cr.reserve(target, n)
	cr.keep(target, n, n)
}

// tookSeats counts picked seats as gone in the copy (took), by their
// target.
func (cr *crowd) tookSeats(seats []string) {
	for _, id := range seats {
		section, rest, _ := strings.Cut(id, "-")
		row, _, _ := strings.Cut(rest, "-")
		t := section
		if cr.places != nil && cr.places.byCategory {
			t = cr.places.rowTargetByName[section+"-"+row]
		}
		cr.took(t, 1)
	}
}

// bestRequest is what c asks for: their target (their standing area, or a
// seated category drawn at random) if the counts show enough places left,
// else the target with the most; fewer places if no target has enough, as
// people take what is left. Without counts they ask for their target. ok
// is false when nothing is left.
func (cr *crowd) bestRequest(ctx context.Context, c *customer) (req bestRequest, target string, ok bool) {
	p := cr.places
	left, wheels := cr.placesLeft(ctx)
	want := int(c.want)
	first := ""
	switch {
	case c.ask == askStanding && len(p.standing) > 0 || len(p.targets) == 0 && len(p.standing) > 0:
		first = p.standing[int(c.id)%len(p.standing)]
	case len(p.targets) > 0:
		first = p.targets[cr.rnd.IntN(len(p.targets))]
	default:
		return req, "", false
	}
	switch {
	case left == nil:
		return cr.targetRequest(first, want, 0), first, true
	case c.wheel && wheels[first] > 0 && left[first] >= want-1:
		return cr.targetRequest(first, want, 1), first, true
	case left[first] >= want:
		return cr.targetRequest(first, want, 0), first, true
	}
	// Seated or standing, whichever has the most left.
	best, most := "", 0
	for _, t := range append(slices.Clone(p.targets), p.standing...) {
		if left[t] > most {
			best, most = t, left[t]
		}
	}
	if most == 0 {
		return req, "", false
	}
	return cr.targetRequest(best, min(want, most), 0), best, true
}

// targetRequest asks for n places of target, a standing area, a category
// or (without the venue) a seated section, wheelchair of them wheelchair
// places.
func (cr *crowd) targetRequest(target string, n, wheelchair int) bestRequest {
	if slices.Contains(cr.places.standing, target) {
		return bestRequest{Quantity: n, Section: target}
	}
	if cr.places.byCategory {
		return bestRequest{Quantity: n, Category: target, Together: new(true), Wheelchair: wheelchair}
	}
	return bestRequest{Quantity: n, Section: target, Together: new(true)}
}

// chooseBest asks for the best places by quantity, and on no_seats_together
// takes a split or asks again.
func (cr *crowd) chooseBest(ctx context.Context, c *customer) {
	req, target, ok := cr.bestRequest(ctx, c)
	if !ok {
		cr.giveUp(ctx, c)
		return
	}
	counts, name := &cr.counts.Holds.Best, "hold best"
	if req.Category == "" && slices.Contains(cr.places.standing, req.Section) {
		counts, name = &cr.counts.Holds.Standing, "hold standing"
	}
	done, refused := cr.askBest(ctx, c, counts, name, req, target)
	if done {
		return
	}
	if refused == "no_seats_together" {
		if cr.rnd.Float64() < cr.cfg.Profile.AcceptSplit {
			// Accepting the split asks again with together false: booking
			// holds the best split in one statement. Holding the seat ids
			// the refusal offered races every other hold for the best
			// seats, and lost almost always (49 of 53 in a trial sale).
			inc(&counts.SplitsAccepted)
			req.Together = new(false)
			if done, _ := cr.askBest(ctx, c, &cr.counts.Holds.Split, "hold split", req, target); done {
				return
			}
		} else {
			inc(&counts.SplitsDeclined)
		}
	}
	cr.chooseAgain(ctx, c)
}

// askBest makes one hold by quantity, counted in counts: done when it
// held or its answer ended c's choosing; else refused is the 409's code.
func (cr *crowd) askBest(ctx context.Context, c *customer, counts *HoldCounts, name string, req bestRequest, target string) (done bool, refused string) {
	inc(&counts.Requests)
	gen := cr.reserve(target, req.Quantity)
	h, rf, r := cr.api.holdBest(ctx, name, c.access, cr.holdIDToken(c), req)
	switch {
	case r.status == http.StatusCreated || r.status == http.StatusOK:
		inc(&counts.Held)
		cr.keep(target, req.Quantity, len(h.Seats))
		if counts == &cr.counts.Holds.Best {
			cr.noteBestOrder(h.OrderID)
		}
		cr.holding(c, h)
		return true, ""
	case r.status == http.StatusConflict:
		inc(&cr.counts.HoldConflicts)
		counts.refused(rf, req.Quantity)
		cr.unreserve(gen, target, req.Quantity, rf.Available)
		return false, rf.Code
	default:
		cr.unreserve(gen, target, req.Quantity, nil)
		cr.holdFailed(ctx, c, r)
		return true, ""
	}
}

// noteBestOrder keeps the order of a best-available hold of seats, for the
// audit's check that such holds strand no single seat.
func (cr *crowd) noteBestOrder(id string) {
	if id == "" {
		return
	}
	cr.paidMu.Lock()
	defer cr.paidMu.Unlock()
	cr.bestOrders = append(cr.bestOrders, id)
}
