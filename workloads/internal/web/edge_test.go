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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// recorder is an upstream that answers with its own name and remembers the
// requests it got.
type recorder struct {
	name string
	srv  *httptest.Server
	mu   sync.Mutex
	got  []*http.Request
	body [][]byte
}

func newRecorder(t *testing.T, name string) *recorder {
	rec := &recorder{name: name}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, r)
		rec.body = append(rec.body, b)
		rec.mu.Unlock()
		w.Header().Set("X-Upstream", name)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, name+" "+r.Method+" "+r.URL.RequestURI())
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) last() (*http.Request, []byte) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) == 0 {
		return nil, nil
	}
	return rec.got[len(rec.got)-1], rec.body[len(rec.body)-1]
}

func do(t *testing.T, h http.Handler, method, target string, body io.Reader, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, body)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestEdgeRouting(t *testing.T) {
	q, b, tk := newRecorder(t, "queue"), newRecorder(t, "booking"), newRecorder(t, "tickets")
	edge := httptest.NewServer(NewEdge(EdgeConfig{QueueURL: q.srv.URL, BookingURL: b.srv.URL, TicketsURL: tk.srv.URL, EventID: 7}))
	defer edge.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	for _, tc := range []struct {
		method, path string
		upstream     string // "" when the edge answers itself
		status       int
	}{
		{"POST", "/events/7/queue", "queue", 200},
		{"GET", "/events/7/queue/q123?x=1", "queue", 200},
		{"DELETE", "/events/7/queue/q123", "queue", 200},
		{"GET", "/events/7/stats", "queue", 200},
		{"GET", "/.well-known/jwks.json", "queue", 200},
		{"GET", "/events/7/seats?section=A", "booking", 200},
		{"GET", "/events/7/venue", "booking", 200},
		{"POST", "/events/7/holds", "booking", 200},
		{"DELETE", "/events/7/holds/o1", "booking", 200},
		{"GET", "/orders/o1", "booking", 200},
		{"POST", "/payments/webhook", "booking", 200},
		{"GET", "/orders/o1/tickets", "tickets", 200},
		// Internal or unknown paths never leave the edge.
		{"POST", "/orders/o1/confirm", "", 404},
		{"GET", "/metricsx", "", 404},
		{"GET", "/events/7/unknown", "", 404},
		// A known path with another method: 405 with Allow.
		{"POST", "/events/7/seats", "", 405},
		{"DELETE", "/orders/o1", "", 405},
		// Pages.
		{"GET", "/sale/7/", "", 200},
		{"GET", "/sale/7/seats", "", 200},
		{"GET", "/sale/7/orders/o1", "", 200},
		{"GET", "/sale/abc/", "", 404},
		{"GET", "/sale/007/", "", 404},
		{"GET", "/", "", 302},
		{"GET", "/healthz", "", 200},
		{"GET", "/metrics", "", 200},
	} {
		req, _ := http.NewRequest(tc.method, edge.URL+tc.path, strings.NewReader("{}"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d (%s)", tc.method, tc.path, resp.StatusCode, tc.status, body)
			continue
		}
		if got := resp.Header.Get("X-Upstream"); got != tc.upstream {
			t.Errorf("%s %s: went to %q, want %q", tc.method, tc.path, got, tc.upstream)
		}
		if tc.upstream != "" {
			if want := tc.upstream + " " + tc.method + " " + tc.path; string(body) != want {
				t.Errorf("%s %s: upstream saw %q, want %q", tc.method, tc.path, body, want)
			}
		}
		if tc.upstream == "" && tc.status == 404 && !strings.Contains(string(body), `"code":"not_found"`) {
			t.Errorf("%s %s: 404 body %q is not the JSON error", tc.method, tc.path, body)
		}
		if tc.status == 405 && (resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(body), `"code":"method_not_allowed"`)) {
			t.Errorf("%s %s: 405 with Allow %q, body %q", tc.method, tc.path, resp.Header.Get("Allow"), body)
		}
		if tc.path == "/" && resp.Header.Get("Location") != "/sale/7/" {
			t.Errorf("/ redirects to %q", resp.Header.Get("Location"))
		}
	}

	// The proxy forwards the credentials and says who the client was.
	req, _ := http.NewRequest("POST", edge.URL+"/events/7/holds", strings.NewReader(`{"seats":["A-1-1"]}`))
	req.Header.Set("X-Queue-Token", "tok")
	req.Header.Set("Authorization", "Bearer id")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got, body := b.last()
	if got.Header.Get("X-Queue-Token") != "tok" || got.Header.Get("Authorization") != "Bearer id" ||
		got.Header.Get("X-Forwarded-For") == "" || string(body) != `{"seats":["A-1-1"]}` {
		t.Errorf("booking got headers %v body %q", got.Header, body)
	}

	// The rules every service shares: hostile bytes stop at the edge (or
	// reach an upstream that answers 200), never a 5xx or a non-JSON
	// error; wrong methods 405; /metrics passes the linter.
	patterns := NewEdge(EdgeConfig{EventID: 7}).(*httpapi.Mux).Patterns()
	httpapitest.CheckBadBytes(t, edge.URL, patterns, map[string]string{"eventId": "7"})
	httpapitest.CheckWrongMethods(t, edge.URL, patterns, map[string]string{"eventId": "7"})
	httpapitest.LintMetrics(t, edge.URL+"/metrics")
}

func TestEdgeUpstreamDown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	h := NewEdge(EdgeConfig{QueueURL: dead.URL, BookingURL: "not a url", TicketsURL: dead.URL})
	for _, path := range []string{"/events/1/stats", "/events/1/seats"} {
		w := do(t, h, "GET", path, nil, nil)
		var eb struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if w.Code != http.StatusBadGateway || json.Unmarshal(w.Body.Bytes(), &eb) != nil || eb.Error.Code != "upstream_unavailable" {
			t.Errorf("%s: %d %s, want 502 upstream_unavailable", path, w.Code, w.Body)
		}
		if w.Header().Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", path)
		}
	}
}

func TestAssetsAndCaching(t *testing.T) {
	h := NewEdge(EdgeConfig{QueueURL: "http://127.0.0.1:1", BookingURL: "http://127.0.0.1:1", TicketsURL: "http://127.0.0.1:1"})
	ref := regexp.MustCompile(`/assets/(app\.[0-9a-f]{8}\.(?:js|css))`)
	for _, page := range []string{"/sale/1/", "/sale/1/seats", "/sale/1/orders/x"} {
		w := do(t, h, "GET", page, nil, nil)
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", page, w.Code, w.Header().Get("Content-Type"))
		}
		if cc := w.Header().Get("Cache-Control"); cc != pageCache {
			t.Errorf("%s: Cache-Control %q", page, cc)
		}
		if !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s: no CSP", page)
		}
		html := w.Body.String()
		refs := ref.FindAllStringSubmatch(html, -1)
		if len(refs) != 2 {
			t.Fatalf("%s references %d hashed assets, want 2:\n%s", page, len(refs), html)
		}
		if strings.Contains(html, "http://") || strings.Contains(html, "https://") {
			t.Errorf("%s has an absolute URL (no external requests allowed)", page)
		}
		for _, m := range refs {
			a := do(t, h, "GET", "/assets/"+m[1], nil, nil)
			if a.Code != 200 {
				t.Fatalf("%s: %d", m[1], a.Code)
			}
			if cc := a.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
				t.Errorf("%s: Cache-Control %q", m[1], cc)
			}
			sum := sha256.Sum256(a.Body.Bytes())
			if !strings.Contains(m[1], "."+hex.EncodeToString(sum[:4])+".") {
				t.Errorf("%s: name does not carry the content hash %x", m[1], sum[:4])
			}
			if strings.Contains(a.Body.String(), "http://") || strings.Contains(a.Body.String(), "https://") {
				t.Errorf("%s has an absolute URL", m[1])
			}
			// Conditional requests are answered without the body.
			c := do(t, h, "GET", "/assets/"+m[1], nil, map[string]string{"If-None-Match": a.Header().Get("ETag")})
			if c.Code != http.StatusNotModified {
				t.Errorf("%s: If-None-Match gave %d", m[1], c.Code)
			}
		}
	}
	if w := do(t, h, "GET", "/assets/app.js", nil, nil); w.Code != 404 {
		t.Errorf("unhashed asset name: %d, want 404", w.Code)
	}
	// Without secrets the simulated providers do not exist.
	for _, p := range [][2]string{{"POST", "/demo/login"}, {"GET", "/demo/pay/o1?amount=1.00&currency=EUR&event=1"}, {"POST", "/demo/pay/o1"}} {
		if w := do(t, h, p[0], p[1], nil, nil); w.Code != 404 {
			t.Errorf("%s %s without demo secrets: %d, want 404", p[0], p[1], w.Code)
		}
	}
}

func TestDemoLogin(t *testing.T) {
	cfg := EdgeConfig{QueueURL: "http://127.0.0.1:1", BookingURL: "http://127.0.0.1:1", TicketsURL: "http://127.0.0.1:1",
		IdentitySecret: "id-secret", IdentityIssuer: "iss", IdentityAudience: "aud"}
	h := NewEdge(cfg)
	v, err := identity.New(context.Background(), config.Identity{IdentityHMACSecret: "id-secret", IdentityIssuer: "iss", IdentityAudience: "aud"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 3 {
		w := do(t, h, "POST", "/demo/login", nil, nil)
		var lr LoginResponse
		if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &lr) != nil {
			t.Fatalf("login: %d %s", w.Code, w.Body)
		}
		sub, err := v.Verify(lr.Token)
		if err != nil || sub != lr.CustomerID {
			t.Fatalf("token does not verify as %s: %q %v", lr.CustomerID, sub, err)
		}
		if seen[sub] {
			t.Fatalf("customer id %s issued twice", sub)
		}
		seen[sub] = true
		if d := time.Until(lr.ExpiresAt); d < 11*time.Hour || d > 12*time.Hour {
			t.Errorf("expiresAt %v is not about 12h away", lr.ExpiresAt)
		}
	}
	if w := do(t, h, "GET", "/demo/login", nil, nil); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET /demo/login: %d", w.Code)
	}
}

func TestDemoPay(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies [][]byte
		sigs   []string
		reject bool
	)
	booking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Method != "POST" || r.URL.Path != "/payments/webhook" {
			http.Error(w, "wrong path "+r.URL.Path, 404)
			return
		}
		bodies, sigs = append(bodies, b), append(sigs, r.Header.Get(webhooksig.Header))
		if reject {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"error":{"code":"amount_mismatch","message":"the amount does not match"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"status":"PAID"}`)
	}))
	defer booking.Close()
	h := NewEdge(EdgeConfig{QueueURL: "http://127.0.0.1:1", BookingURL: booking.URL, TicketsURL: "http://127.0.0.1:1", WebhookSecret: "whsec"})

	// The checkout is open until booking's payBy.
	payBy := time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)
	page := do(t, h, "GET", "/demo/pay/ord-1?amount=179.00&currency=EUR&event=3&payBy="+url.QueryEscape(payBy), nil, nil)
	if body := page.Body.String(); page.Code != 200 || !strings.Contains(body, "Pay 179.00 EUR") || !strings.Contains(body, `action="/demo/pay/ord-1"`) ||
		!strings.Contains(body, `<time id="pay-by" datetime="`+payBy+`">`) || !strings.Contains(body, `name="payBy" value="`+payBy+`"`) {
		t.Fatalf("pay page: %d %s", page.Code, body)
	}

	form := url.Values{"amount": {"179.00"}, "currency": {"EUR"}, "event": {"3"}, "payBy": {payBy}}.Encode()
	ct := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"}
	w := do(t, h, "POST", "/demo/pay/ord-1", strings.NewReader(form), ct)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/sale/3/orders/ord-1" {
		t.Fatalf("pay: %d %q %s", w.Code, w.Header().Get("Location"), w.Body)
	}
	mu.Lock()
	if len(bodies) != 1 {
		t.Fatalf("booking got %d webhooks", len(bodies))
	}
	var ev WebhookEvent
	if err := json.Unmarshal(bodies[0], &ev); err != nil {
		t.Fatal(err)
	}
	if ev.OrderID != "ord-1" || ev.Amount != "179.00" || ev.Currency != "EUR" || ev.Status != "succeeded" || !strings.HasPrefix(ev.PaymentID, "pay_") {
		t.Errorf("webhook body %s", bodies[0])
	}
	// The signature verifies over the exact bytes sent, at a recent time.
	ts, _, _ := strings.Cut(strings.TrimPrefix(sigs[0], "t="), ",")
	unix, err := strconv.ParseInt(ts, 10, 64)
	if at := time.Unix(unix, 0); err != nil || time.Since(at) > time.Minute || time.Since(at) < -time.Minute {
		t.Errorf("signature time %v is not now", at)
	}
	if want := webhooksig.Sign("whsec", time.Unix(unix, 0), bodies[0]); sigs[0] != want {
		t.Errorf("signature %q, want %q", sigs[0], want)
	}
	reject = true
	mu.Unlock()

	// The shop refusing the payment is shown on the provider page.
	w = do(t, h, "POST", "/demo/pay/ord-1", strings.NewReader(form), ct)
	if w.Code != http.StatusBadGateway || !strings.Contains(w.Body.String(), "the amount does not match") {
		t.Errorf("rejected payment: %d %s", w.Code, w.Body)
	}

	// Bad input never reaches the shop.
	mu.Lock()
	n := len(bodies)
	mu.Unlock()
	for name, tc := range map[string]struct {
		path, form string
		hdr        map[string]string
		want       int
	}{
		"bad amount":     {"/demo/pay/ord-1", "amount=1e9&currency=EUR&event=3", ct, 400},
		"bad currency":   {"/demo/pay/ord-1", "amount=1.00&currency=eur&event=3", ct, 400},
		"bad event":      {"/demo/pay/ord-1", "amount=1.00&currency=EUR&event=//evil.example", ct, 400},
		"bad order id":   {"/demo/pay/ord%3Cx%3E", "amount=1.00&currency=EUR&event=3", ct, 400},
		"cross-site":     {"/demo/pay/ord-1", form, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"}, 403},
		"oversized body": {"/demo/pay/ord-1", "amount=" + strings.Repeat("1", 70<<10), ct, 400},
		"bad payBy":      {"/demo/pay/ord-1", "amount=1.00&currency=EUR&event=3&payBy=soon", ct, 400},
		"checkout ended": {"/demo/pay/ord-1", "amount=1.00&currency=EUR&event=3&payBy=" + url.QueryEscape(time.Now().Add(-time.Second).Format(time.RFC3339Nano)), ct, http.StatusGone},
	} {
		w := do(t, h, "POST", tc.path, strings.NewReader(tc.form), tc.hdr)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d (%s)", name, w.Code, tc.want, w.Body)
		}
	}
	mu.Lock()
	if len(bodies) != n {
		t.Errorf("bad input sent %d webhooks", len(bodies)-n)
	}
	mu.Unlock()
}

func TestRun(t *testing.T) {
	var cfg config.Edge
	if err := config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.HTTPAddr, cfg.EventID = "127.0.0.1:0", 5
	bad := cfg
	bad.BookingURL = "booking:8080"
	if err := Run(context.Background(), bad, nil); err == nil || !strings.Contains(err.Error(), "--booking-url") {
		t.Fatalf("Run with a bad booking URL: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, func(a net.Addr) { addr <- a.String() }) }()
	base := "http://" + <-addr
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/sale/5/" {
		t.Errorf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// No demo secrets configured: no simulated providers.
	resp, err = client.Post(base+"/demo/login", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /demo/login without a secret: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}
