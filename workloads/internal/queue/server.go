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

// Package queue is the waiting room of a ticket sale: customers join (one
// place each, a shuffled pre-queue then FIFO), poll cheaply, and are let into
// seat selection by an admitter that runs as one Redis Lua script per tick
// on one pod at a time (a Kubernetes Lease plus a fencing epoch).
package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/coalesce"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/pow"
	"github.com/ticketfair/ticketfair/workloads/internal/ratelimit"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/openapi"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
	"github.com/ticketfair/ticketfair/workloads/queuestats"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

const (
	// requestTimeout bounds a request's Redis work: a Redis outage answers
	// 503 within it, never a hang.
	requestTimeout = 2 * time.Second
	// staleAfter is how old a snapshot may be before polls answer 503.
	staleAfter = 3 * time.Second
	// snapshotEvery is how often each pod refreshes its snapshot.
	snapshotEvery = 250 * time.Millisecond
)

// Run serves the queue of cfg.EventID until ctx is cancelled and, when
// cfg.Admitter is set, runs the admitter (under a Lease unless
// cfg.LeaderElection is false).
func Run(ctx context.Context, cfg config.Queue, ready func(net.Addr)) error {
	var kube *rest.Config
	if cfg.TicketEventName != "" || (cfg.Admitter && cfg.LeaderElection) {
		k, err := kubeConfig(cfg.Kubeconfig)
		if err != nil {
			return fmt.Errorf("kubernetes config (for leader election and the TicketEvent; outside Kubernetes set --leader-election=false and no --ticketevent-name): %w", err)
		}
		kube = k
	}
	return run(ctx, cfg, kube, ready)
}

func kubeConfig(path string) (*rest.Config, error) {
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	return rest.InClusterConfig()
}

// service is one queue pod.
type service struct {
	cfg      config.Queue
	st       *store
	live     *liveSettings
	snap     *snapshotter
	ids      *queueIDCodec
	keys     *accesstoken.KeySet
	verifier *identity.Verifier
	m        *metrics
	pub      stateServer
	joins    *coalesce.Batcher[JoinRequest, place] // nil: one script call per join
	pow      *pow.Gate                             // nil: joins need no proof of work
	limits   *ratelimit.Policy                     // limits joins and polls per identity and network
	codeKey  []byte                                // the event's access codes key; nil: codes are refused
}

func run(ctx context.Context, cfg config.Queue, kube *rest.Config, ready func(net.Addr)) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	base, err := settingsFromConfig(cfg)
	if err != nil {
		return err
	}
	ks, err := accesstoken.ParseKeys(cfg.AccessTokenKeys)
	if err != nil {
		return err
	}
	ids, err := newQueueIDCodec(cfg.AccessTokenKeys)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ver, err := identity.New(ctx, cfg.Identity)
	if err != nil {
		return err
	}
	// Fail fast: a down Redis must become a 503, not a queue of waiters
	// (redisconn's timeouts are a second).
	rdb, err := redisconn.New(cfg.Redis)
	if err != nil {
		return err
	}
	defer rdb.Close()

	s := &service{cfg: cfg, st: newStore(rdb, cfg.EventID), live: newLiveSettings(base), ids: ids, keys: ks, verifier: ver, m: newMetrics()}
	s.limits = &ratelimit.Policy{L: ratelimit.New(rdb, zone.Prefix(cfg.EventID)), Cfg: cfg.RateLimits,
		CountJoins: cfg.PowDifficulty > 0 && cfg.PowAdaptiveThreshold > 0}
	if s.pow, err = pow.NewGate(cfg.ProofOfWork, cfg.EventID, s.limits.JoinRates); err != nil {
		return err
	}
	if cfg.AccessCodeKey != "" {
		if s.codeKey, err = accesscode.ParseKey(cfg.AccessCodeKey); err != nil {
			return err
		}
	}
	s.snap = newSnapshotter(s.st, s.live, snapshotEvery)
	s.snap.onResult = func(err error) {
		if err != nil {
			s.m.redisErrors.WithLabelValues("snapshot").Inc()
			return
		}
		snap := s.snap.Load()
		s.m.maxActive.Set(float64(s.live.Load().MaxActive))
		s.m.salesOpen.Set(b2f(snap.SalesOpen))
		s.m.waiting.Set(float64(snap.Waiting))
		s.m.rate.Set(snap.Rate)
		s.m.active.Set(float64(snap.Active))
	}

	// How old the polls' answers are: since the last good snapshot, or since
	// start when there has been none.
	started := time.Now()
	s.m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ticketfair_queue_snapshot_age_seconds",
		Help: "Age of this pod's snapshot of Redis; polls answer 503 past " + staleAfter.String() + "."}, func() float64 {
		if snap := s.snap.Load(); snap.Valid {
			return time.Since(snap.Fetched).Seconds()
		}
		return time.Since(started).Seconds()
	}))

	if cfg.TicketEventName != "" {
		if cfg.Namespace == "" {
			return errors.New("queue: TICKETFAIR_NAMESPACE is required with TICKETFAIR_TICKETEVENT_NAME")
		}
		if err := watchTicketEvent(ctx, kube, cfg.Namespace, cfg.TicketEventName, cfg, s.live); err != nil {
			return err
		}
	}

	// Like the join batcher, the limiter outlives the server's graceful
	// shutdown, so requests in flight get their answers.
	lctx, lcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer lcancel()
	go s.limits.L.Run(lctx)
	if cfg.JoinBatch > 1 {
		// The batcher outlives the server's graceful shutdown, so joins in
		// flight finish; it stops once Run has returned.
		s.joins = newJoinBatcher(s.st, s.live, cfg.JoinBatch, cfg.JoinLinger)
		jctx, jcancel := context.WithCancel(context.WithoutCancel(ctx))
		jdone := make(chan struct{})
		go func() { s.joins.Run(jctx); close(jdone) }()
		defer func() { jcancel(); <-jdone }()
	}
	loops := []httpapi.Background{func(ctx context.Context) error { s.snap.run(ctx); return nil }}
	if cfg.Admitter {
		loops = append(loops, func(ctx context.Context) error {
			if err := s.runAdmitter(ctx, kube); err != nil {
				return fmt.Errorf("admitter: %w", err)
			}
			return nil
		})
	}
	return httpapi.Run(ctx, httpapi.Server{Addr: cfg.HTTPAddr, Handler: s.routes(),
		Drain: cfg.DrainDelay, Grace: cfg.ShutdownGrace, Ready: ready}, loops...)
}

// runAdmitter admits under the Lease, or alone without election.
func (s *service) runAdmitter(ctx context.Context, kube *rest.Config) error {
	a := &admitter{st: s.st, live: s.live, m: s.m, step: s.cfg.AdmitStep, tune: newAutotuner(s.st, s.m)}
	if !s.cfg.LeaderElection {
		slog.Info("leader election disabled: this process is the only admitter (run exactly one)", "event", s.cfg.EventID)
		for ctx.Err() == nil {
			if err := a.run(ctx, 0); err != nil {
				return err
			}
			// Fenced off by another admitter: wait before taking over again.
			_ = retry.Sleep(ctx, 5*time.Second)
		}
		return nil
	}
	lease := s.cfg.LeaseName
	if lease == "" {
		lease = "ticketfair-admitter-" + strconv.FormatInt(s.cfg.EventID, 10)
	}
	id := s.cfg.PodName
	if id == "" {
		h, _ := os.Hostname()
		id = h + "-" + strconv.Itoa(os.Getpid())
	}
	ns := s.cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	return runElected(ctx, election{Kube: kube, Namespace: ns, LeaseName: lease, Identity: id,
		LeaseDuration: s.cfg.LeaseDuration, RenewDeadline: s.cfg.RenewDeadline, RetryPeriod: s.cfg.RetryPeriod},
		func(ctx context.Context, fencing int64) { _ = a.run(ctx, fencing) })
}

func (s *service) routes() *httpapi.Mux {
	mux := httpapi.NewMux()
	mux.Handle("POST /events/{eventId}/queue", s.handle("join", s.join))
	mux.Handle("GET /events/{eventId}/queue/state", s.handle("state", s.state))
	mux.Handle("GET /events/{eventId}/queue/challenge", s.handle("challenge", s.challenge))
	mux.Handle("GET /events/{eventId}/queue/{queueId}", s.handle("poll", s.poll))
	mux.Handle("DELETE /events/{eventId}/queue/{queueId}", s.handle("leave", s.leave))
	mux.Handle("GET /events/{eventId}/stats", s.handle("stats", s.stats))
	mux.Handle("GET /.well-known/jwks.json", httpapi.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(s.keys.JWKS())
	}))
	mux.Handle("GET "+openapi.Path, openapi.Handler(openapi.Queue))
	// Not ready without a fresh snapshot: polls would answer 503.
	httpapi.Probes(mux, httpapi.Check{Name: "snapshot", Fn: func(context.Context) error {
		if snap := s.snap.Load(); !snap.Valid || time.Since(snap.Fetched) > staleAfter {
			return &httpapi.Error{Status: http.StatusServiceUnavailable, Code: "stale_snapshot",
				Message: "the queue snapshot is stale (redis)", RetryAfter: time.Second}
		}
		return nil
	}})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))
	return mux
}

// errPlaceLost answers a queueId from a queue Redis no longer has (it
// restarted without its data): the place is gone, joining again gives a new one.
var errPlaceLost = &httpapi.Error{Status: http.StatusNotFound, Code: "place_lost", Message: "the queue lost this place; join again"}

var errBadCustomer = httpapi.Errorf(http.StatusBadRequest, "bad_customer", "customer ids must not contain '|'")

// handle maps errors to statuses in one place; the request's latency is
// recorded by httpapi.Observe, labelled with op and the status code.
func (s *service) handle(op string, fn httpapi.HandlerFunc) http.Handler {
	return httpapi.Observe(s.m.requests, prometheus.Labels{"op": op}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			if op == "join" {
				s.countRefusal(err)
			}
			switch {
			case errors.Is(err, zone.ErrUnavailable):
				s.m.redisErrors.WithLabelValues(op).Inc()
				err = httpapi.Unavailable("the queue store", err)
			case errors.Is(err, context.DeadlineExceeded):
				s.m.redisErrors.WithLabelValues(op).Inc()
			case errors.Is(err, identity.ErrUnauthenticated):
				err = &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a valid identity token is required", Err: err}
			case errors.Is(err, errBadQueueID):
				err = &httpapi.Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such place in the queue"}
			}
			httpapi.WriteError(w, r, err)
		}
	}))
}

// event checks the path's event id: a pod serves one event.
func (s *service) event(r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("eventId"), 10, 64)
	if err != nil || id != s.cfg.EventID {
		return &httpapi.Error{Status: http.StatusNotFound, Code: "unknown_event", Message: "no such event"}
	}
	return nil
}

func (s *service) customer(r *http.Request) (string, error) {
	c, err := s.verifier.Customer(r)
	if err != nil {
		return "", err
	}
	if strings.ContainsRune(c, '|') {
		return "", errBadCustomer
	}
	return c, nil
}

func (s *service) join(w http.ResponseWriter, r *http.Request) error {
	if err := s.event(r); err != nil {
		return err
	}
	id, err := s.identify(r)
	if err != nil {
		return err
	}
	customer := id.Subject
	// The body is optional; when present it must be a JSON object.
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		return err
	}
	// "{}", what clients send, needs no decoder.
	var req struct {
		Code string        `json:"code"`
		Pow  *pow.Solution `json:"pow"`
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && string(b) != "{}" {
		if err := httpapi.UnmarshalStrict(body, &req); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	ch, err := s.botChecks(ctx, r, customer, req.Pow)
	if err != nil {
		return err
	}
	jr := JoinRequest{Customer: customer, ChallengeID: ch.ID, ChallengeExpiry: ch.ExpiresAt}
	if err := s.chooseQueue(&jr, id.Tier, req.Code); err != nil {
		return err
	}
	var p place
	if s.joins != nil {
		p, err = s.joins.Do(ctx, jr)
	} else {
		p, err = s.st.joinOne(ctx, jr, s.live.Load())
	}
	if err != nil {
		return err
	}
	if p.Refused != "" {
		return refusedJoin(p.Refused)
	}
	v := queueapi.Place{QueueID: s.ids.encodeIn(s.cfg.EventID, customer, p.Score, p.Gen, p.Queue)}
	if p.State == "w" {
		s.waitingView(&v, p.Score, p.Queue)
	} else {
		v.Status, v.SalesOpen = queueapi.StatusAdmitted, true
	}
	status := http.StatusOK
	if p.Created {
		status = http.StatusCreated
	}
	w.Header().Set("Retry-After", strconv.Itoa(v.PollAfterSeconds))
	httpapi.WriteJSON(w, status, v)
	return nil
}

// challenge hands the caller a proof-of-work challenge for their join
// (pow.Gate: its difficulty rises with the join rates of their network and,
// with PowSubjectPrefix, of their subject's prefix).
func (s *service) challenge(w http.ResponseWriter, r *http.Request) error {
	if err := s.event(r); err != nil {
		return err
	}
	customer, err := s.customer(r)
	if err != nil {
		return err
	}
	if s.pow == nil {
		return &httpapi.Error{Status: http.StatusNotFound, Code: "pow_not_required", Message: "this sale asks for no proof of work; join without one"}
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	v, err := s.pow.Issue(ctx, customer, ratelimit.Network(ratelimit.ClientAddr(r, s.cfg.ClientAddrHeader)))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

// waitingView fills v for a waiting place in queue from the snapshot alone.
func (s *service) waitingView(v *queueapi.Place, score int64, queue string) {
	snap, set := s.snap.Load(), s.live.Load()
	if len(set.Phases) > 0 {
		s.waitingInQueue(v, snap, set, score, queue)
		return
	}
	v.Status = queueapi.StatusWaiting
	switch {
	case snap.SoldOut:
		v.Status = queueapi.StatusSoldOut
	case set.Paused:
		v.Status = queueapi.StatusPaused
	}
	v.SalesOpen = snap.SalesOpen
	if !snap.SalesOpen {
		// Nobody's rank exists before the opening shuffle.
		if !set.SalesOpenAt.IsZero() {
			at := set.SalesOpenAt.UTC()
			v.SalesOpenAt = &at
		}
		v.PollAfterSeconds = int(min(max(time.Until(set.SalesOpenAt).Seconds(), 1), 15))
		return
	}
	v.Place = score
	v.Ahead = snap.ahead(score)
	v.Position = v.Ahead + 1
	rate := snap.admissionRate(set)
	wait := float64(v.Ahead) / rate
	v.EstimatedWaitSeconds = int64(wait)
	v.PollAfterSeconds = queueapi.PollAfter(wait)
	if v.Status == queueapi.StatusSoldOut {
		v.PollAfterSeconds = 60
	}
}

// place checks the event and the identity token and returns the customer
// and the place their queueId carries: a queueId of someone else is 404,
// and so is one of a generation the queue's Redis no longer holds.
func (s *service) place(r *http.Request) (customer string, score int64, queue string, err error) {
	if err := s.event(r); err != nil {
		return "", 0, "", err
	}
	if customer, err = s.customer(r); err != nil {
		return "", 0, "", err
	}
	score, gen, queue, err := s.ids.decodeIn(r.PathValue("queueId"), s.cfg.EventID, customer)
	if err != nil {
		return "", 0, "", err
	}
	snap := s.snap.Load()
	if !snap.Valid || time.Since(snap.Fetched) > staleAfter {
		return "", 0, "", fmt.Errorf("%w: queue snapshot is stale", zone.ErrUnavailable)
	}
	if gen != 0 && gen != snap.Gen {
		// The snapshot may predate the join that set the generation: only
		// Redis itself can tell a lost place (a rare call, around a restart).
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		cur, err := s.st.generation(ctx)
		if err != nil {
			return "", 0, "", err
		}
		if cur != gen {
			return "", 0, "", errPlaceLost
		}
	}
	return customer, score, queue, nil
}

func (s *service) poll(w http.ResponseWriter, r *http.Request) error {
	customer, score, queue, err := s.place(r)
	if err != nil {
		return err
	}
	if err := s.limits.Check(r.Context(), ratelimit.Poll, customer, "", r); err != nil {
		return err
	}
	snap := s.snap.Load()
	v := queueapi.Place{}
	if wm := snap.queue(queue).Watermark; wm < 0 || score > wm {
		// Steady state: still behind the admission watermark, no Redis.
		s.waitingView(&v, score, queue)
	} else if err := s.claimView(r.Context(), &v, customer, queue, score); err != nil {
		return err
	}
	w.Header().Set("Retry-After", strconv.Itoa(v.PollAfterSeconds))
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

// claimView reads Redis for a place the admitter has passed: the first
// poll after admission claims the session and gets the access token.
func (s *service) claimView(ctx context.Context, v *queueapi.Place, customer, queue string, score int64) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	set := s.live.Load()
	c, err := s.st.claimIn(ctx, customer, queue, score, set.TokenTTL)
	if err != nil {
		return err
	}
	v.SalesOpen, v.Place = true, score
	switch c.Status {
	case "waiting":
		s.waitingView(v, score, queue)
	case "admitted":
		now := time.Now()
		// Every poll of the session signs its token again, so the phase
		// comes from a time fixed for the session, its claim (the expiry
		// less the token TTL), not from now: a later poll after the next
		// phase opened keeps the phase of admission. The claim follows
		// admission within the claim timeout.
		at := c.Expiry.Add(-set.TokenTTL)
		if at.After(now) {
			at = now
		}
		phase := set.phaseOfAdmission(queue, at)
		tok, exp, err := s.keys.SignPhase(s.cfg.EventID, customer, c.SessionID, phase, now, c.Expiry.Sub(now))
		if err != nil {
			return err
		}
		v.Status, v.AccessToken, v.AccessTokenExpiresAt = queueapi.StatusAdmitted, tok, &exp
		v.PollAfterSeconds = 30
	case "expired":
		v.Status, v.PollAfterSeconds = queueapi.StatusExpired, 60
	case "left":
		v.Status, v.PollAfterSeconds = queueapi.StatusClosed, 60
	default:
		return errBadQueueID
	}
	return nil
}

func (s *service) leave(w http.ResponseWriter, r *http.Request) error {
	customer, score, queue, err := s.place(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	ok, err := s.st.leaveIn(ctx, customer, queue, score)
	if err != nil {
		return err
	}
	if !ok {
		return errBadQueueID
	}
	httpapi.WriteJSON(w, http.StatusOK, queueapi.Left{Status: queueapi.StatusClosed})
	return nil
}

// Stats is the JSON of GET /events/{eventId}/stats, shared with the operator.
type Stats = queuestats.Stats

func (s *service) stats(w http.ResponseWriter, r *http.Request) error {
	if err := s.event(r); err != nil {
		return err
	}
	snap := s.snap.Load()
	if !snap.Valid {
		return fmt.Errorf("%w: no snapshot yet", zone.ErrUnavailable)
	}
	st := Stats{Waiting: snap.Waiting, Active: snap.Active, AdmittedTotal: snap.Admitted,
		Remaining: snap.Remaining, Held: snap.Held, Sold: snap.Sold, SalesOpen: snap.SalesOpen, Paused: s.live.Load().Paused, SoldOut: snap.SoldOut,
		UpdatedAt: snap.Fetched.UTC().Truncate(time.Second)}
	st.Phase, st.Queues = queueStats(snap, s.live.Load())
	rate, err := s.admitRate(r.Context())
	if err != nil {
		return err
	}
	st.AdmitRate = rate
	httpapi.WriteJSON(w, http.StatusOK, st)
	return nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
