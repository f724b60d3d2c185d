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

package booking

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
)

// Bad input: the right status, a JSON error, and no change to the database.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	good := e.token("alice")
	otherOrder := e.hold("bob", "B-4-1")
	expired, _, _ := e.keys.Sign(testEvent, "alice", "sess-alice", time.Now().Add(-time.Hour), time.Minute)
	otherEvent, _, _ := e.keys.Sign(testEvent+1, "alice", "sess-alice", time.Now(), time.Minute)
	strangerKey, _ := accesstoken.GenerateKey("k1")
	strangerKS, _ := accesstoken.ParseKeys(strangerKey)
	forged, _, _ := strangerKS.Sign(testEvent, "alice", "sess-alice", time.Now(), time.Minute)
	inactive, _, _ := e.keys.Sign(testEvent, "carol", "sess-never-admitted", time.Now(), time.Minute)
	big := `{"seats":["` + strings.Repeat("A", 70<<10) + `"]}`

	before := e.snapshot()
	for _, tc := range []struct {
		name, method, path, body, token string
		status                          int
		code                            string
	}{
		{"five seats", "POST", "/events/7/holds", `{"seats":["A-9-1","A-9-2","A-9-3","A-9-4","A-9-5"]}`, good, 400, "too_many_seats"},
		{"no seats", "POST", "/events/7/holds", `{"seats":[]}`, good, 400, "no_seats"},
		{"duplicates", "POST", "/events/7/holds", `{"seats":["A-9-1","A-9-1"]}`, good, 400, "duplicate_seat"},
		{"malformed id", "POST", "/events/7/holds", `{"seats":["A-9"]}`, good, 400, "bad_seat_id"},
		{"unknown seat", "POST", "/events/7/holds", `{"seats":["A-9-1","Z-1-1"]}`, good, 400, "unknown_seats"},
		{"malformed JSON", "POST", "/events/7/holds", `{"seats":["A-9-1"`, good, 400, "bad_json"},
		{"unknown field", "POST", "/events/7/holds", `{"seats":["A-9-1"],"customer":"bob"}`, good, 400, "bad_json"},
		{"body over 64 KiB", "POST", "/events/7/holds", big, good, 413, "body_too_large"},
		{"missing token", "POST", "/events/7/holds", `{"seats":["A-9-1"]}`, "", 401, "missing_token"},
		{"garbage token", "POST", "/events/7/holds", `{"seats":["A-9-1"]}`, "not.a.jwt", 401, "invalid_token"},
		{"expired token", "POST", "/events/7/holds", `{"seats":["A-9-1"]}`, expired, 401, "invalid_token"},
		{"other event's token", "POST", "/events/7/holds", `{"seats":["A-9-1"]}`, otherEvent, 401, "invalid_token"},
		{"forged token", "POST", "/events/7/holds", `{"seats":["A-9-1"]}`, forged, 401, "invalid_token"},
		{"inactive session", "POST", "/events/7/holds", `{"seats":["A-9-1"]}`, inactive, 403, "session_inactive"},
		{"other event's path", "POST", "/events/8/holds", `{"seats":["A-9-1"]}`, good, 404, "unknown_event"},
		{"someone else's order", "GET", "/orders/" + otherOrder, "", good, 404, "order_not_found"},
		{"someone else's hold", "DELETE", "/events/7/holds/" + otherOrder, "", good, 404, "order_not_found"},
		{"malformed order id", "GET", "/orders/nope", "", good, 404, "order_not_found"},
		{"order without token", "GET", "/orders/" + otherOrder, "", "", 401, "unauthenticated"},
		{"unknown section", "GET", "/events/7/seats?section=Q", "", "", 404, "unknown_section"},
		{"unknown path", "GET", "/nope", "", "", 404, "not_found"},
	} {
		var headers []string
		if tc.token != "" {
			headers = []string{QueueTokenHeader, tc.token}
		}
		var body any
		if tc.body != "" {
			body = tc.body
		}
		r := e.do(tc.method, tc.path, body, headers...)
		if r.status != tc.status || r.errCode() != tc.code {
			t.Errorf("%s: got %d %s, want %d %s", tc.name, r.status, truncate(string(r.body), 200), tc.status, tc.code)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", tc.name, ct)
		}
	}
	if e.snapshot() != before {
		t.Fatal("bad input changed the database")
	}
}

// The customer of GET /orders comes from a verified identity token or a
// verified access token; another customer's order is not found.
func TestGetOrderIdentity(t *testing.T) {
	e := newEnv(t)
	order := e.hold("dana", "A-8-1")
	mine, _ := identity.SignHS256(testIdentity, e.cfg.IdentityIssuer, e.cfg.IdentityAudience, "dana", time.Minute)
	theirs, _ := identity.SignHS256(testIdentity, e.cfg.IdentityIssuer, e.cfg.IdentityAudience, "eve", time.Minute)
	forged, _ := identity.SignHS256("wrong", e.cfg.IdentityIssuer, e.cfg.IdentityAudience, "dana", time.Minute)
	r := e.do("GET", "/orders/"+order, nil, "Authorization", "Bearer "+mine)
	if m := r.json(t); r.status != 200 || m["status"] != StatusPending || m["amount"] != "89.50" || m["seats"].([]any)[0] != "A-8-1" {
		t.Fatalf("own order: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/orders/"+order, nil, "Authorization", "Bearer "+theirs); r.status != 404 {
		t.Fatalf("someone else's order: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/orders/"+order, nil, "Authorization", "Bearer "+forged); r.status != 401 {
		t.Fatalf("forged identity: %d %s", r.status, r.body)
	}
}

// The seat map counts per section and filters by section.
func TestSeatMap(t *testing.T) {
	e := newEnv(t, func(c *cfgBooking) { c.SeatMapRefresh = time.Millisecond })
	e.hold("m", "B-5-1", "B-5-2")
	var m seatMapBody
	r := e.do("GET", "/events/7/seats?section=B", nil)
	if err := json.Unmarshal(r.body, &m); err != nil || r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if len(m.Sections) != 1 || m.Sections[0] != (SectionSummary{Name: "B", Price: "45.00", Total: 50, Available: 48, Held: 2}) || len(m.Seats) != 50 {
		t.Fatalf("seat map %+v", m.Sections)
	}
	r = e.do("GET", "/events/7/seats", nil)
	if err := json.Unmarshal(r.body, &m); err != nil || len(m.Sections) != 2 || len(m.Seats) != 250 {
		t.Fatalf("full map: %v %d sections %d seats", err, len(m.Sections), len(m.Seats))
	}
}

// /readyz is 503 while migrations are pending and 200 once applied.
func TestReadyz(t *testing.T) {
	e := newEnv(t)
	if r := e.do("GET", "/readyz", nil); r.status != 200 {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
	if _, err := e.pool.Exec(context.Background(), `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	fresh := startEnv(t, e.url, e.pool)
	if r := fresh.do("GET", "/readyz", nil); r.status != 503 || r.errCode() != "migrations_pending" {
		t.Fatalf("readyz with a pending migration: %d %s", r.status, r.body)
	}
	if r := fresh.do("GET", "/healthz", nil); r.status != 200 {
		t.Fatalf("healthz: %d", r.status)
	}
}

// The access token keys may come from the queue's JWKS, refetched when a
// token carries an unknown kid (key rotation).
func TestJWKSRotation(t *testing.T) {
	k1, _ := accesstoken.GenerateKey("old")
	k2, _ := accesstoken.GenerateKey("new")
	var mu sync.Mutex
	published, _ := accesstoken.ParseKeys(k1)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(w).Encode(published.JWKS())
	}))
	defer jwks.Close()
	e := newEnv(t, func(c *cfgBooking) { c.AccessTokenJWKSURL = jwks.URL; c.AccessTokenKeys = "" })
	e.keys = published
	deadline := time.Now().Add(5 * time.Second)
	for e.do("GET", "/readyz", nil).status != 200 {
		if time.Now().After(deadline) {
			t.Fatal("never ready with JWKS keys")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.hold("j1", "A-10-1")
	mu.Lock()
	published, _ = accesstoken.ParseKeys(k2 + "," + k1)
	mu.Unlock()
	e.keys = published
	e.hold("j2", "A-10-2")
}

// proxy forwards TCP to PostgreSQL and can cut every connection, to take
// the real database away and bring it back.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	down   bool
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// Database down: requests fail fast with 503 and a JSON error; when the
// database returns, so does the service.
func TestDatabaseDown(t *testing.T) {
	url, pool := testDB(t, testSeating)
	cfg, err := pgxParse(url)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, cfg)
	proxied := strings.Replace(url, cfg, p.ln.Addr().String(), 1)
	e := startEnv(t, proxied, pool)
	e.hold("before", "A-1-1")
	p.setDown(true)
	for _, path := range []string{"/events/7/holds", "/readyz"} {
		start := time.Now()
		var r response
		if path == "/readyz" {
			r = e.do("GET", path, nil)
		} else {
			r = e.do("POST", path, `{"seats":["A-1-2"]}`, QueueTokenHeader, e.token("during"))
		}
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Fatalf("%s with the database down: %d %s", path, r.status, r.body)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("%s took %v to fail", path, took)
		}
	}
	// The dashboard's database errors panel counts them.
	if n := httpapitest.MetricValue(t, e.do("GET", "/metrics", nil).body, `ticketfair_booking_dependency_errors_total{dependency="database"}`); n < 1 {
		t.Fatalf("database errors counted: %v, want at least 1", n)
	}
	p.setDown(false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.do("POST", "/events/7/holds", `{"seats":["A-1-2"]}`, QueueTokenHeader, e.token("after"))
		if r.status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery: %d %s", r.status, r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pgxParse returns host:port of a postgres URL.
func pgxParse(url string) (string, error) {
	rest, ok := strings.CutPrefix(url, "postgres://")
	if !ok {
		return "", errors.New("not a postgres:// url")
	}
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest, nil
}

// The compact seat map: one status string per row, the same counts, a
// fraction of the bytes, gzip, and cacheable with ETag / 304.
func TestSeatMapRows(t *testing.T) {
	e := newEnv(t, func(c *cfgBooking) { c.SeatMapRefresh = time.Millisecond })
	e.hold("m", "B-5-1", "B-5-2")
	var m seatRowsBody
	r := e.do("GET", "/events/7/seats?section=B&format=rows", nil)
	if err := json.Unmarshal(r.body, &m); err != nil || r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if len(m.Sections) != 1 || m.Sections[0] != (SectionSummary{Name: "B", Price: "45.00", Total: 50, Available: 48, Held: 2}) {
		t.Fatalf("sections %+v", m.Sections)
	}
	seats, held := 0, map[string]bool{}
	for _, row := range m.Rows {
		for i, c := range row.Seats {
			if c == '-' {
				continue
			}
			seats++
			if c == 'H' {
				held[SeatID(row.Section, row.Row, row.First+i)] = true
			} else if c != 'A' {
				t.Fatalf("row %+v: status %q", row, c)
			}
		}
	}
	if seats != 50 || len(held) != 2 || !held["B-5-1"] || !held["B-5-2"] {
		t.Fatalf("rows %+v: %d seats, held %v", m.Rows, seats, held)
	}
	if cc := r.header.Get("Cache-Control"); cc != "public, max-age=1" || r.header.Get("ETag") == "" {
		t.Fatalf("caching headers: %v", r.header)
	}
	// Unchanged seats keep their ETag across refreshes: a cache revalidates.
	time.Sleep(5 * time.Millisecond)
	if r2 := e.do("GET", "/events/7/seats?section=B&format=rows", nil, "If-None-Match", r.header.Get("ETag")); r2.status != http.StatusNotModified || len(r2.body) != 0 {
		t.Fatalf("revalidation: %d %q", r2.status, r2.body)
	}
	// A change makes a new ETag.
	e.hold("n", "B-4-1")
	testenv.WaitFor(t, 2*time.Second, "new ETag", func() bool {
		return e.do("GET", "/events/7/seats?section=B&format=rows", nil, "If-None-Match", r.header.Get("ETag")).status == http.StatusOK
	})
	// Bytes: the whole map, per row and gzipped, against an object per seat.
	full := e.do("GET", "/events/7/seats", nil, "Accept-Encoding", "identity")
	gz := e.do("GET", "/events/7/seats?format=rows", nil, "Accept-Encoding", "gzip")
	if gz.header.Get("Content-Encoding") != "gzip" || full.status != 200 || gz.status != 200 {
		t.Fatalf("gzip: %v", gz.header)
	}
	if len(gz.body)*10 > len(full.body) {
		t.Fatalf("compact gzipped map %d bytes, per-seat JSON %d: want at least 10x fewer", len(gz.body), len(full.body))
	}
	t.Logf("seat map of 250 seats: %d bytes per seat object, %d bytes per row gzipped", len(full.body), len(gz.body))
	if r := e.do("GET", "/events/7/seats?format=xml", nil); r.status != http.StatusBadRequest {
		t.Fatalf("bad format: %d %s", r.status, r.body)
	}
}
