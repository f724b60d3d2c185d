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

package web

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketfair/ticketfair/workloads/config"
)

func at(f float64) *float64 { return &f }

// concertVenue: stalls drawn from coordinates, with a gap in the front
// row's middle (the best two seats there are not next to each other), a
// row of a cheaper category, and a standing floor.
func concertVenue() config.Venue {
	return config.Venue{
		Categories: []config.Category{{Name: "1", Price: "75.00"}, {Name: "2", Price: "45.00"}, {Name: "S", Price: "30.00"}},
		Sections: []config.VenueSection{
			{Name: "Stalls", Category: "1", X: at(0), Y: at(0), Rows: []config.VenueRow{
				{Name: "A", Seats: 8, Gaps: []int{4}, Wheelchair: []int{1}, Companion: []int{2}, X: at(0), Y: at(0), DX: at(1), DY: at(0)},
				{Name: "B", Seats: 8, X: at(0), Y: at(1.2), DX: at(1), DY: at(0)},
				{Name: "C", Seats: 6, Category: "2", X: at(1), Y: at(2.4), DX: at(1), DY: at(0)},
			}},
			{Name: "Floor", Kind: config.SectionStanding, Category: "S", Rank: 1, Capacity: 20},
		},
	}
}

// heldPlace is a place the page shows as held (li.place's data).
type heldPlace struct {
	ID       string `json:"id"`
	Section  string `json:"section"`
	Kind     string `json:"kind"`
	Category string `json:"category"`
	Row      string `json:"row"`
	Seat     string `json:"seat"`
	Text     string `json:"text"`
}

const heldPlacesJS = `[...document.querySelectorAll("#held-places li.place")].map(li => ({id: li.dataset.id,
	section: li.dataset.section, kind: li.dataset.kind, category: li.dataset.category, row: li.dataset.row || "",
	seat: li.dataset.seat || "", text: li.textContent}))`

// TestBrowserBestAvailable buys by quantity in Chromium against the real
// services: "2 tickets in category 1" finds two seats next to each other
// (not across the front row's gap); "try again" releases them and asks
// again; accepted, they are paid. Where no two are together, the page
// offers the best split to take. Then someone else buys one standing
// place, shown as "Standing, Floor". On the way, the drawn map's seats are
// focusable checkboxes of at least 24 px with a list alternative.
func TestBrowserBestAvailable(t *testing.T) {
	b := newBrowser(t)
	v := concertVenue()
	s := startSaleOf(t, &v)
	ctx := b.ctx

	admitted := func(what string) {
		b.do(ctx, "open the waiting room "+what, 20*time.Second, chromedp.Navigate(s.edges[saleEvent]+"/sale/1/"))
		b.waitFor(ctx, "seat page "+what, `location.pathname === "/sale/1/seats" && !document.getElementById("picker").hidden && document.querySelectorAll("#categories input").length > 0`, 30*time.Second)
	}
	admitted("(seated)")
	b.shot(ctx, "best-available")
	b.samePageChecks(ctx, "best available")
	cats := evalIn[string](b, ctx, `document.getElementById("categories").innerText`)
	for _, want := range []string{"Category 1 · 75.00 EUR · 16 seats left", "Category 2 · 45.00 EUR · 6 seats left", "Standing, Floor · 30.00 EUR · 20 places left"} {
		if !strings.Contains(cats, want) {
			t.Errorf("categories %q lack %q", cats, want)
		}
	}

	// The drawn map: the stalls have coordinates.
	n := evalIn[int](b, ctx, `document.querySelectorAll("#drawn svg g[role=checkbox]").length`)
	if n != 22 {
		t.Errorf("%d seats drawn, want 22", n)
	}
	name := evalIn[string](b, ctx, `document.getElementById("svg-Stalls-B-1").getAttribute("aria-label")`)
	if name != "Section Stalls, row B, seat 1, category 1, 75.00 EUR, available" {
		t.Errorf("seat B-1's name %q", name)
	}
	if small := evalIn[int](b, ctx, `[...document.querySelectorAll("#drawn g[role=checkbox]")].filter(g => { const r = g.getBoundingClientRect(); return r.width < 24 || r.height < 24; }).length`); small > 0 {
		t.Errorf("%d drawn seats are smaller than 24×24 px", small)
	}
	b.do(ctx, "pick B-1 on the drawn map with the keyboard", 10*time.Second,
		chromedp.Focus(chromedp.CSS("#svg-Stalls-B-1")), chromedp.KeyEvent(" "))
	b.waitFor(ctx, "B-1 chosen", `document.getElementById("svg-Stalls-B-1").getAttribute("aria-checked") === "true" && !document.getElementById("hold").disabled`, 5*time.Second)
	b.shot(ctx, "drawn-map")
	b.do(ctx, "the list instead", 10*time.Second, chromedp.Click(chromedp.CSS("#as-list")))
	b.waitFor(ctx, "the list", `!document.getElementById("seatmap").hidden && document.getElementById("drawn").hidden && document.getElementById("seat-Stalls-B-1").checked`, 5*time.Second)
	b.do(ctx, "unpick B-1 in the list", 10*time.Second, chromedp.Click(chromedp.CSS("#seat-Stalls-B-1")))
	b.waitFor(ctx, "nothing chosen", `document.getElementById("hold").disabled`, 5*time.Second)

	ask := func(what, choice string, quantity int) {
		b.do(ctx, "ask for "+what, 10*time.Second,
			chromedp.SetValue(chromedp.CSS("#quantity"), strconv.Itoa(quantity)),
			chromedp.Click(chromedp.CSS("#want-"+choice)),
			chromedp.Click(chromedp.CSS("#find")))
	}
	find := func(what, choice string, quantity int) []heldPlace {
		ask(what, choice, quantity)
		b.waitFor(ctx, "held "+what, `!document.getElementById("held").hidden && document.querySelectorAll("#held-places li.place").length > 0`, 10*time.Second)
		return evalIn[[]heldPlace](b, ctx, heldPlacesJS)
	}

	// No two seats of category 2 together (x holds every other one): the
	// page offers the split, and the buyer takes it.
	x := s.customer(t, saleEvent, "cust-x")
	x.admit(saleEvent)
	x.hold(saleEvent, "Stalls-C-2", "Stalls-C-4", "Stalls-C-6")
	b.waitFor(ctx, "three left in category 2", `document.getElementById("categories").innerText.includes("Category 2 · 45.00 EUR · 3 seats left")`, 15*time.Second)
	ask("2 in category 2", "c-2", 2)
	b.waitFor(ctx, "the split offered", `!document.getElementById("offer").hidden && document.querySelectorAll("#offer-places li.place").length === 2`, 10*time.Second)
	b.shot(ctx, "split-offered")
	if focused := evalIn[string](b, ctx, `document.activeElement.id`); focused != "offer-title" {
		t.Errorf("focus on %q after the offer, want its title", focused)
	}
	b.do(ctx, "take the split", 10*time.Second, chromedp.Click(chromedp.CSS("#take-split")))
	b.waitFor(ctx, "split held", `!document.getElementById("held").hidden && document.querySelectorAll("#held-places li.place").length === 2`, 10*time.Second)
	for _, p := range evalIn[[]heldPlace](b, ctx, heldPlacesJS) {
		if p.Row != "C" || p.Category != "2" || !slices.Contains([]string{"1", "3", "5"}, p.Seat) {
			t.Errorf("split hold shows %+v, want seats 1, 3 or 5 of row C", p)
		}
	}
	b.do(ctx, "give the split back", 10*time.Second, chromedp.Click(chromedp.CSS("#release")))
	b.waitFor(ctx, "split released", `document.getElementById("held").hidden && !document.getElementById("picker").hidden`, 10*time.Second)

	// Two in category 1, together.
	checkPair := func(got []heldPlace) {
		t.Helper()
		if len(got) != 2 {
			t.Fatalf("held %+v, want 2 seats", got)
		}
		row := v.Sections[0].Rows[slices.IndexFunc(v.Sections[0].Rows, func(r config.VenueRow) bool { return r.Name == got[0].Row })]
		var pos []int
		for _, p := range got {
			n, _ := strconv.Atoi(p.Seat)
			if p.Kind != "seat" || p.Section != "Stalls" || p.Category != "1" || p.Row != got[0].Row || row.Position(n) == 0 {
				t.Fatalf("held %+v, want 2 seats of category 1 in one row", got)
			}
			if !strings.Contains(p.Text, "Section Stalls, row "+p.Row+", seat "+p.Seat+", category 1") {
				t.Errorf("held place reads %q", p.Text)
			}
			pos = append(pos, row.Position(n))
		}
		slices.Sort(pos)
		if pos[1] != pos[0]+1 || slices.Contains(row.Gaps, pos[0]) {
			t.Errorf("held seats %+v are not next to each other (positions %v, gaps %v)", got, pos, row.Gaps)
		}
	}
	first := find("2 in category 1", "c-1", 2)
	b.shot(ctx, "best-found")
	checkPair(first)
	if !evalIn[bool](b, ctx, `document.getElementById("held").innerText.includes("150.00 EUR")`) {
		t.Errorf("hold panel: %q", evalIn[string](b, ctx, `document.getElementById("held").innerText`))
	}

	// Try again: the hold is released, the question asked anew.
	if got := evalIn[string](b, ctx, `document.getElementById("release").textContent`); got != "Try again" {
		t.Errorf("release button says %q", got)
	}
	b.do(ctx, "try again", 10*time.Second, chromedp.Click(chromedp.CSS("#release")))
	b.waitFor(ctx, "asked anew", `document.getElementById("held").hidden && !document.getElementById("picker").hidden && /released/.test(document.getElementById("message").textContent)`, 10*time.Second)
	again := find("2 in category 1 again", "c-1", 2)
	checkPair(again)

	// Accept: pay.
	b.do(ctx, "accept and pay", 10*time.Second, chromedp.Click(chromedp.CSS("#pay")))
	b.waitFor(ctx, "payment page", `document.body.dataset.page === "pay"`, 10*time.Second)
	b.do(ctx, "pay", 10*time.Second, chromedp.Click(chromedp.CSS("button#pay")))
	b.waitFor(ctx, "seated tickets", `document.body.dataset.page === "order" && document.querySelectorAll("#tickets li.ticket").length === 2`, 60*time.Second)
	if status := evalIn[string](b, ctx, `document.getElementById("order-status").textContent`); !strings.Contains(status, "Paid") {
		t.Errorf("order status %q", status)
	}

	// Someone else (a fresh sign-in) buys one standing place.
	evalIn[bool](b, ctx, `(localStorage.clear(), true)`)
	admitted("(standing)")
	b.waitFor(ctx, "two seats fewer", `document.getElementById("categories").innerText.includes("Category 1 · 75.00 EUR · 14 seats left")`, 10*time.Second)
	stand := find("1 standing", "s-Floor", 1)
	b.shot(ctx, "standing-found")
	if len(stand) != 1 || stand[0].Kind != "standing" || stand[0].Section != "Floor" || !strings.HasPrefix(stand[0].Text, "Standing, Floor") {
		t.Fatalf("standing hold shows %+v", stand)
	}
	if !evalIn[bool](b, ctx, `document.getElementById("seated-options").hidden`) {
		t.Error("together and wheelchair are offered for a standing place")
	}
	b.do(ctx, "accept and pay standing", 10*time.Second, chromedp.Click(chromedp.CSS("#pay")))
	b.waitFor(ctx, "payment page (standing)", `document.body.dataset.page === "pay"`, 10*time.Second)
	b.do(ctx, "pay standing", 10*time.Second, chromedp.Click(chromedp.CSS("button#pay")))
	b.waitFor(ctx, "standing ticket", `document.body.dataset.page === "order" && document.querySelectorAll("#tickets li.ticket").length === 1`, 60*time.Second)
	b.shot(ctx, "standing-ticket")
	if got := evalIn[string](b, ctx, `document.querySelector("#tickets li.ticket p").textContent`); got != "Standing, Floor" {
		t.Errorf("standing ticket reads %q", got)
	}
}
