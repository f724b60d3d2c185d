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
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations"
	"github.com/ticketfair/ticketfair/workloads/internal/openapitest"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/openapi"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

func TestMain(m *testing.M) { testenv.Main(m, bookingAPI.AfterTests) }

// bookingAPI checks every exchange of the tests against the served document.
var bookingAPI = openapitest.MustLoad(openapi.Booking)

const (
	testEvent        = 7
	testSeating      = "A:89.50:10:20;B:45.00:5:10"
	testServiceToken = "service-token-for-tests"
	testSecret       = "whsec_current"
	testOldSecret    = "whsec_previous"
	testIdentity     = "identity-secret-for-tests"
)

// testDB returns the URL and a pool of a fresh, migrated and seeded database.
func testDB(t testing.TB, seating string) (string, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	url := testenv.PostgresURL(t)
	if err := migrations.Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if seating != "" {
		sections, err := ParseSeating(seating)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Seed(ctx, pool, testEvent, sections); err != nil {
			t.Fatal(err)
		}
	}
	return url, pool
}

// testConfig is the booking configuration with defaults and no environment.
func testConfig(t testing.TB) config.Booking {
	t.Helper()
	var cfg config.Booking
	if err := config.LoadFrom(flag.NewFlagSet("t", flag.ContinueOnError), []string{}, func(string) (string, bool) { return "", false }, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// env is a running booking service on real PostgreSQL and Redis.
type env struct {
	t    testing.TB
	url  string
	base string
	pool *pgxpool.Pool
	rdb  *redis.Client
	keys *accesstoken.KeySet
	cfg  config.Booking
}

func newEnv(t testing.TB, adjust ...func(*config.Booking)) *env {
	t.Helper()
	url, pool := testDB(t, testSeating)
	return startEnv(t, url, pool, adjust...)
}

func startEnv(t testing.TB, url string, pool *pgxpool.Pool, adjust ...func(*config.Booking)) *env {
	t.Helper()
	key, err := accesstoken.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := accesstoken.ParseKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	redisURL, rdb := testenv.RedisDB(t)

	cfg := testConfig(t)
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.EventID = testEvent
	cfg.DatabaseURL = url
	cfg.RedisURL = redisURL
	cfg.AccessTokenKeys = key
	cfg.ServiceToken = testServiceToken
	cfg.WebhookSecrets = testSecret + "," + testOldSecret
	cfg.IdentityHMACSecret = testIdentity
	cfg.SweepInterval = time.Hour // tests sweep explicitly unless they say otherwise
	cfg.ShutdownGrace = 2 * time.Second
	for _, f := range adjust {
		f(&cfg)
	}
	e := &env{t: t, url: url, pool: pool, rdb: rdb, keys: ks, cfg: cfg}
	e.start()
	return e
}

func (e *env) start() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, e.cfg, func(a net.Addr) { addrc <- a }) }()
	select {
	case a := <-addrc:
		e.base = "http://" + a.String()
	case err := <-done:
		cancel()
		e.t.Fatalf("Run: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		e.t.Fatal("booking service did not start")
	}
	e.t.Cleanup(func() {
		// Connections the client dialed but never used count as busy for
		// the server's first 5 s, longer than the test's shutdown grace.
		http.DefaultClient.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run returned %v", err)
		}
	})
}

// token admits customer: an access token plus an active queue session.
func (e *env) token(customer string) string {
	e.t.Helper()
	sid := "sess-" + customer
	tok, _, err := e.keys.Sign(testEvent, customer, sid, time.Now(), 10*time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	exp := float64(time.Now().Add(10 * time.Minute).UnixMilli())
	if err := e.rdb.ZAdd(context.Background(), zone.ActiveKey(testEvent), redis.Z{Score: exp, Member: sid}).Err(); err != nil {
		e.t.Fatal(err)
	}
	return tok
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response %d is not JSON: %q", r.status, r.body)
	}
	return m
}

// errCode returns error.code of a JSON error body ("" if none).
func (r response) errCode() string {
	var m struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &m)
	return m.Error.Code
}

func (e *env) do(method, path string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := bookingAPI.Client(e.t).Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// hold holds seats for customer over HTTP and returns the order id.
func (e *env) hold(customer string, seats ...string) string {
	e.t.Helper()
	return e.holdIn(e.token(customer), seats...)
}

// holdWith asks for a hold of seats with the access token token.
func (e *env) holdWith(token string, seats ...string) response {
	e.t.Helper()
	return e.do("POST", "/events/7/holds", map[string]any{"seats": seats}, QueueTokenHeader, token)
}

// holdIn holds seats with token, wanting 201, and returns the order id.
func (e *env) holdIn(token string, seats ...string) string {
	e.t.Helper()
	r := e.holdWith(token, seats...)
	if r.status != http.StatusCreated {
		e.t.Fatalf("hold %v: %d %s", seats, r.status, r.body)
	}
	return r.json(e.t)["orderId"].(string)
}

func (e *env) webhook(secret string, at time.Time, body []byte) response {
	e.t.Helper()
	return e.do("POST", "/payments/webhook", body, SignatureHeader, webhooksig.Sign(secret, at, body))
}

func (e *env) scalar(sql string, args ...any) any {
	e.t.Helper()
	var v any
	if err := e.pool.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func (e *env) count(sql string, args ...any) int64 {
	e.t.Helper()
	return e.scalar(sql, args...).(int64)
}

// snapshot captures the booking tables, to prove a rejected request
// changed nothing.
func (e *env) snapshot() string {
	e.t.Helper()
	var s string
	err := e.pool.QueryRow(context.Background(), `SELECT
		coalesce((SELECT string_agg(seat_id || status || coalesce(order_id::text, '') || coalesce(hold_expires_at::text, ''), ',' ORDER BY seat_id) FROM seat), '') ||
		coalesce((SELECT string_agg(id::text || status || coalesce(idempotency_key, ''), ',' ORDER BY id) FROM ticket_order), '') ||
		coalesce((SELECT string_agg(id::text, ',' ORDER BY id) FROM outbox), '')`).Scan(&s)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// expire moves an order's hold into the past, as if its TTL had run out.
func expire(t testing.TB, pool *pgxpool.Pool, orderID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `UPDATE seat SET hold_expires_at = now() - interval '1 second' WHERE order_id = $1 AND status = 'HELD'`, orderID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE ticket_order SET hold_expires_at = now() - interval '1 second' WHERE id = $1`, orderID); err != nil {
		t.Fatal(err)
	}
}

func paymentBody(orderID, paymentID, amount, status string) []byte {
	b, _ := json.Marshal(map[string]string{"orderId": orderID, "paymentId": paymentID, "amount": amount, "currency": "EUR", "status": status})
	return b
}

type cfgBooking = config.Booking

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
