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

// Package booking is ticketfair's booking service: seat holds that never
// sell a seat twice, idempotent payment confirmation, and the transactional
// outbox that announces paid orders and refunds. PostgreSQL decides every
// race (conditional UPDATEs in sorted order, row locks, the database clock);
// Redis is used only for the queue's session check and release and for
// publishing the inventory (remaining, held and sold seats).
package booking

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations"
	"github.com/ticketfair/ticketfair/workloads/internal/ratelimit"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
	"github.com/ticketfair/ticketfair/workloads/internal/txgate"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/openapi"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// QueueTokenHeader carries the queue's access token.
const QueueTokenHeader = "X-Queue-Token"

// service is the HTTP side of the booking service.
type service struct {
	cfg     config.Booking
	store   *Store
	pool    *pgxpool.Pool
	rdb     redis.UniversalClient
	keys    *keySource
	ident   *identity.Verifier // nil: identity tokens not configured
	secrets []string
	// stripeSecrets verify the Stripe-shaped webhook (stripe.go).
	stripeSecrets []string
	metrics       *metrics
	// limits refuses floods of holds (nil: no limits).
	limits   *ratelimit.Policy
	sessions *zone.Sessions // every hold checks its queue session, coalesced
	// gate queues holds and payments so PostgreSQL sees a steady load.
	gate   *txgate.Gate
	health *health // recent hold latencies, published for the admitter
	// seating is the venue booking was told (LoadVenue at start), nil
	// when none: GET /venue then draws the seeded seats.
	seating  *config.Venue
	seatMap  *seatCache
	migrated atomic.Bool

	bg    sync.WaitGroup  // session releases in flight
	bgCtx context.Context // theirs: cancelled once Run has waited for them
}

// Run serves the booking API for cfg.EventID until ctx is cancelled. It
// does not migrate the database (`ticketfair migrate` does); /readyz
// reports pending migrations.
func Run(ctx context.Context, cfg config.Booking, ready func(net.Addr)) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("booking: %w", err)
	}
	if cfg.PaymentTimeout == 0 {
		cfg.PaymentTimeout = config.DefaultPaymentTimeout(cfg.HoldTTL)
	}
	// The phases' sections are checked against the venue when booking is
	// told it (the operator renders both; the CRD checks them too).
	var sections []string
	venue, err := LoadVenue(cfg)
	if err != nil {
		return fmt.Errorf("booking: %w", err)
	}
	if venue != nil {
		sections = SectionNames(venue)
	}
	phases, err := parsePhases(cfg.Phases, cfg.MaxSeatsPerCustomer, sections)
	if err != nil {
		return fmt.Errorf("booking: %w", err)
	}
	var keys *keySource
	switch {
	case cfg.AccessTokenJWKSURL != "":
		keys = jwksKeys(cfg.AccessTokenJWKSURL)
	case cfg.AccessTokenKeys != "":
		ks, err := accesstoken.ParseKeys(cfg.AccessTokenKeys)
		if err != nil {
			return fmt.Errorf("booking: %w", err)
		}
		keys = staticKeys(ks.PublicKeys())
	default:
		return errors.New("booking: set TICKETFAIR_ACCESS_TOKEN_JWKS_URL or TICKETFAIR_ACCESS_TOKEN_KEYS")
	}

	// A database that is down costs a request at most the connect
	// timeout (database.Pool's), not the OS's.
	pool, err := database.Pool(ctx, cfg.Postgres, database.MaxConns(cfg.DatabaseMaxConns))
	if err != nil {
		return fmt.Errorf("booking: %w", err)
	}
	defer pool.Close()
	rdb, err := redisconn.New(cfg.Redis)
	if err != nil {
		return fmt.Errorf("booking: %w", err)
	}
	defer rdb.Close()

	gate := newGate(cfg.DatabaseMaxConns)
	store := NewStore(pool, cfg.EventID, cfg.HoldTTL, cfg.MaxSeatsPerCustomer, cfg.Currency)
	store.paymentTimeout = cfg.PaymentTimeout
	store.phases = phases
	s := &service{
		cfg: cfg, pool: pool, rdb: rdb, keys: keys,
		store:   store,
		gate:    gate,
		seating: venue,
		health:  newHealth(func() int64 { return int64(gate.Waiting()) }),
		metrics: newMetrics(pool, gate),
	}
	s.seatMap = &seatCache{store: s.store, maxAge: cfg.SeatMapRefresh}
	s.limits = &ratelimit.Policy{L: ratelimit.New(rdb, zone.Prefix(cfg.EventID)), Cfg: cfg.RateLimits}
	s.sessions = zone.NewSessions(rdb, cfg.EventID)
	for _, sec := range strings.Split(cfg.WebhookSecrets, ",") {
		if sec = strings.TrimSpace(sec); sec != "" {
			s.secrets = append(s.secrets, sec)
		}
	}
	for _, sec := range strings.Split(cfg.StripeWebhookSecrets, ",") {
		if sec = strings.TrimSpace(sec); sec != "" {
			s.stripeSecrets = append(s.stripeSecrets, sec)
		}
	}
	if cfg.IdentityHMACSecret != "" || cfg.IdentityJWKSURL != "" {
		if s.ident, err = identity.New(ctx, cfg.Identity); err != nil {
			return fmt.Errorf("booking: %w", err)
		}
	}

	// Session releases after a purchase outlive the requests that start
	// them: they get a moment after the server stops, then are cancelled.
	var stopReleases context.CancelFunc
	s.bgCtx, stopReleases = context.WithCancel(context.WithoutCancel(ctx))
	defer s.waitReleases(5*time.Second, stopReleases)
	// The limiter and the session checker outlive the server's graceful
	// shutdown: requests in flight get their answers.
	lctx, lcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer lcancel()
	go s.limits.L.Run(lctx)
	go s.sessions.Run(lctx)

	return httpapi.Run(ctx, httpapi.Server{Addr: cfg.HTTPAddr, Handler: s.routes(),
		Drain: cfg.DrainDelay, Grace: cfg.ShutdownGrace, Ready: ready},
		func(ctx context.Context) error { keys.run(ctx, 5*time.Minute); return nil },
		func(ctx context.Context) error { s.sweepLoop(ctx); return nil },
		func(ctx context.Context) error { s.publishHealth(ctx); return nil })
}

func (s *service) routes() *httpapi.Mux {
	mux := httpapi.NewMux()
	handle := func(pattern string, h httpapi.HandlerFunc) {
		mux.Handle(pattern, httpapi.Observe(s.metrics.reqDuration, prometheus.Labels{"route": pattern}, s.handle(h)))
	}
	handle("GET /events/{eventId}/seats", s.seats)
	handle("GET /events/{eventId}/venue", s.venue())
	handle("POST /events/{eventId}/holds", s.hold)
	handle("DELETE /events/{eventId}/holds/{orderId}", s.release)
	handle("POST /payments/webhook", s.webhook)
	handle("POST "+StripeWebhookPath, s.stripeWebhook)
	handle("POST /orders/{orderId}/confirm", s.confirm)
	handle("GET /orders/{orderId}", s.order)
	httpapi.Probes(mux,
		httpapi.Check{Name: "database", Fn: s.pool.Ping},
		httpapi.Check{Name: "migrations", Fn: s.migrationsApplied},
		httpapi.Check{Name: "token keys", Fn: s.keysLoaded})
	mux.Handle("GET "+openapi.Path, openapi.Handler(openapi.Booking))
	mux.Handle("GET /metrics", s.metrics.handler())
	return mux
}

func (s *service) checkEvent(r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("eventId"), 10, 64)
	if err != nil || id != s.cfg.EventID {
		return errUnknownEvent
	}
	return nil
}

// queueClaims verifies the X-Queue-Token, once per request: the
// signature check is the costliest step of a hold outside PostgreSQL.
// Holding (needActive) is counted against the hold limits of its customer
// and client network, so a flood is refused before it costs the session
// check or a transaction, and needs the queue session to be still active;
// reading or releasing one's own order does not (the session ends with
// the purchase).
func (s *service) queueClaims(r *http.Request, needActive bool) (*accesstoken.Claims, error) {
	tok := strings.TrimSpace(r.Header.Get(QueueTokenHeader))
	if tok == "" {
		return nil, errMissingToken
	}
	c, err := s.keys.verify(r.Context(), tok, s.cfg.EventID)
	if err != nil {
		e := *errInvalidToken
		e.Err = err
		return nil, &e
	}
	if needActive {
		// The rate limit and the session are two Redis calls, each shared
		// with the holds that arrive at the same moment; run at once, a
		// hold waits for the slower, not for both in turn. The session
		// check only reads, so asking it of a refused request costs
		// nothing but the read.
		type answer struct {
			active bool
			err    error
		}
		session := make(chan answer, 1)
		go func() {
			active, err := s.sessions.Active(r.Context(), c.SessionID)
			session <- answer{active, err}
		}()
		limited := s.limits.Check(r.Context(), ratelimit.Hold, c.Customer(), "", r)
		a := <-session
		if limited != nil {
			return nil, limited
		}
		if a.err != nil {
			return nil, httpapi.Unavailable("the session store", a.err)
		}
		if !a.active {
			return nil, errSessionInactive
		}
	}
	return c, nil
}

func (s *service) seats(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkEvent(r); err != nil {
		return err
	}
	snap, err := s.seatMap.get(r.Context())
	if err != nil {
		return err
	}
	var all *httpapi.Cacheable
	var by map[string]*httpapi.Cacheable
	switch f := r.URL.Query().Get("format"); f {
	case "":
		if all, by, err = snap.objects(); err != nil {
			return err
		}
	case "rows":
		all, by = snap.rows, snap.rowsBy
	default:
		return httpapi.Errorf(http.StatusBadRequest, "bad_format", "format %q: want rows or none", truncate(f, 20))
	}
	body := all
	if sec := r.URL.Query().Get("section"); sec != "" {
		var ok bool
		if body, ok = by[sec]; !ok {
			return httpapi.Errorf(http.StatusNotFound, "unknown_section", "no section %q", truncate(sec, 20))
		}
	}
	body.Serve(w, r)
	return nil
}

// holdRequest is exact seats, or a quantity (BestRequest; together
// unless told otherwise).
type holdRequest struct {
	Seats      []string `json:"seats"`
	Quantity   *int     `json:"quantity"`
	Category   string   `json:"category"`
	Section    string   `json:"section"`
	Together   *bool    `json:"together"`
	Wheelchair int      `json:"wheelchair"`
}

func (s *service) hold(w http.ResponseWriter, r *http.Request) (err error) {
	defer func() { s.metrics.holds.WithLabelValues(holdResult(err)).Inc() }()
	if err := s.checkEvent(r); err != nil {
		return err
	}
	checked := time.Now()
	c, err := s.queueClaims(r, true)
	if err != nil {
		return err
	}
	s.metrics.holdChecks.Observe(time.Since(checked).Seconds())
	email, err := s.buyerEmail(r, c.Subject)
	if err != nil {
		return err
	}
	var req holdRequest
	if err := httpapi.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	var h *Hold
	err = s.gated(r.Context(), func() (err error) {
		start := time.Now()
		h, err = s.holdAsked(r.Context(), c, email, req)
		s.metrics.holdDuration.Observe(time.Since(start).Seconds())
		return err
	})
	s.health.hold(time.Since(checked))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, h)
	return nil
}

// holdResult classifies a hold's outcome for holds_total.
func holdResult(err error) string {
	var (
		unavailable *SeatsUnavailableError
		limit       *SeatLimitError
		notEnough   *NotEnoughPlacesError
		noBlock     *NoBlockError
	)
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &unavailable), errors.As(err, &notEnough), errors.As(err, &noBlock):
		return "conflict"
	case errors.As(err, &limit):
		return "limit"
	case rejected(err):
		return "rejected"
	}
	return "error"
}

func (s *service) release(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkEvent(r); err != nil {
		return err
	}
	c, err := s.queueClaims(r, false)
	if err != nil {
		return err
	}
	o, err := s.store.Release(r.Context(), r.PathValue("orderId"), c.Subject)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, o)
	return nil
}

// buyerEmail is the verified address in the identity token a hold may
// carry beside its access token: where the tickets will be mailed. No
// token (or no identity provider) is no address; a token that does not
// verify, or names another customer than the access token, is refused.
func (s *service) buyerEmail(r *http.Request, customer string) (string, error) {
	if s.ident == nil || r.Header.Get("Authorization") == "" {
		return "", nil
	}
	id, email, err := s.ident.Email(r)
	if err != nil {
		e := *errUnauthenticated
		e.Err = err
		return "", &e
	}
	if id.Subject != customer {
		return "", httpapi.Errorf(http.StatusForbidden, "identity_mismatch", "the identity token and the queue token name different customers")
	}
	return email, nil
}

// order answers GET /orders/{orderId} for the customer named by a verified
// identity token or, failing that, a verified access token.
func (s *service) order(w http.ResponseWriter, r *http.Request) error {
	var customer string
	switch {
	case s.ident != nil && r.Header.Get("Authorization") != "":
		id, err := s.ident.Customer(r)
		if err != nil {
			e := *errUnauthenticated
			e.Err = err
			return &e
		}
		customer = id
	case r.Header.Get(QueueTokenHeader) != "":
		c, err := s.queueClaims(r, false)
		if err != nil {
			return err
		}
		customer = c.Subject
	default:
		return errUnauthenticated
	}
	o, err := s.store.Order(r.Context(), r.PathValue("orderId"), customer)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, o)
	return nil
}

// amount accepts a JSON string ("179.00") or number (179) with at most two
// decimals, without passing through float64.
type amount Cents

func (a *amount) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	c, err := ParseCents(s)
	if err != nil {
		return err
	}
	*a = amount(c)
	return nil
}

type confirmRequest struct {
	PaymentID string  `json:"paymentId"`
	Amount    *amount `json:"amount"`
	Currency  string  `json:"currency"`
}

const maxKeyLen = 200

// checkPayment validates what a payment brings in from outside before any
// of it reaches the database.
func checkPayment(paymentID string, amt *amount, currency string) error {
	switch {
	case paymentID == "" || len(paymentID) > maxKeyLen || !httpapi.CleanText(paymentID):
		return badRequest("bad_payment_id", "paymentId is required: at most %d characters, no control characters", maxKeyLen)
	case amt == nil:
		return badRequest("bad_amount", "amount is required")
	case !isCurrencyCode(currency):
		return badRequest("bad_currency", "currency must be an ISO 4217 code such as EUR")
	}
	return nil
}

// maxCardFingerprintLen bounds a card fingerprint (Stripe's have 16
// characters).
const maxCardFingerprintLen = 64

// checkCard accepts a payment's card fingerprint: none, or a short
// identifier of letters, digits, _ and -.
func checkCard(fp string) error {
	if len(fp) > maxCardFingerprintLen || strings.Trim(fp, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return badRequest("bad_card_fingerprint", "cardFingerprint must be at most %d letters, digits, _ or -", maxCardFingerprintLen)
	}
	return nil
}

func isCurrencyCode(s string) bool {
	return len(s) == 3 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

func (s *service) confirm(w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if err != nil {
			s.metrics.confirms.WithLabelValues(confirmErrResult(err)).Inc()
		}
	}()
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if s.cfg.ServiceToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.ServiceToken)) != 1 {
		return errServiceToken
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return errMissingIdemKey
	}
	if len(key) > maxKeyLen || !httpapi.CleanText(key) {
		return badRequest("bad_idempotency_key", "Idempotency-Key must be at most %d characters, without control characters", maxKeyLen)
	}
	var req confirmRequest
	if err := httpapi.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := checkPayment(req.PaymentID, req.Amount, req.Currency); err != nil {
		return err
	}
	o, err := s.settle(r.Context(), Payment{OrderID: r.PathValue("orderId"), IdempotencyKey: key,
		PaymentID: req.PaymentID, Amount: Cents(*req.Amount), Currency: req.Currency})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, o)
	return nil
}

// confirmErrResult classifies a failed confirmation for confirms_total.
func confirmErrResult(err error) string {
	if rejected(err) {
		return "rejected"
	}
	return "error"
}

// settle is the confirm logic shared by the internal endpoint and the
// webhook: it counts the outcome and, after a fresh payment, frees the
// customer's queue session.
func (s *service) settle(ctx context.Context, p Payment) (*Order, error) {
	var res *ConfirmResult
	err := s.gated(ctx, func() (err error) {
		res, err = s.store.Confirm(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	o := res.Order
	switch {
	case !res.Fresh:
		s.metrics.confirms.WithLabelValues("replay").Inc()
	case o.RefundedPayment != nil:
		s.metrics.confirms.WithLabelValues("refund").Inc()
		s.metrics.refunds.WithLabelValues(o.RefundedPayment.Reason).Inc()
	case o.Status == StatusPaid:
		s.metrics.confirms.WithLabelValues("paid").Inc()
		s.releaseSession(o.sessionID)
	default:
		s.metrics.confirms.WithLabelValues("refund").Inc()
		s.metrics.refunds.WithLabelValues(o.RefundReason).Inc()
	}
	return o, nil
}

// webhookEvent is the payment provider's callback body.
type webhookEvent struct {
	OrderID   string  `json:"orderId"`
	PaymentID string  `json:"paymentId"`
	Amount    *amount `json:"amount"`
	Currency  string  `json:"currency"`
	Status    string  `json:"status"`
	// CardFingerprint identifies the card that paid, across customers.
	CardFingerprint string `json:"cardFingerprint"`
}

// webhook verifies the provider's signature over the raw body before
// reading it, then confirms (status succeeded/paid, idempotency key =
// paymentId) or releases the hold (failed/canceled). Other statuses are
// acknowledged and ignored so the provider stops retrying them.
func (s *service) webhook(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		return err
	}
	if err := verifyWebhook(r.Header.Get(SignatureHeader), body, s.secrets, s.cfg.WebhookTolerance, time.Now()); err != nil {
		return err
	}
	var ev webhookEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return badRequest("bad_json", "webhook body is not valid JSON: %v", err)
	}
	if ev.OrderID == "" {
		return badRequest("bad_order_id", "orderId is required")
	}
	switch strings.ToLower(ev.Status) {
	case "succeeded", "paid":
		if err := checkPayment(ev.PaymentID, ev.Amount, ev.Currency); err != nil {
			return err
		}
		if err := checkCard(ev.CardFingerprint); err != nil {
			return err
		}
		o, err := s.settle(r.Context(), Payment{OrderID: ev.OrderID, IdempotencyKey: ev.PaymentID,
			PaymentID: ev.PaymentID, Amount: Cents(*ev.Amount), Currency: ev.Currency, CardFingerprint: ev.CardFingerprint})
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, o)
	case "failed", "canceled", "cancelled":
		o, err := s.store.Release(r.Context(), ev.OrderID, "")
		if errors.Is(err, ErrOrderNotPending) {
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"orderId": ev.OrderID, "ignored": true, "reason": "order is not pending"})
			return nil
		}
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, o)
	default:
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"orderId": ev.OrderID, "ignored": true, "reason": "status " + truncate(ev.Status, 20)})
	}
	return nil
}

// releaseSession frees the customer's slot in the queue's seat-selection
// zone after a purchase: best effort, retried in the background; if every
// try fails the session simply expires on its own.
func (s *service) releaseSession(sid string) {
	if sid == "" {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		for attempt := range 5 {
			ctx, cancel := context.WithTimeout(s.bgCtx, 2*time.Second)
			err := zone.ReleaseSession(ctx, s.rdb, s.cfg.EventID, sid)
			cancel()
			if err == nil {
				return
			}
			slog.Warn("release queue session", "session", sid, "attempt", attempt+1, "err", err)
			if attempt == 4 || retry.Sleep(s.bgCtx, retry.Backoff(attempt, 200*time.Millisecond, 2*time.Second)) != nil {
				return
			}
		}
	}()
}

// waitReleases gives the session releases in flight up to d, then cancels
// them and waits until they have returned.
func (s *service) waitReleases(d time.Duration, cancel context.CancelFunc) {
	defer cancel()
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		slog.Warn("queue session releases still running at shutdown; cancelling them")
		cancel()
		<-done
	}
}

// handle answers h's error: the domain's errors map to HTTP in one place
// (httpError), and a dependency's unavailability is counted.
func (s *service) handle(h httpapi.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			err = httpError(err)
			s.metrics.countDependencyError(err)
			httpapi.WriteError(w, r, err)
		}
	})
}

// migrationsApplied: ready only with the current schema (checked until it
// is, then remembered).
func (s *service) migrationsApplied(ctx context.Context) error {
	if s.migrated.Load() {
		return nil
	}
	n, err := migrations.PendingConn(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return httpapi.Unavailable("the database", err)
	}
	if n > 0 {
		return &httpapi.Error{Status: http.StatusServiceUnavailable, Code: "migrations_pending",
			Message: fmt.Sprintf("%d migrations are not applied; run ticketfair migrate", n)}
	}
	s.migrated.Store(true)
	return nil
}

// keysLoaded: access tokens can be verified.
func (s *service) keysLoaded(context.Context) error {
	if !s.keys.ready() {
		return &httpapi.Error{Status: http.StatusServiceUnavailable, Code: "no_token_keys", Message: "access token keys are not loaded yet"}
	}
	return nil
}

// sweepLoop frees expired holds and publishes the inventory (remaining,
// held and sold seats).
// Every replica runs it; SKIP LOCKED keeps them out of each other's way.
func (s *service) sweepLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sweepOnce(ctx)
	}
}

func (s *service) sweepOnce(ctx context.Context) {
	seats, orders, ended, err := s.store.Sweep(ctx, s.cfg.SweepBatch)
	s.metrics.sweptRows.WithLabelValues("seats").Add(float64(seats))
	s.metrics.sweptRows.WithLabelValues("orders").Add(float64(orders))
	if len(ended) > 0 {
		// Best effort: a session not released here expires with its token.
		if rerr := zone.ReleaseSession(ctx, s.rdb, s.cfg.EventID, ended...); rerr != nil {
			slog.WarnContext(ctx, "release sessions of expired holds", "sessions", len(ended), "err", rerr)
		} else {
			s.metrics.sweptRows.WithLabelValues("sessions").Add(float64(len(ended)))
		}
	}
	if ctx.Err() != nil {
		return // shutting down
	}
	if err != nil {
		s.metrics.sweeps.WithLabelValues("error").Inc()
		s.metrics.depErrors.WithLabelValues("database").Inc()
		slog.WarnContext(ctx, "sweep failed", "err", err)
		return
	}
	inv, err := s.store.Inventory(ctx)
	if err != nil {
		s.metrics.depErrors.WithLabelValues("database").Inc()
	} else {
		s.metrics.remaining.Set(float64(inv.Remaining()))
		s.metrics.seats.WithLabelValues("available").Set(float64(inv.Available))
		s.metrics.seats.WithLabelValues("held").Set(float64(inv.Held))
		s.metrics.seats.WithLabelValues("sold").Set(float64(inv.Sold))
		if err = zone.PublishInventory(ctx, s.rdb, s.cfg.EventID, inv); err != nil {
			s.metrics.depErrors.WithLabelValues("session_store").Inc()
		}
	}
	if err != nil {
		s.metrics.sweeps.WithLabelValues("error").Inc()
		slog.WarnContext(ctx, "publish inventory failed", "err", err)
		return
	}
	s.metrics.sweeps.WithLabelValues("ok").Inc()
	s.metrics.lastSweep.SetToCurrentTime()
}
