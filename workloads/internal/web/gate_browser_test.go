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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
	"github.com/ticketfair/ticketfair/workloads/internal/qrcode"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
)

const (
	gateEvent  = 7
	gateSecret = "gate-secret-of-event-7"
	gateName   = "North-1"
)

// gateService is the tickets service (its HTTP API on a migrated
// database, no consumer) behind a switch that drops every connection, as a
// dead service or network does: the edge then answers 502.
type gateService struct {
	t    *testing.T
	url  string
	pool *pgxpool.Pool
	keys *tickets.Keys // the service's own
	down atomic.Bool
}

func startGateService(t *testing.T) *gateService {
	t.Helper()
	dbURL, pool := migrationstest.NewDB(t)
	k, err := accesstoken.GenerateKey("gk1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := tickets.ParseKeys(k)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := tickets.New(context.Background(), config.Tickets{
		Server:        config.Server{HTTPAddr: "127.0.0.1:0"},
		Postgres:      config.Postgres{DatabaseURL: dbURL},
		Kafka:         config.Kafka{Brokers: []string{"127.0.0.1:1"}, TopicTicketIssued: events.TopicTicketIssued},
		Identity:      config.Identity{IdentityHMACSecret: "identity-secret", IdentityIssuer: "test-idp", IdentityAudience: "ticketfair"},
		Gate:          config.Gate{GateSecret: gateSecret},
		ConsumerGroup: "tickets",
		TicketKeys:    k,
		RetryBackoff:  20 * time.Millisecond,
	}, pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	g := &gateService{t: t, pool: pool, keys: keys}
	h := svc.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.down.Load() {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

// issue issues the tickets of order for seats and returns their codes.
func (g *gateService) issue(order string, seats ...string) []string {
	g.t.Helper()
	m := &events.TicketIssued{OrderID: order, EventID: gateEvent, CustomerID: "cust-" + order, PaymentID: "pay-" + order,
		Amount: "10.00", Currency: "EUR", PaidAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	for _, s := range seats {
		m.Seats = append(m.Seats, events.Seat{SeatID: s, Section: strings.SplitN(s, "-", 2)[0], Price: "5.00"})
	}
	if _, err := tickets.Issue(context.Background(), g.pool, g.keys, 0, m); err != nil {
		g.t.Fatal(err)
	}
	ts, err := tickets.ForOrder(context.Background(), g.pool, order)
	if err != nil || len(ts) != len(seats) {
		g.t.Fatalf("tickets of %s: %v %v", order, ts, err)
	}
	codes := make([]string, len(ts))
	for i, tk := range ts {
		codes[i] = tk.Code
	}
	return codes
}

// sign makes a genuine code that was never issued (of another event, say).
func sign(t *testing.T, keys *tickets.Keys, ev int64, order, seat string) string {
	t.Helper()
	c, err := keys.Sign(tickets.TicketID(order, seat), ev, order, seat, strings.SplitN(seat, "-", 2)[0], 0,
		time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// qrFile writes the QR image of code to a PNG file for the file input.
func qrFile(t *testing.T, name, code string) string {
	t.Helper()
	png, err := qrcode.PNG(code, 480)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBrowserGate: a gate scans QR pictures through the page; the
// service admits, then refuses the second entry; with the service gone
// the page admits from the signed code alone, queues the scan, refuses
// what it knows is used, and when the service is back syncs and reports
// the ticket that had meanwhile entered at another gate.
func TestBrowserGate(t *testing.T) {
	b := newBrowser(t)
	svc := startGateService(t)
	codes := svc.issue("ord-1", "A-1-1", "A-1-2", "B-2-1")
	first, second, third := codes[0], codes[1], codes[2]
	cred, err := tickets.GateCredential(gateSecret, gateEvent, gateName)
	if err != nil {
		t.Fatal(err)
	}
	edge := httptest.NewServer(NewEdge(EdgeConfig{QueueURL: "http://127.0.0.1:1", BookingURL: "http://127.0.0.1:1", TicketsURL: svc.url}))
	t.Cleanup(edge.Close)
	ctx := b.ctx

	b.do(ctx, "open the gate page", 20*time.Second, chromedp.Navigate(fmt.Sprintf("%s/gate/%d/", edge.URL, gateEvent)))
	b.waitFor(ctx, "setup", `!document.getElementById("setup").hidden && document.activeElement.id === "setup-title"`, 10*time.Second)
	b.shot(ctx, "setup")
	b.do(ctx, "set up", 10*time.Second,
		chromedp.SendKeys(chromedp.CSS("#credential"), cred),
		chromedp.Click(chromedp.CSS(`#setup-form button[type=submit]`)))
	b.waitFor(ctx, "scan section", `!document.getElementById("work").hidden && document.activeElement.id === "scan-title"`, 10*time.Second)
	if got := evalIn[string](b, ctx, `document.getElementById("gate-name").textContent`); got != gateName {
		t.Errorf("gate name shown %q, want %q", got, gateName)
	}
	// The keys for offline checks are in before the first scan.
	b.waitFor(ctx, "keys cached", `localStorage.getItem("tf.gate.keys") !== null`, 10*time.Second)

	answer := func(result, reason string) string {
		return fmt.Sprintf(`document.getElementById("answer").dataset.result === %q && document.getElementById("answer").dataset.reason === %q`, result, reason)
	}
	answerText := func() string {
		return evalIn[string](b, ctx, `document.getElementById("answer").innerText`)
	}
	upload := func(what, file string) {
		b.t.Helper()
		// Reset first: the same answer twice must be a new answer.
		b.do(ctx, "clear the answer", 5*time.Second, chromedp.Evaluate[chromedp.Void](`document.getElementById("answer").dataset.result = ""`))
		b.do(ctx, what, 10*time.Second, chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}))
	}

	firstPNG := qrFile(t, "first", first)
	upload("scan the first ticket", firstPNG)
	b.waitFor(ctx, "admitted", answer("admitted", ""), 20*time.Second)
	b.shot(ctx, "admitted")
	if got := answerText(); !strings.Contains(got, "ADMITTED") || !strings.Contains(got, "Section A") {
		t.Errorf("answer %q, want ADMITTED and the seat", got)
	}
	if got := evalIn[string](b, ctx, `document.getElementById("answer").getAttribute("aria-live")`); got != "assertive" {
		t.Errorf("answer aria-live %q", got)
	}

	upload("scan the first ticket again", firstPNG)
	b.waitFor(ctx, "already used", answer("refused", "already_used"), 20*time.Second)
	b.shot(ctx, "already-used")
	if got := answerText(); !strings.Contains(got, "NOT ADMITTED") || !strings.Contains(got, "at gate "+gateName) {
		t.Errorf("answer %q, want NOT ADMITTED, already used at %s", got, gateName)
	}

	// The manual form, online.
	manual := func(what, code string) {
		b.t.Helper()
		b.do(ctx, "clear the answer", 5*time.Second, chromedp.Evaluate[chromedp.Void](`document.getElementById("answer").dataset.result = ""`))
		b.do(ctx, what, 10*time.Second,
			chromedp.SetValue(chromedp.CSS("#code"), code),
			chromedp.Click(chromedp.CSS(`#manual button[type=submit]`)))
	}
	manual("type the third ticket", third)
	b.waitFor(ctx, "typed code admitted", answer("admitted", ""), 20*time.Second)
	if got := evalIn[string](b, ctx, `document.activeElement.id`); got != "code" {
		t.Errorf("focus after a typed code on %q, want the code field again", got)
	}

	// The service goes away.
	svc.down.Store(true)
	upload("scan the second ticket offline", qrFile(t, "second", second))
	b.waitFor(ctx, "admitted offline", answer("admitted", ""), 20*time.Second)
	b.waitFor(ctx, "queued", `document.getElementById("queued").textContent.startsWith("1 scan waiting")`, 5*time.Second)
	b.shot(ctx, "admitted-offline")
	if got := answerText(); !strings.Contains(got, "offline") {
		t.Errorf("offline answer %q does not say it was checked offline", got)
	}
	if got := evalIn[string](b, ctx, `document.getElementById("conn").textContent`); !strings.HasPrefix(got, "Offline") {
		t.Errorf("connection shown as %q", got)
	}
	// What this device knows is used, it refuses offline too.
	upload("scan the first ticket offline", firstPNG)
	b.waitFor(ctx, "already used offline", answer("refused", "already_used"), 20*time.Second)
	manual("type a ticket of another event", sign(t, svc.keys, gateEvent+1, "ord-9", "A-9-9"))
	b.waitFor(ctx, "wrong event offline", answer("refused", "wrong_event"), 20*time.Second)
	forged := first[:strings.LastIndex(first, ".")+1] + base64.RawURLEncoding.EncodeToString(make([]byte, 64))
	manual("type a forged code", forged)
	b.waitFor(ctx, "forged code refused offline", answer("refused", "invalid"), 20*time.Second)
	b.shot(ctx, "refused-offline")

	// Meanwhile the second ticket got in at another gate (a copy of it).
	a, err := tickets.CheckIn(context.Background(), svc.pool, svc.keys.PublicKeys(), gateEvent, "South-2",
		tickets.Scan{Code: second, ScannedAt: time.Now().UTC()})
	if err != nil || a.Result != tickets.Admitted {
		t.Fatalf("admit at another gate: %+v %v", a, err)
	}
	svc.down.Store(false)
	b.waitFor(ctx, "synced with a conflict",
		`!document.getElementById("conflicts").hidden && document.getElementById("conflict-count").textContent.startsWith("1 conflict") && document.getElementById("queued").textContent.startsWith("All scans are synced")`,
		30*time.Second)
	b.shot(ctx, "conflict")
	if got := evalIn[string](b, ctx, `document.getElementById("conflict-list").innerText`); !strings.Contains(got, "South-2") || !strings.Contains(got, "seat A-1-2") {
		t.Errorf("conflict list %q, want the seat and the other gate", got)
	}
	if got := evalIn[int](b, ctx, `JSON.parse(localStorage.getItem("tf.gate.queue.7")).length`); got != 0 {
		t.Errorf("%d scans left in the queue", got)
	}
	rep, err := tickets.CheckInReport(context.Background(), svc.pool, gateEvent)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Gate != gateName || rep.Conflicts[0].FirstGate != "South-2" {
		t.Errorf("the service's conflicts: %+v, want the second ticket's at %s", rep.Conflicts, gateName)
	}
	b.samePageChecks(ctx, "gate")
}

// TestBrowserOrderQR: the order page shows each ticket's QR image, named
// by its seat, and the code text for a ticket without one.
func TestBrowserOrderQR(t *testing.T) {
	b := newBrowser(t)
	k, err := accesstoken.GenerateKey("gk1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := tickets.ParseKeys(k)
	if err != nil {
		t.Fatal(err)
	}
	withQR, without := sign(t, keys, gateEvent, "ord-1", "A-1-1"), sign(t, keys, gateEvent, "ord-1", "A-1-2")
	png, err := qrcode.PNG(withQR, 320)
	if err != nil {
		t.Fatal(err)
	}
	services := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/orders/ord-1":
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"orderId": "ord-1", "eventId": gateEvent, "status": "PAID",
				"seats": []string{"A-1-1", "A-1-2"}, "amount": "10.00", "currency": "EUR"})
		case "/orders/ord-1/tickets":
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"orderId": "ord-1", "eventId": gateEvent, "tickets": []map[string]any{
				{"ticketId": tickets.TicketID("ord-1", "A-1-1"), "seatId": "A-1-1", "section": "A", "code": withQR,
					"qr": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)},
				{"ticketId": tickets.TicketID("ord-1", "A-1-2"), "seatId": "A-1-2", "section": "A", "code": without},
			}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(services.Close)
	edge := httptest.NewServer(NewEdge(EdgeConfig{QueueURL: services.URL, BookingURL: services.URL, TicketsURL: services.URL,
		IdentitySecret: "identity-secret", IdentityIssuer: "test-idp", IdentityAudience: "ticketfair"}))
	t.Cleanup(edge.Close)

	b.do(b.ctx, "open the order", 20*time.Second, chromedp.Navigate(fmt.Sprintf("%s/sale/%d/orders/ord-1", edge.URL, gateEvent)))
	b.waitFor(b.ctx, "tickets", `document.querySelectorAll("#tickets li.ticket").length === 2`, 20*time.Second)
	b.waitFor(b.ctx, "QR loaded", `document.querySelector("#tickets img.qr") && document.querySelector("#tickets img.qr").complete && document.querySelector("#tickets img.qr").naturalWidth === 320`, 10*time.Second)
	b.shot(b.ctx, "order-qr")
	if n := evalIn[int](b, b.ctx, `document.querySelectorAll("#tickets img.qr").length`); n != 1 {
		t.Errorf("%d QR images, want 1", n)
	}
	if alt := evalIn[string](b, b.ctx, `document.querySelector("#tickets img.qr").alt`); !strings.Contains(alt, "row 1, seat 1") {
		t.Errorf("QR alt %q does not name the seat", alt)
	}
	// The ticket without an image shows its code.
	if got := evalIn[string](b, b.ctx, `document.querySelectorAll("#tickets li.ticket")[1].innerText`); !strings.Contains(got, without) {
		t.Errorf("second ticket shows %q, want its code", got)
	}
	b.samePageChecks(b.ctx, "order")
}

// TestGateEdge: the gate page, its decoder and the tickets service's gate
// API are all on the one origin; the gate's credential reaches the service.
func TestGateEdge(t *testing.T) {
	tk := newRecorder(t, "tickets")
	h := NewEdge(EdgeConfig{QueueURL: "http://127.0.0.1:1", BookingURL: "http://127.0.0.1:1", TicketsURL: tk.srv.URL})
	for _, tc := range []struct{ method, path string }{
		{"GET", "/.well-known/ticket-keys.json"},
		{"POST", "/events/7/checkins"},
		{"POST", "/events/7/checkins/sync"},
		{"GET", "/events/7/gate/list"},
	} {
		w := do(t, h, tc.method, tc.path, strings.NewReader(`{}`), map[string]string{"Authorization": "Bearer gate.7.North-1.mac"})
		r, _ := tk.last()
		if w.Code != 200 || w.Header().Get("X-Upstream") != "tickets" || r == nil || r.URL.Path != tc.path {
			t.Errorf("%s %s: %d from %q", tc.method, tc.path, w.Code, w.Header().Get("X-Upstream"))
			continue
		}
		if got := r.Header.Get("Authorization"); got != "Bearer gate.7.North-1.mac" {
			t.Errorf("%s %s: Authorization %q upstream", tc.method, tc.path, got)
		}
	}

	w := do(t, h, "GET", "/gate/7/", nil, nil)
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("gate page: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data: blob:;") || !strings.Contains(csp, "script-src 'self';") {
		t.Errorf("gate page CSP %q", csp)
	}
	refs := regexp.MustCompile(`"/assets/([^"]+)"`).FindAllStringSubmatch(w.Body.String(), -1)
	if len(refs) != 4 {
		t.Fatalf("gate page names %d assets, want 4 (styles, decoder, script)", len(refs))
	}
	vendored, err := assetFS.ReadFile("assets/vendor/zxing.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(vendored)
	want := "zxing.min." + hex.EncodeToString(sum[:4]) + ".js"
	found := false
	for _, m := range refs {
		a := do(t, h, "GET", "/assets/"+m[1], nil, nil)
		if a.Code != 200 || a.Header().Get("Cache-Control") != immutableCache {
			t.Errorf("%s: %d %q", m[1], a.Code, a.Header().Get("Cache-Control"))
		}
		if m[1] == want {
			found = true
			if !bytes.Equal(a.Body.Bytes(), vendored) || !strings.HasPrefix(a.Header().Get("Content-Type"), "text/javascript") {
				t.Errorf("%s: not the vendored decoder (%s)", m[1], a.Header().Get("Content-Type"))
			}
		}
	}
	if !found {
		t.Errorf("the gate page does not load %s", want)
	}
	for _, p := range []string{"/gate/abc/", "/gate/007/"} {
		if w := do(t, h, "GET", p, nil, nil); w.Code != 404 {
			t.Errorf("%s: %d, want 404", p, w.Code)
		}
	}
}
