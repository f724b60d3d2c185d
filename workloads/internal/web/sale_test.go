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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/booking"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations"
	"github.com/ticketfair/ticketfair/workloads/internal/pow"
	"github.com/ticketfair/ticketfair/workloads/internal/queue"
	"github.com/ticketfair/ticketfair/workloads/internal/relay"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

const (
	testIssuer   = "ticketfair-identity"
	testAudience = "ticketfair"
	saleEvent    = 1 // the full flow
	pausedEvent  = 2
	soldOutEvent = 3
	preEvent     = 4 // sales open in an hour
	phasedEvent  = 5 // a members' presale open, the general sale in an hour
)

// sale is the real services of a small local sale, in this process, on
// loopback: queues (one per event), booking, relay and tickets on real
// Redis, PostgreSQL and a Kafka-protocol broker, each behind an edge.
type sale struct {
	identitySecret string
	rdb            *redis.Client
	edges          map[int64]string // edge URL per event
}

func noEnv(string) (string, bool) { return "", false }

func defaults[T any](t *testing.T) T {
	var v T
	if err := config.LoadFrom(nil, nil, noEnv, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func startSale(t *testing.T) *sale {
	t.Helper()
	return startSaleOf(t, nil)
}

// startSaleOf is startSale with the full-flow event selling venue, when
// not nil, instead of the shorthand seating; booking is told it.
func startSaleOf(t *testing.T, venue *config.Venue) *sale {
	t.Helper()
	redisURL, rdb := testenv.RedisDB(t) // the same database as the services
	dbURL := testenv.PostgresURL(t)
	kafka := testenv.Kafka(t) // the binary's broker, topics of this test's own
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	if err := migrations.Up(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	sections, err := booking.ParseSeating("A:120.00:2:6;B:59.00:2:6")
	if err != nil {
		t.Fatal(err)
	}
	if venue != nil {
		_, err = booking.SeedVenue(ctx, pool, saleEvent, *venue)
	} else {
		_, err = booking.Seed(ctx, pool, saleEvent, sections)
	}
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()

	s := &sale{identitySecret: "identity-secret-for-the-web-test", rdb: rdb, edges: map[int64]string{}}
	accessKeys, _ := accesstoken.GenerateKey("web-1")
	ticketKeys, _ := accesstoken.GenerateKey("tickets-1")
	const webhookSecret = "webhook-secret-for-the-web-test"
	ident := config.Identity{IdentityHMACSecret: s.identitySecret, IdentityIssuer: testIssuer, IdentityAudience: testAudience}
	local := "127.0.0.1:0"

	start := func(name string, run func(ready func(net.Addr)) error) string {
		addr := make(chan net.Addr, 1)
		errc := make(chan error, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := run(func(a net.Addr) { addr <- a })
			if err != nil && ctx.Err() == nil {
				t.Errorf("%s stopped: %v", name, err)
			}
			errc <- err
		}()
		select {
		case a := <-addr:
			return "http://" + a.String()
		case err := <-errc:
			t.Fatalf("%s did not start: %v", name, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s did not start in 30s", name)
		}
		return ""
	}

	// Sold out: the booking side has published that nothing is left.
	if err := zone.PublishInventory(ctx, rdb, soldOutEvent, zone.Inventory{Sold: 400}); err != nil {
		t.Fatal(err)
	}
	queues := map[int64]string{}
	for _, ev := range []int64{saleEvent, pausedEvent, soldOutEvent, preEvent, phasedEvent} {
		q := defaults[config.Queue](t)
		q.HTTPAddr, q.EventID, q.RedisURL, q.Identity, q.AccessTokenKeys = local, ev, redisURL, ident, accessKeys
		q.LeaderElection, q.Admitter = false, true
		q.MaxActive, q.RatePerSecond, q.TickInterval = 2, 10, 200*time.Millisecond
		q.SalesOpenAt = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
		switch ev {
		case pausedEvent:
			q.Paused = true
			// The paused sale also asks for a proof of work: the page
			// solves it in its Web Worker before it can join.
			q.PowDifficulty, q.PowKeys = 10, pow.GenerateKey()
		case preEvent:
			q.SalesOpenAt = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		case phasedEvent:
			q.Phases = phasedSale(t)
		}
		queues[ev] = start(fmt.Sprintf("queue %d", ev), func(ready func(net.Addr)) error { return queue.Run(ctx, q, ready) })
	}

	b := defaults[config.Booking](t)
	b.HTTPAddr, b.EventID, b.DatabaseURL, b.RedisURL = local, saleEvent, dbURL, redisURL
	b.Identity, b.AccessTokenKeys, b.WebhookSecrets, b.ServiceToken = ident, accessKeys, webhookSecret, "service-token"
	b.SeatMapRefresh = 200 * time.Millisecond
	if venue != nil {
		j, err := json.Marshal(venue)
		if err != nil {
			t.Fatal(err)
		}
		b.Venue = string(j)
	}
	bookingURL := start("booking", func(ready func(net.Addr)) error { return booking.Run(ctx, b, ready) })

	r := defaults[config.Relay](t)
	r.HTTPAddr, r.DatabaseURL, r.Kafka, r.PollInterval = local, dbURL, kafka, 100*time.Millisecond
	start("relay", func(ready func(net.Addr)) error { return relay.Run(ctx, r, ready) })
	tk := defaults[config.Tickets](t)
	tk.HTTPAddr, tk.DatabaseURL, tk.Kafka, tk.Identity, tk.TicketKeys = local, dbURL, kafka, ident, ticketKeys
	ticketsURL := start("tickets", func(ready func(net.Addr)) error { return tickets.Run(ctx, tk, ready) })

	for ev, qurl := range queues {
		edge := httptest.NewServer(NewEdge(EdgeConfig{
			QueueURL: qurl, BookingURL: bookingURL, TicketsURL: ticketsURL, EventID: ev,
			IdentitySecret: s.identitySecret, IdentityIssuer: testIssuer, IdentityAudience: testAudience,
			WebhookSecret: webhookSecret,
		}))
		t.Cleanup(edge.Close)
		s.edges[ev] = edge.URL
	}
	return s
}

// customer is someone in the crowd, driven through the edge's API.
type customer struct {
	t       *testing.T
	edge    string
	token   string
	queueID string
	access  string
}

func (s *sale) customer(t *testing.T, ev int64, id string) *customer {
	tok, err := identity.SignHS256(s.identitySecret, testIssuer, testAudience, id, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &customer{t: t, edge: s.edges[ev], token: tok}
}

func (c *customer) call(method, path string, hdr map[string]string, body string) (int, map[string]any) {
	c.t.Helper()
	code, raw := c.callRaw(method, path, hdr, body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return code, out
}

// place calls the queue through the edge: a join or a poll.
func (c *customer) place(method, path string, hdr map[string]string) (int, queueapi.Place, []byte) {
	c.t.Helper()
	code, raw := c.callRaw(method, path, hdr, "")
	var p queueapi.Place
	_ = json.Unmarshal(raw, &p)
	return code, p, raw
}

func (c *customer) callRaw(method, path string, hdr map[string]string, body string) (int, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.edge+path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// admit joins and polls until admitted.
func (c *customer) admit(ev int64) {
	c.t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + c.token}
	code, p, raw := c.place("POST", fmt.Sprintf("/events/%d/queue", ev), auth)
	if code != 201 && code != 200 {
		c.t.Fatalf("join: %d %s", code, raw)
	}
	c.queueID = p.QueueID
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		code, p, raw = c.place("GET", fmt.Sprintf("/events/%d/queue/%s", ev, c.queueID), auth)
		if code == 200 && p.AccessToken != "" {
			c.access = p.AccessToken
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("not admitted: %d %s", code, raw)
}

func (c *customer) leave(ev int64) {
	c.t.Helper()
	code, body := c.call("DELETE", fmt.Sprintf("/events/%d/queue/%s", ev, c.queueID), map[string]string{"Authorization": "Bearer " + c.token}, "")
	if code/100 != 2 {
		c.t.Fatalf("leave: %d %v", code, body)
	}
}

func (c *customer) hold(ev int64, seats ...string) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"seats": seats})
	code, body := c.call("POST", fmt.Sprintf("/events/%d/holds", ev), map[string]string{"X-Queue-Token": c.access, "Content-Type": "application/json"}, string(b))
	if code != 201 {
		c.t.Fatalf("hold %v: %d %v", seats, code, body)
	}
}

// TestBrowserSale walks a person through the whole sale in Chromium against
// the real services: join, wait behind a full zone, reload and a second tab
// keep the place, admission, a seat taken under their nose, hold, pay at
// the simulated provider, tickets.
func TestBrowserSale(t *testing.T) {
	b := newBrowser(t)
	s := startSale(t)
	ctx := b.ctx
	ev := int64(saleEvent)

	// Two others fill the zone (MaxActive 2), so the browser has to wait.
	x, y := s.customer(t, ev, "cust-x"), s.customer(t, ev, "cust-y")
	x.admit(ev)
	y.admit(ev)

	b.do(ctx, "open the waiting room", 20*time.Second, chromedp.Navigate(s.edges[ev]+"/"))
	b.waitFor(ctx, "waiting", `document.getElementById("status-title").dataset.state === "waiting"`, 20*time.Second)
	b.shot(ctx, "waiting-room")
	b.samePageChecks(ctx, "waiting room")
	headline := evalIn[string](b, ctx, `document.getElementById("headline").textContent`)
	if !strings.Contains(headline, "front") && !strings.Contains(headline, "ahead") {
		t.Errorf("waiting headline %q says nothing about the place", headline)
	}
	qid := evalIn[string](b, ctx, `JSON.parse(localStorage.getItem("tf.queue.1")).queueId`)
	if qid == "" {
		t.Fatal("no queueId stored")
	}

	// Reload: the same place.
	b.do(ctx, "reload", 20*time.Second, chromedp.Reload())
	b.waitFor(ctx, "waiting after reload", `document.getElementById("status-title").dataset.state === "waiting"`, 20*time.Second)
	if got := evalIn[string](b, ctx, `JSON.parse(localStorage.getItem("tf.queue.1")).queueId`); got != qid {
		t.Errorf("reload changed the place: %s -> %s", qid, got)
	}

	// A second tab: the same place too, asked of the server (not only storage).
	tab2, closeTab2 := chromedp.NewContext(ctx)
	// The first Run binds the tab's life to its context: not a timeout's.
	if err := chromedp.Do(tab2); err != nil {
		t.Fatal(err)
	}
	b.do(tab2, "second tab", 20*time.Second, chromedp.Navigate(s.edges[ev]+"/sale/1/"))
	b.waitFor(tab2, "second tab waiting", `document.getElementById("status-title").dataset.state === "waiting"`, 20*time.Second)
	if got := evalIn[string](b, tab2, `JSON.parse(localStorage.getItem("tf.queue.1")).queueId`); got != qid {
		t.Errorf("second tab has another place: %s vs %s", got, qid)
	}
	closeTab2()

	// y leaves: the browser is admitted and moves on by itself.
	y.leave(ev)
	b.waitFor(ctx, "admitted and moved to seat selection", `location.pathname === "/sale/1/seats" && !document.getElementById("picker").hidden && document.querySelectorAll("#seatmap input").length > 0`, 30*time.Second)
	b.shot(ctx, "seat-map")
	b.samePageChecks(ctx, "seat selection")
	sections := evalIn[string](b, ctx, `document.getElementById("sections").innerText`)
	if !strings.Contains(sections, "120.00 EUR") || !strings.Contains(sections, "59.00 EUR") {
		t.Errorf("sections without prices: %q", sections)
	}

	// The browser picks A-1-1; x holds it first.
	b.do(ctx, "pick A-1-1", 10*time.Second, chromedp.Click(chromedp.CSS("#seat-A-1-1")))
	x.hold(ev, "A-1-1")
	b.do(ctx, "hold A-1-1", 10*time.Second, chromedp.Click(chromedp.CSS("#hold")))
	b.waitFor(ctx, "conflict message", `!document.getElementById("message").hidden && /just taken/.test(document.getElementById("message").textContent)`, 10*time.Second)
	b.shot(ctx, "seat-taken")
	if !evalIn[bool](b, ctx, `document.getElementById("seat-A-1-1").disabled`) {
		t.Error("the taken seat can still be chosen")
	}
	if evalIn[bool](b, ctx, `!document.getElementById("held").hidden`) {
		t.Fatal("a conflicting hold shows as held")
	}

	// Pick again: A-1-2 with the keyboard, A-1-3 with a tap.
	b.do(ctx, "pick A-1-2 and A-1-3", 10*time.Second,
		chromedp.Focus(chromedp.CSS("#seat-A-1-2")),
		chromedp.KeyEvent(" "),
		chromedp.Click(chromedp.CSS("#seat-A-1-3")),
	)
	b.waitFor(ctx, "two seats chosen", `document.querySelectorAll("#seatmap input:checked").length === 2 && !document.getElementById("hold").disabled`, 5*time.Second)
	b.do(ctx, "hold two seats", 10*time.Second, chromedp.Click(chromedp.CSS("#hold")))
	b.waitFor(ctx, "held", `!document.getElementById("held").hidden`, 10*time.Second)
	b.shot(ctx, "held")
	held := evalIn[string](b, ctx, `document.getElementById("held").innerText`)
	if !strings.Contains(held, "A-1-2") || !strings.Contains(held, "A-1-3") || !strings.Contains(held, "240.00 EUR") {
		t.Errorf("hold panel: %q", held)
	}
	if cd := evalIn[string](b, ctx, `document.getElementById("held-countdown").textContent`); !strings.Contains(cd, "another 4:") && !strings.Contains(cd, "another 5:") {
		t.Errorf("hold countdown %q", cd)
	}

	// Pay at the simulated provider.
	b.do(ctx, "go to the payment provider", 10*time.Second, chromedp.Click(chromedp.CSS("#pay")))
	b.waitFor(ctx, "payment page", `document.body.dataset.page === "pay"`, 10*time.Second)
	b.shot(ctx, "payment-provider")
	b.do(ctx, "pay", 10*time.Second, chromedp.Click(chromedp.CSS("button#pay")))
	b.waitFor(ctx, "tickets", `document.body.dataset.page === "order" && document.querySelectorAll("#tickets li.ticket").length === 2`, 60*time.Second)
	b.shot(ctx, "tickets")
	b.samePageChecks(ctx, "order")
	status := evalIn[string](b, ctx, `document.getElementById("order-status").textContent`)
	if !strings.Contains(status, "Paid") {
		t.Errorf("order status %q", status)
	}
	codes := evalIn[[]string](b, ctx, `[...document.querySelectorAll("#tickets code")].map(c => c.textContent)`)
	for _, c := range codes {
		if len(c) < 20 {
			t.Errorf("ticket code %q looks empty", c)
		}
	}
}

// TestBrowserStates renders the states a waiting person can meet besides
// waiting: paused, sold out and the pre-queue before sales open.
func TestBrowserStates(t *testing.T) {
	b := newBrowser(t)
	s := startSale(t)
	for _, tc := range []struct {
		ev    int64
		state string
		text  string
	}{
		{pausedEvent, "paused", "paused"},
		{soldOutEvent, "sold_out", "sold"},
		{preEvent, "prequeue", "pre-queue"},
	} {
		b.do(b.ctx, "open "+tc.state, 20*time.Second, chromedp.Navigate(fmt.Sprintf("%s/sale/%d/", s.edges[tc.ev], tc.ev)))
		b.waitFor(b.ctx, tc.state, fmt.Sprintf(`document.getElementById("status-title").dataset.state === %q`, tc.state), 20*time.Second)
		b.shot(b.ctx, tc.state)
		got := evalIn[string](b, b.ctx, `document.getElementById("status").innerText + " " + document.getElementById("status-title").innerText`)
		if !strings.Contains(strings.ToLower(got), tc.text) {
			t.Errorf("%s page says %q", tc.state, got)
		}
		if tc.ev == pausedEvent {
			// The page joined with a proof of work (pow.js): it fetched a
			// challenge, and its join was accepted.
			n := evalIn[int](b, b.ctx, `performance.getEntriesByType("resource").filter(e => e.name.endsWith("/queue/challenge")).length`)
			if n < 1 || evalIn[string](b, b.ctx, `(JSON.parse(localStorage.getItem("tf.queue.2") || "{}").queueId || "")`) == "" {
				t.Errorf("the paused sale's page joined without solving a challenge (%d fetched)", n)
			}
		}
		if tc.state == "prequeue" {
			// The queue tells salesOpenAt before opening: a countdown shows it.
			b.waitFor(b.ctx, "countdown", `!document.getElementById("countdown").hidden && document.getElementById("countdown").innerText.startsWith("Sales open in")`, 10*time.Second)
		}
	}
}
