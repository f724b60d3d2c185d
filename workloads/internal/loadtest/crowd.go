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

// Package loadtest simulates a crowd of customers against a ticketfair
// deployment: they join before and after opening, poll at the interval the
// server advises, abandon, forget to claim, pick and hold seats, let holds
// expire or pay through a simulated payment provider that sometimes calls
// the webhook twice or late, and read their tickets back. `ticketfair-dev
// loadtest` runs it against any deployment; `ticketfair-dev demo` against a
// local sale.
package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// Config says where the services are and how to act as the identity
// provider and the payment provider.
type Config struct {
	QueueURL, BookingURL, TicketsURL string
	// StateURL is where the crowd reads the queue's public state: a cache
	// in front of the queue, as browsers read it through a CDN (default
	// QueueURL).
	StateURL                         string
	EventID                          int64
	IdentitySecret                   string // HS256 secret of identity tokens
	IdentityIssuer, IdentityAudience string
	WebhookSecret                    string // signs payment callbacks
	Currency                         string
	SalesOpenAt                      time.Time
	Profile                          Profile
	Seed                             uint64
	// Progress, when set, receives a snapshot about twice a second.
	Progress func(Progress)
	// Deadline bounds the whole run.
	Deadline time.Duration
	// DialContext, when set, opens the crowd's connections (a local sale
	// spreads them over service replicas with it, as a Service does).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Observe, when set, is told every request's endpoint, status (0: a
	// transport error) and start, from many goroutines at once.
	Observe func(endpoint string, status int, start time.Time)
	// Networks spreads the people over this many client networks, each
	// its own loopback /24 (see networkAddr): the services count requests
	// per network as behind many home routers (0: one network).
	Networks int
	// Bots adds scripted scalper accounts to the crowd (bots.go).
	Bots Bots
	// AccessCodes are handed out one per code holder (Profile.CodeHolders),
	// in order; a holder beyond the list joins without one.
	AccessCodes []string
	// TierClaim is the identity token's claim a member's tier is in
	// (default: the identity config's), MemberTier its value (default
	// DefaultMemberTier).
	TierClaim, MemberTier string
	// EmailClaim, when set, puts each person's address (BuyerEmail) in
	// their identity tokens under that claim, and holds carry the token:
	// the paid orders' tickets are mailed.
	EmailClaim string
	// Venue, when set, is the sale's venue: best available asks for its
	// categories and standing areas, and people who pick leave its
	// wheelchair and companion seats. Without it each seated section is
	// asked for by name, as the shorthand's sections are categories.
	Venue *config.Venue
}

// Progress is a live view of the run.
type Progress struct {
	Elapsed    time.Duration
	Waiting    int64 // joined, not yet admitted or gone
	Active     int64 // admitted, not yet done
	Held       int64 // seats in holds not yet paid or expired
	Sold       int64 // seats in holds whose payment was sent
	Requests   uint64
	ReqPerSec  float64
	QueueStats map[string]any
}

// Counts are the crowd's outcomes.
type Counts struct {
	Customers      int64 `json:"customers"`
	Joined         int64 `json:"joined"`
	JoinedPreQueue int64 `json:"joinedPreQueue"`
	Abandoned      int64 `json:"abandoned"`
	Admitted       int64 `json:"admitted"`
	NeverClaimed   int64 `json:"neverClaimed"`
	SoldOutSeen    int64 `json:"soldOutSeen"`
	HoldsOK        int64 `json:"holdsOk"`
	HoldConflicts  int64 `json:"holdConflicts"`
	HoldsAbandoned int64 `json:"holdsAbandoned"` // let expire on purpose
	PaymentsSent   int64 `json:"paymentsSent"`
	PaymentsFailed int64 `json:"paymentsFailed"`
	WebhooksTwice  int64 `json:"webhooksTwice"`
	SeatsPaidFor   int64 `json:"seatsPaidFor"`
	TicketsSeen    int64 `json:"ticketsSeen"`
	GaveUpNoSeats  int64 `json:"gaveUpNoSeats"`
	PlacesLost     int64 `json:"placesLost"` // the queue no longer knew the place (404), or the session ended early (403)
	Rejoined       int64 `json:"rejoined"`   // of those, joined again and got a new place
	RejoinFailed   int64 `json:"rejoinFailed"`
	// PhaseNotOpen counts joins refused as too early for the person's
	// phase (403 phase_not_open): each joined again at its opening.
	PhaseNotOpen    int64 `json:"phaseNotOpen,omitempty"`
	MaxActiveSample int64 `json:"maxActiveSampled"`
	// WaitingSeconds is the time all customers spent waiting in the queue
	// (from joining to admission, leaving, sold out or giving up).
	WaitingSeconds float64 `json:"waitingSeconds"`
	// StateReads and PersonalPolls are the waiting crowd's requests: the
	// public state (through the cache) and the per-person endpoint.
	StateReads    int64 `json:"stateReads"`
	PersonalPolls int64 `json:"personalPolls"`
	// EdgeReads are the reads of the public state a CDN edge would answer
	// from its copy (younger than the max-age): no request is made.
	EdgeReads int64 `json:"edgeReads"`
	// Holds are the holds by kind (HoldsOK and HoldConflicts are their
	// sums).
	Holds Holds `json:"holds"`
}

// Result of a run.
type Result struct {
	Counts    Counts          `json:"counts"`
	Endpoints []EndpointStats `json:"endpoints"`
	Duration  time.Duration   `json:"duration"`
	SoldOutAt time.Duration   `json:"soldOutAt"` // since opening, when first seen
	// PaidOrders are the orders whose "succeeded" payment callback the
	// booking service accepted (2xx): each must end PAID or refunded once.
	PaidOrders []string `json:"paidOrders"`
	// Bots compares the bots with the people, when the crowd has bots.
	Bots *BotReport `json:"bots,omitempty"`
	// A sale with phases (phases.go): each admission as the crowd saw it,
	// each code holder's join, the crowd's figures per queue, and reads of
	// the public state that showed a queue admitting before its opening.
	Admissions      []AdmissionSeen        `json:"admissions,omitempty"`
	CodeJoins       []CodeJoin             `json:"codeJoins,omitempty"`
	Queues          map[string]QueueCounts `json:"queues,omitempty"`
	EarlyAdmissions []EarlyAdmission       `json:"earlyAdmissions,omitempty"`
	// QueueTimeline is the public state's figures per queue, read about
	// once a second, each changed read.
	QueueTimeline []QueueSample `json:"queueTimeline,omitempty"`
	// BestOrders are the orders of the best-available holds of seats (not
	// standing places, not splits held by id): the audit checks they
	// stranded no single seat.
	BestOrders []string `json:"bestOrders,omitempty"`
}

type behaviour uint8

const (
	buyer behaviour = iota
	abandoner
	noClaimer
	holdExpirer
	payFailer
)

type step uint8

const (
	stepJoin step = iota
	stepPoll
	stepChoose
	stepPay
	stepWebhookAgain
	stepTickets
)

// customer is the state of one simulated person: small, since millions live at once.
type customer struct {
	id       int32
	kind     behaviour
	next     step
	want     int8
	ask      ask  // how they ask for places
	wheel    bool // needs a wheelchair place (best available, two or more)
	polls    int16
	tries    int16
	rejoins  int8
	lost     bool  // lost a place and has not got a new one yet
	bot      bool  // a scripted scalper account (bots.go)
	member   bool  // joins with the member tier (phases.go)
	qi       uint8 // the queue of their place, interned (0: a sale without phases)
	waits    int8  // joins refused phase_not_open so far
	code     int32 // 1 + the index of their access code in Config.AccessCodes; 0: none
	queueID  string
	access   string
	orderID  string
	amount   string
	seats    int8
	deadline time.Time
	payload  []byte
	place    int64  // the score the queueId carries, once known
	since    int64  // unix ns: waiting since
	personal int64  // unix ns: last per-person request
	epoch    uint32 // the scheduler's: which of its tasks is current
}

// A person refused phase_not_open joins again at the opening it names, a
// little later (up to phaseJitter), at most maxPhaseWaits times.
const (
	phaseJitter   = time.Second
	maxPhaseWaits = 5
)

// nearWait is the expected wait, in seconds, within which a waiting person
// reads the public state at the page's own spacing (see poll).
const nearWait = 60

func (c *customer) name() string { return "cust-" + strconv.Itoa(int(c.id)) }

type crowd struct {
	cfg     Config
	api     *api
	sched   *scheduler
	rnd     *lockedRand
	signer  *identity.HS256Signer // the identity provider's, for every person
	counts  Counts
	waiting atomic.Int64
	active  atomic.Int64
	held    atomic.Int64
	sold    atomic.Int64

	seatsMu   sync.Mutex
	seatCache map[string]*cachedSection
	sections  []string // the seated sections people pick in
	places    *places
	overview  overview // places.go
	soldOutAt atomic.Int64
	waitNanos atomic.Int64

	stateMu   sync.Mutex
	stateETag string
	state     queueapi.State
	stateAt   time.Time // when state was last read or revalidated

	paidMu     sync.Mutex
	paid       []string
	bestOrders []string

	bots botState // bots.go

	phases     phaseRecord // phases.go
	codeHashes []string    // of Config.AccessCodes
}

// cachedSection is the crowd's copy of one section's seat map.
type cachedSection struct {
	at    time.Time
	avail []string
	stale bool // a hold found seats taken that the copy shows available
	// taken are seats holds were refused as unavailable, and when: the
	// page marks them taken, and copies of the map from before then too.
	taken map[string]time.Time
	// fetch is closed when the refresh in flight ends; nil when there is
	// none. One customer refreshes a section at a time.
	fetch chan struct{}
}

// crowdGCPercent is the crowd's GOGC: the heap may grow to five times what
// is live before a collection.
const crowdGCPercent = 400

// Run drives the crowd until every customer is done or the deadline passes.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Profile.Validate(); err != nil {
		return nil, err
	}
	if cfg.Currency == "" {
		cfg.Currency = "EUR"
	}
	if cfg.StateURL == "" {
		cfg.StateURL = cfg.QueueURL
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = 30 * time.Minute
	}
	if cfg.TierClaim == "" {
		cfg.TierClaim = config.DefaultsOf[config.Identity]().TierClaim
	}
	if cfg.MemberTier == "" {
		cfg.MemberTier = DefaultMemberTier
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()
	// The crowd is the load generator and shares the cores with the
	// services it measures. Its heap (two million people at full scale) is
	// collected less often than by Go's default, trading memory (peak
	// 2.6-3.3 GB against 1.5 at full scale) for CPU: garbage collection
	// fell from 27% to 14% of the crowd's.
	defer debug.SetGCPercent(debug.SetGCPercent(crowdGCPercent))
	p := cfg.Profile
	dial := cfg.DialContext
	if dial == nil {
		dial = SourceDialer(&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second})
	}
	transport := &http.Transport{
		DialContext:         dial,
		MaxIdleConns:        p.Concurrency * 3,
		MaxIdleConnsPerHost: p.Concurrency,
		IdleConnTimeout:     90 * time.Second,
	}
	defer transport.CloseIdleConnections()
	nets, closeNets := networkClients(cfg, dial)
	defer closeNets()
	cr := &crowd{
		cfg:        cfg,
		api:        &api{http: &http.Client{Transport: transport, Timeout: 15 * time.Second}, queueURL: cfg.QueueURL, stateURL: cfg.StateURL, bookingURL: cfg.BookingURL, ticketsURL: cfg.TicketsURL, eventID: cfg.EventID, rec: newRecorder(), observe: cfg.Observe, nets: nets, refusals: newRefusals()},
		sched:      newScheduler(),
		rnd:        newLockedRand(cfg.Seed),
		signer:     identity.NewHS256Signer(cfg.IdentitySecret, cfg.IdentityIssuer, cfg.IdentityAudience),
		seatCache:  map[string]*cachedSection{},
		codeHashes: codeHashes(cfg.AccessCodes),
	}
	// The sections, asked until booking answers: a Service whose pods just
	// became ready may not route to them yet (kube-proxy syncs after).
	for attempt := 1; ; attempt++ {
		if m, ok := cr.api.seats(ctx, ""); ok && len(m.Sections) > 0 {
			cr.places = placesOf(cfg.Venue, m)
			cr.sections = cr.places.seated
			break
		}
		if attempt == 30 || retry.Sleep(ctx, time.Second) != nil {
			break
		}
	}
	if cr.places == nil {
		return nil, errors.New("loadtest: the booking service returned no sections in 30 s (is the event seeded?)")
	}
	start := time.Now()
	cr.schedule(start)
	stopWatch := cr.watch(ctx, start)
	stopFollow := cr.followState(ctx)
	waitBots := cr.runBots(ctx, start)
	cr.sched.run(ctx, p.Concurrency, cr.step)
	waitBots()
	stopFollow()
	stopWatch()
	res := &Result{Counts: cr.snapshotCounts(), Endpoints: cr.api.rec.snapshot(), Duration: time.Since(start), PaidOrders: cr.paid, BestOrders: cr.bestOrders}
	res.Bots = cr.botReport(res.Counts)
	cr.phaseResult(res)
	if at := cr.soldOutAt.Load(); at > 0 {
		res.SoldOutAt = time.Duration(at)
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return res, fmt.Errorf("loadtest: deadline of %s reached before every customer finished", cfg.Deadline)
	}
	return res, nil
}

// schedule assigns behaviours and join times: the pre-queue joins over the
// time before opening (or at once if that has passed), the rest over the
// join window after opening.
func (cr *crowd) schedule(now time.Time) {
	p := cr.cfg.Profile
	open := cr.cfg.SalesOpenAt
	if open.IsZero() {
		open = now
	}
	preWindow := time.Until(open)
	cr.counts.Customers = int64(p.Customers)
	codes := 0
	for i := 0; i < p.Customers; i++ {
		c := &customer{id: int32(i + 1), want: int8(1 + cr.rnd.IntN(p.MaxSeats))}
		c.ask, c.wheel = cr.askOf(c.want)
		if p.Members > 0 || p.CodeHolders > 0 {
			switch u := cr.rnd.Float64(); {
			case u < p.Members:
				c.member = true
			case u < p.Members+p.CodeHolders && codes < len(cr.cfg.AccessCodes):
				codes++
				c.code = int32(codes)
			}
		}
		u := cr.rnd.Float64()
		switch {
		case u < p.Abandon:
			c.kind = abandoner
		case u < p.Abandon+p.NoClaim:
			c.kind = noClaimer
		default:
			v := cr.rnd.Float64()
			switch {
			case v < p.HoldExpire:
				c.kind = holdExpirer
			case v < p.HoldExpire+p.PayFail:
				c.kind = payFailer
			}
		}
		var at time.Time
		if cr.rnd.Float64() < p.PreQueue && preWindow > 0 {
			at = now.Add(time.Duration(cr.rnd.Float64() * float64(preWindow) * 0.9))
		} else {
			at = open.Add(time.Duration(cr.rnd.Float64() * float64(p.JoinWindow)))
		}
		cr.sched.add(c, at)
	}
}

// every runs fn every interval in the background until ctx ends or the
// returned stop is called; stop returns once fn has.
func every(ctx context.Context, interval time.Duration, fn func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			fn(ctx)
		}
	}()
	return func() { cancel(); <-done }
}

// watch samples the queue's stats and reports progress until stopped.
func (cr *crowd) watch(ctx context.Context, start time.Time) func() {
	var lastReq uint64
	last := time.Now()
	return every(ctx, 500*time.Millisecond, func(wctx context.Context) {
		st, _ := cr.api.stats(wctx)
		if a, ok := st["active"].(float64); ok && int64(a) > atomic.LoadInt64(&cr.counts.MaxActiveSample) {
			atomic.StoreInt64(&cr.counts.MaxActiveSample, int64(a))
		}
		if so, _ := st["soldOut"].(bool); so && cr.soldOutAt.Load() == 0 {
			cr.soldOutAt.Store(int64(time.Since(cr.openTime(start))))
		}
		if cr.cfg.Progress != nil {
			req := cr.api.rec.requests()
			now := time.Now()
			cr.cfg.Progress(Progress{
				Elapsed: now.Sub(start), Waiting: cr.waiting.Load(), Active: cr.active.Load(),
				Held: cr.held.Load(), Sold: cr.sold.Load(), Requests: req,
				ReqPerSec: float64(req-lastReq) / now.Sub(last).Seconds(), QueueStats: st,
			})
			lastReq, last = req, now
		}
	})
}

func (cr *crowd) openTime(start time.Time) time.Time {
	if cr.cfg.SalesOpenAt.IsZero() {
		return start
	}
	return cr.cfg.SalesOpenAt
}

func (cr *crowd) snapshotCounts() Counts {
	c := &cr.counts
	load := func(p *int64) int64 { return atomic.LoadInt64(p) }
	return Counts{
		Customers: c.Customers, Joined: load(&c.Joined), JoinedPreQueue: load(&c.JoinedPreQueue),
		Abandoned: load(&c.Abandoned), Admitted: load(&c.Admitted), NeverClaimed: load(&c.NeverClaimed),
		SoldOutSeen: load(&c.SoldOutSeen), HoldsOK: load(&c.HoldsOK), HoldConflicts: load(&c.HoldConflicts),
		HoldsAbandoned: load(&c.HoldsAbandoned), PaymentsSent: load(&c.PaymentsSent), PaymentsFailed: load(&c.PaymentsFailed),
		WebhooksTwice: load(&c.WebhooksTwice), SeatsPaidFor: load(&c.SeatsPaidFor), TicketsSeen: load(&c.TicketsSeen),
		GaveUpNoSeats: load(&c.GaveUpNoSeats), MaxActiveSample: load(&c.MaxActiveSample),
		WaitingSeconds: time.Duration(cr.waitNanos.Load()).Seconds(), StateReads: load(&c.StateReads), PersonalPolls: load(&c.PersonalPolls), EdgeReads: load(&c.EdgeReads),
		PlacesLost: load(&c.PlacesLost), Rejoined: load(&c.Rejoined), RejoinFailed: load(&c.RejoinFailed),
		PhaseNotOpen: load(&c.PhaseNotOpen), Holds: c.Holds.load(),
	}
}

func inc(p *int64) { atomic.AddInt64(p, 1) }

func (cr *crowd) identityToken(c *customer) string {
	var claims []identity.Claim
	if c.member && cr.cfg.TierClaim != "" {
		claims = append(claims, identity.Claim{Name: cr.cfg.TierClaim, Value: cr.cfg.MemberTier})
	}
	if cr.cfg.EmailClaim != "" {
		claims = append(claims, identity.Claim{Name: cr.cfg.EmailClaim, Value: BuyerEmail(c.name())})
	}
	return cr.signer.SignWith(c.name(), time.Hour, claims...)
}

// BuyerEmail is the address of the person named name in a simulated
// crowd (a reserved domain: nothing leaves a local mail server).
func BuyerEmail(name string) string { return name + "@buyers.example" }

// later schedules c's next step after d, obeying the profile's lower bound on polls.
func (cr *crowd) later(c *customer, s step, d time.Duration) {
	c.next = s
	cr.sched.at(c, time.Now().Add(d))
}

func (cr *crowd) finish(c *customer) {
	c.queueID, c.access, c.payload = "", "", nil
	cr.sched.done()
}

// step runs one action of c.
func (cr *crowd) step(ctx context.Context, c *customer) {
	if ctx.Err() != nil {
		cr.finish(c)
		return
	}
	ctx = cr.api.onNetwork(ctx, cr.networkOf(c))
	switch c.next {
	case stepJoin:
		cr.join(ctx, c)
	case stepPoll:
		cr.poll(ctx, c)
	case stepChoose:
		cr.choose(ctx, c)
	case stepPay, stepWebhookAgain:
		cr.pay(ctx, c)
	case stepTickets:
		cr.readTickets(ctx, c)
	}
}

func (cr *crowd) retry(c *customer, r result, s step) {
	c.tries++
	if c.tries > 20 {
		if c.lost {
			inc(&cr.counts.RejoinFailed)
		}
		cr.finish(c)
		return
	}
	d := r.retryAfter
	if d <= 0 {
		d = time.Duration(200*c.tries) * time.Millisecond
	}
	cr.later(c, s, d)
}

func (cr *crowd) join(ctx context.Context, c *customer) {
	j, r := cr.joinAsPage(ctx, c)
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		if r.status == 0 || r.status >= 500 || r.status == http.StatusTooManyRequests {
			cr.retry(c, r, stepJoin)
			return
		}
		if at, ok := phaseNotOpen(r); ok && c.waits < maxPhaseWaits {
			// Too early for their phase: the page counts down to the
			// opening it names and joins then, a little spread.
			c.waits++
			inc(&cr.counts.PhaseNotOpen)
			cr.later(c, stepJoin, max(time.Until(at), 0)+time.Duration(cr.rnd.Float64()*float64(phaseJitter)))
			return
		}
		if r.status == http.StatusForbidden || r.status == http.StatusConflict {
			cr.noteCodeJoin(c, false, errorCode(r))
		}
		if c.lost {
			inc(&cr.counts.RejoinFailed)
		}
		cr.finish(c)
		return
	}
	c.tries = 0
	c.queueID = j.QueueID
	if !c.lost {
		cr.noteCodeJoin(c, true, "")
	}
	cr.notePlaced(c, j.Queue, !c.lost)
	if c.lost {
		c.lost = false
		inc(&cr.counts.Rejoined)
		cr.waiting.Add(1)
		c.place = j.Place
		c.since = time.Now().UnixNano()
		c.personal = c.since
		cr.later(c, stepPoll, cr.pollDelay(j.PollAfterSeconds, r.retryAfter))
		return
	}
	inc(&cr.counts.Joined)
	if time.Now().Before(cr.cfg.SalesOpenAt) {
		inc(&cr.counts.JoinedPreQueue)
	}
	if j.Status == queueapi.StatusSoldOut {
		// The page says so at once and stops.
		inc(&cr.counts.SoldOutSeen)
		cr.finish(c)
		return
	}
	cr.waiting.Add(1)
	c.place = j.Place
	c.since = time.Now().UnixNano()
	c.personal = c.since
	cr.later(c, stepPoll, cr.pollDelay(j.PollAfterSeconds, r.retryAfter))
}

// stopWaiting ends c's time in the queue.
func (cr *crowd) stopWaiting(c *customer) {
	cr.waiting.Add(-1)
	cr.waitNanos.Add(time.Now().UnixNano() - c.since)
}

func (cr *crowd) pollDelay(advised int, retryAfter time.Duration) time.Duration {
	d := time.Duration(advised) * time.Second
	if retryAfter > d {
		d = retryAfter
	}
	if d < cr.cfg.Profile.MinPoll {
		d = cr.cfg.Profile.MinPoll
	}
	if d <= 0 {
		d = time.Second
	}
	return d
}

func (cr *crowd) poll(ctx context.Context, c *customer) {
	// Some people walk away: abandoners leave explicitly after a poll or
	// two; no-claimers just stop polling and never pick up the token.
	if c.kind == abandoner && c.polls >= 1 {
		cr.api.leave(ctx, cr.identityToken(c), c.queueID)
		inc(&cr.counts.Abandoned)
		cr.stopWaiting(c)
		cr.finish(c)
		return
	}
	if c.kind == noClaimer && c.polls >= 1 {
		inc(&cr.counts.NeverClaimed)
		cr.stopWaiting(c)
		cr.finish(c)
		return
	}
	st, r := cr.readState(ctx)
	if r.status != http.StatusOK {
		if r.status == 0 || r.status >= 500 {
			cr.retry(c, r, stepPoll)
			return
		}
		cr.stopWaiting(c)
		cr.finish(c)
		return
	}
	// In a sale with phases, the page reads its own queue's figures.
	st = cr.view(st, c)
	c.tries = 0
	c.polls++
	now := time.Now()
	switch {
	case st.SoldOut:
		inc(&cr.counts.SoldOutSeen)
		cr.stopWaiting(c)
		cr.finish(c)
	case !st.SalesOpen:
		var openAt time.Time // none announced: poll again in a second
		if st.SalesOpenAt != nil {
			openAt = *st.SalesOpenAt
		}
		cr.later(c, stepPoll, cr.pollDelay(int(min(max(time.Until(openAt).Seconds(), 1), 15)), 0))
	case c.place == 0 || st.Watermark >= c.place || now.UnixNano()-c.personal >= int64(queueapi.Heartbeat):
		// Our turn (or a heartbeat): only now ask the per-person endpoint.
		cr.personalPoll(ctx, c)
	default:
		wait := float64(st.Ahead(c.place)) / max(st.AdmissionRate, 0.1)
		d := cr.pollDelay(queueapi.PollAfter(wait), 0)
		if wait <= nearWait {
			cr.later(c, stepPoll, d)
			return
		}
		// Far back, the page's reads every d reach only the CDN's edge and
		// change nothing until the turn nears or the heartbeat is due: the
		// person sleeps until then (wakeNear), the reads counted as made
		// (at most until the heartbeat).
		atomic.AddInt64(&cr.counts.EdgeReads, int64(min(wait, queueapi.Heartbeat.Seconds())/d.Seconds()))
		c.next = stepPoll
		cr.sched.park(c, c.qi, c.place, time.Unix(0, c.personal).Add(queueapi.Heartbeat))
	}
}

// wakeNear wakes the parked people whose turn st says is near (all of
// them once it is sold out), each at a moment within the spacing their
// page reads the state at, as it would see the state then; in a sale with
// phases, queue by queue with each one's figures.
func (cr *crowd) wakeNear(st queueapi.State) {
	if len(st.Queues) == 0 {
		cr.wakeNearIn(0, st)
		return
	}
	for _, q := range st.Queues {
		cr.wakeNearIn(cr.phases.queueIndex(q.Name), queueView(st, q))
	}
}

func (cr *crowd) wakeNearIn(qi uint8, st queueapi.State) {
	rate := max(st.AdmissionRate, 0.1)
	spacing := cr.pollDelay(queueapi.PollAfter(nearWait), 0)
	cr.sched.wakeUpTo(qi,
		func(place int64) bool { return st.SoldOut || float64(st.Ahead(place))/rate <= nearWait },
		func() time.Duration { return time.Duration(cr.rnd.Float64() * float64(spacing)) })
}

// followState reads the public state once per max-age, as the CDN's fills
// do, and wakes the parked people it brings near, until ctx ends.
func (cr *crowd) followState(ctx context.Context) func() {
	return every(ctx, queueapi.StateMaxAge, func(ctx context.Context) {
		if st, r := cr.readState(ctx); r.status == http.StatusOK {
			now := time.Now()
			cr.watchEarly(st, now)
			cr.sample(st, now)
			cr.wakeNear(st)
		}
	})
}

// readState reads the public state as a browser behind a CDN does. A CDN
// edge answers a copy younger than the state's max-age without asking
// anyone, so the crowd shares one copy: a read within the max-age is
// answered from it (an edge read, no request), and one read per max-age
// goes through the cache in front of the queue, revalidating with its
// ETag. Two million waiting people reading every few seconds would
// otherwise be more requests than the simulator can make, and people
// would learn of their turn late.
func (cr *crowd) readState(ctx context.Context) (queueapi.State, result) {
	cr.stateMu.Lock()
	if time.Since(cr.stateAt) < queueapi.StateMaxAge {
		defer cr.stateMu.Unlock()
		inc(&cr.counts.EdgeReads)
		return cr.state, result{status: http.StatusOK}
	}
	etag := cr.stateETag
	cr.stateMu.Unlock()
	r := cr.api.state(ctx, etag)
	inc(&cr.counts.StateReads)
	cr.stateMu.Lock()
	defer cr.stateMu.Unlock()
	switch r.status {
	case http.StatusNotModified:
		r.status = http.StatusOK
		cr.stateAt = time.Now()
	case http.StatusOK:
		var st queueapi.State
		if err := json.Unmarshal(r.body, &st); err != nil {
			return st, result{status: 0}
		}
		cr.state, cr.stateETag, cr.stateAt = st, r.etag, time.Now()
	}
	return cr.state, r
}

// personalPoll asks the customer's own endpoint: the claim of an admitted
// place, or a heartbeat.
func (cr *crowd) personalPoll(ctx context.Context, c *customer) {
	c.personal = time.Now().UnixNano()
	inc(&cr.counts.PersonalPolls)
	p, r := cr.api.poll(ctx, cr.identityToken(c), c.queueID)
	if r.status != http.StatusOK {
		if r.status == 0 || r.status >= 500 {
			cr.retry(c, r, stepPoll)
			return
		}
		cr.stopWaiting(c)
		if r.status == http.StatusNotFound {
			// The queue lost the place (a store restarted without its
			// data): join again.
			cr.rejoin(c)
			return
		}
		cr.finish(c)
		return
	}
	c.tries = 0
	if p.Place > 0 {
		c.place = p.Place
	}
	if p.Queue != "" && c.qi == 0 {
		c.qi = cr.phases.queueIndex(p.Queue)
	}
	switch p.Status {
	case queueapi.StatusAdmitted:
		if p.AccessToken == "" {
			cr.later(c, stepPoll, time.Second)
			return
		}
		c.access = p.AccessToken
		inc(&cr.counts.Admitted)
		cr.noteAdmitted(c)
		cr.stopWaiting(c)
		cr.active.Add(1)
		c.tries = 0
		cr.later(c, stepChoose, cr.cfg.Profile.ThinkTime)
	case queueapi.StatusWaiting, queueapi.StatusPaused:
		cr.later(c, stepPoll, cr.pollDelay(p.PollAfterSeconds, r.retryAfter))
	case queueapi.StatusSoldOut:
		inc(&cr.counts.SoldOutSeen)
		cr.stopWaiting(c)
		cr.finish(c)
	default: // expired, closed
		cr.stopWaiting(c)
		cr.finish(c)
	}
}

// askOf draws how a customer of want places asks for them (Profile's
// BestAvailable, Standing and Wheelchair).
func (cr *crowd) askOf(want int8) (ask, bool) {
	p := cr.cfg.Profile
	if cr.rnd.Float64() >= p.BestAvailable {
		return askPicked, false
	}
	if len(cr.places.standing) > 0 && cr.rnd.Float64() < p.Standing {
		return askStanding, false
	}
	return askBest, want >= 2 && cr.rnd.Float64() < p.Wheelchair
}

// choose holds places as c asks for them, choosing again after a 409.
func (cr *crowd) choose(ctx context.Context, c *customer) {
	if c.ask == askPicked {
		cr.choosePicked(ctx, c)
		return
	}
	cr.chooseBest(ctx, c)
}

// choosePicked picks seats from the (cached) seat map and holds them.
func (cr *crowd) choosePicked(ctx context.Context, c *customer) {
	if len(cr.sections) == 0 {
		cr.giveUp(ctx, c)
		return
	}
	section := cr.sections[cr.rnd.IntN(len(cr.sections))]
	seats := cr.pick(ctx, section, int(c.want))
	if len(seats) == 0 {
		// Try another section before giving up.
		for _, s := range cr.sections {
			if seats = cr.pick(ctx, s, int(c.want)); len(seats) > 0 {
				section = s // the copy a conflict proves stale
				break
			}
		}
	}
	if len(seats) == 0 {
		cr.giveUp(ctx, c)
		return
	}
	counts := &cr.counts.Holds.Picked
	inc(&counts.Requests)
	h, rf, r := cr.api.hold(ctx, c.access, cr.holdIDToken(c), seats)
	switch {
	case r.status == http.StatusCreated || r.status == http.StatusOK:
		inc(&counts.Held)
		cr.tookSeats(seats)
		cr.holding(c, h)
	case r.status == http.StatusConflict:
		inc(&cr.counts.HoldConflicts)
		counts.refused(rf, 0)
		// The picked seats already left the cache; a conflict means it
		// is stale.
		cr.invalidate(section, rf.Unavailable)
		cr.chooseAgain(ctx, c)
	default:
		cr.holdFailed(ctx, c, r)
	}
}

// holdIDToken is the identity token a hold carries ("" for none): with it
// booking keeps the buyer's address with the order.
func (cr *crowd) holdIDToken(c *customer) string {
	if cr.cfg.EmailClaim == "" {
		return ""
	}
	return cr.identityToken(c)
}

// holding goes on from c's hold h: to pay, or to let it expire.
func (cr *crowd) holding(c *customer, h holdResponse) {
	inc(&cr.counts.HoldsOK)
	n := int64(len(h.Seats))
	c.orderID, c.amount, c.seats = h.OrderID, h.Amount, int8(n)
	cr.held.Add(n)
	if c.kind == holdExpirer {
		inc(&cr.counts.HoldsAbandoned)
		// The seats stay held until the hold expires, and count as held
		// until then.
		if exp, err := time.Parse(time.RFC3339Nano, h.ExpiresAt); err == nil {
			time.AfterFunc(time.Until(exp), func() { cr.held.Add(-n) })
		} else {
			cr.held.Add(-n)
		}
		cr.active.Add(-1)
		cr.finish(c)
		return
	}
	c.tries = 0
	cr.later(c, stepPay, cr.cfg.Profile.ThinkTime)
}

// chooseAgain has c choose again after a 409, up to Profile.SeatRetries
// times.
func (cr *crowd) chooseAgain(ctx context.Context, c *customer) {
	c.tries++
	if int(c.tries) > cr.cfg.Profile.SeatRetries {
		cr.giveUp(ctx, c)
		return
	}
	cr.later(c, stepChoose, 50*time.Millisecond)
}

// holdFailed handles a hold's answer other than 2xx and 409.
func (cr *crowd) holdFailed(ctx context.Context, c *customer, r result) {
	switch {
	case r.status == 0 || r.status >= 500:
		cr.retry(c, r, stepChoose)
	case r.status == http.StatusForbidden:
		// The session ended before its time (its store lost it): rejoin.
		cr.active.Add(-1)
		cr.rejoin(c)
	default:
		cr.active.Add(-1)
		cr.finish(c)
	}
}

// giveUp ends an admitted customer who found no seats: they leave (DELETE
// their place), so their slot goes to the next in line at once, not when
// the session expires, and the admitter does not count them as choosing.
func (cr *crowd) giveUp(ctx context.Context, c *customer) {
	inc(&cr.counts.GaveUpNoSeats)
	cr.active.Add(-1)
	cr.api.leave(ctx, cr.identityToken(c), c.queueID)
	cr.finish(c)
}

// rejoin sends a customer who lost their place or session back to join,
// at most twice.
func (cr *crowd) rejoin(c *customer) {
	inc(&cr.counts.PlacesLost)
	if c.rejoins >= 2 {
		cr.finish(c)
		return
	}
	c.rejoins++
	c.lost, c.queueID, c.access, c.tries = true, "", "", 0
	cr.later(c, stepJoin, 500*time.Millisecond)
}

// pick returns up to n seats believed available, from a copy of the seat map
// shared by all customers and refreshed about once a second, as a CDN would
// serve it: one customer refreshes a section while the others go on
// picking from the copy, and wait for the refresh only when the copy has
// no seat left.
func (cr *crowd) pick(ctx context.Context, section string, n int) []string {
	cr.seatsMu.Lock()
	defer cr.seatsMu.Unlock()
	cs := cr.seatCache[section]
	if cs == nil {
		cs = &cachedSection{}
		cr.seatCache[section] = cs
	}
	if cs.fetch == nil && (cs.stale || time.Since(cs.at) > time.Second) {
		cr.refresh(ctx, section, cs)
	}
	for len(cs.avail) == 0 && cs.fetch != nil {
		done := cs.fetch
		cr.seatsMu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
		cr.seatsMu.Lock()
		if ctx.Err() != nil {
			return nil
		}
	}
	if len(cs.avail) == 0 {
		return nil
	}
	n = min(n, len(cs.avail))
	// Adjacent seats from a random start, like people pick.
	i := cr.rnd.IntN(len(cs.avail) - n + 1)
	out := append([]string(nil), cs.avail[i:i+n]...)
	// Assume we get them: the next customer picks elsewhere until refresh.
	cs.avail = append(cs.avail[:i:i], cs.avail[i+n:]...)
	return out
}

// refresh reads section's seat map into cs without holding seatsMu, which
// it is called and returns with.
func (cr *crowd) refresh(ctx context.Context, section string, cs *cachedSection) {
	done := make(chan struct{})
	cs.fetch = done
	cr.seatsMu.Unlock()
	m, ok := cr.api.seats(ctx, section)
	var avail []string
	if ok {
		avail = m.available(section, cr.places)
	}
	cr.seatsMu.Lock()
	if ok {
		cs.at, cs.avail, cs.stale = time.Now(), avail, false
		for id, at := range cs.taken {
			if time.Since(at) > recentFor {
				delete(cs.taken, id)
			}
		}
		if len(cs.taken) > 0 {
			cs.avail = slices.DeleteFunc(cs.avail, func(id string) bool {
				at, ok := cs.taken[id]
				return ok && at.After(m.AsOf)
			})
		}
	}
	cs.fetch = nil
	close(done)
}

// invalidate makes the next pick in section refresh the seat map, which
// leaves out the seats taken (a refusal's), unless it is newer.
func (cr *crowd) invalidate(section string, taken []string) {
	cr.seatsMu.Lock()
	defer cr.seatsMu.Unlock()
	cs := cr.seatCache[section]
	if cs == nil {
		return
	}
	cs.stale = true
	if len(taken) > 0 && cs.taken == nil {
		cs.taken = map[string]time.Time{}
	}
	now := time.Now()
	for _, id := range taken {
		cs.taken[id] = now
	}
}

// cardFingerprint is the card a person pays with: one card each, as the
// provider's fingerprint of it (booking limits seats per card too).
func cardFingerprint(id int32) string { return "card-" + strconv.Itoa(int(id)) }

// pay plays the payment provider: it calls the webhook, sometimes late,
// sometimes twice.
func (cr *crowd) pay(ctx context.Context, c *customer) {
	p := cr.cfg.Profile
	if c.next == stepPay && c.payload == nil {
		if cr.rnd.Float64() < p.WebhookLate {
			c.payload = []byte{} // marks "decided", sent on the next step
			cr.later(c, stepPay, time.Duration(1000+cr.rnd.IntN(2000))*time.Millisecond)
			return
		}
	}
	status := "succeeded"
	if c.kind == payFailer {
		status = "failed"
	}
	body, _ := json.Marshal(map[string]any{
		"orderId": c.orderID, "paymentId": "pay-" + c.orderID, "amount": c.amount,
		"currency": cr.cfg.Currency, "status": status, "cardFingerprint": cardFingerprint(c.id),
	})
	r := cr.api.webhook(ctx, body, webhooksig.Sign(cr.cfg.WebhookSecret, time.Now(), body))
	if r.status == 0 || r.status >= 500 {
		cr.retry(c, r, c.next)
		return
	}
	if status == "succeeded" && c.next == stepPay && r.status/100 == 2 {
		cr.paidMu.Lock()
		cr.paid = append(cr.paid, c.orderID)
		cr.paidMu.Unlock()
	}
	if c.next == stepWebhookAgain {
		inc(&cr.counts.WebhooksTwice)
		cr.later(c, stepTickets, 500*time.Millisecond)
		return
	}
	if status == "failed" {
		inc(&cr.counts.PaymentsFailed)
		cr.held.Add(-int64(c.seats))
		cr.active.Add(-1)
		cr.finish(c)
		return
	}
	inc(&cr.counts.PaymentsSent)
	atomic.AddInt64(&cr.counts.SeatsPaidFor, int64(c.seats))
	cr.notePaid(c, int64(c.seats))
	cr.held.Add(-int64(c.seats))
	cr.sold.Add(int64(c.seats))
	cr.active.Add(-1)
	c.deadline = time.Now().Add(p.TicketPollFor)
	if cr.rnd.Float64() < p.WebhookTwice {
		cr.later(c, stepWebhookAgain, time.Duration(100+cr.rnd.IntN(900))*time.Millisecond)
		return
	}
	cr.later(c, stepTickets, 500*time.Millisecond)
}

func (cr *crowd) readTickets(ctx context.Context, c *customer) {
	n, r := cr.api.tickets(ctx, cr.identityToken(c), c.orderID)
	if r.status == http.StatusOK && n >= int(c.seats) {
		atomic.AddInt64(&cr.counts.TicketsSeen, int64(n))
		cr.finish(c)
		return
	}
	if time.Now().After(c.deadline) {
		cr.finish(c)
		return
	}
	cr.later(c, stepTickets, ticketPoll)
}

// ticketPoll is how often a buyer asks for their tickets until they are
// issued, as the order page does.
const ticketPoll = 2 * time.Second

// lockedRand is a seeded random source safe for concurrent use.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newLockedRand(seed uint64) *lockedRand {
	return &lockedRand{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (l *lockedRand) IntN(n int) int { l.mu.Lock(); defer l.mu.Unlock(); return l.r.IntN(n) }
func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}
