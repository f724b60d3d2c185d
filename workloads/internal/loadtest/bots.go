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
	"encoding/json"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/pow"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// Bots are scripted scalper accounts: many identities run by one
// operator, from one client network, paying with one card. Each joins at
// the times people do (so any advantage would come from its behaviour,
// not from arriving first), solves the proof of work natively on every
// core, sends its join several times at once, polls its own endpoint
// JoinFlood times faster than the page, and holds the most seats the
// moment it is admitted. A bot obeys a 429's Retry-After (it is rude, not
// a denial of service) and gives up on any other refusal.
type Bots struct {
	Count     int           // bot identities (0: none)
	PollEvery time.Duration // between a bot's polls of its own endpoint (default 50ms: 20 a second)
	JoinFlood int           // joins a bot sends back to back (default 5)
	Workers   int           // the bots' own concurrency (default a quarter of the crowd's)
	Card      string        // the card every bot pays with (default "bot-card")
}

// botNetwork is the index of the bots' client network: every bot comes
// from the same /24.
const botNetwork = -1

func (b Bots) withDefaults(p Profile) Bots {
	if b.PollEvery <= 0 {
		b.PollEvery = 50 * time.Millisecond
	}
	if b.JoinFlood <= 0 {
		b.JoinFlood = 5
	}
	if b.Workers <= 0 {
		b.Workers = max(8, p.Concurrency/4)
	}
	if b.Card == "" {
		b.Card = "bot-card"
	}
	return b
}

// KindCounts are the outcomes of the people or of the bots.
type KindCounts struct {
	Identities   int64 `json:"identities"`
	Joined       int64 `json:"joined"`   // got a place
	Admitted     int64 `json:"admitted"` // picked up an access token
	HoldsOK      int64 `json:"holdsOk"`
	SeatsPaidFor int64 `json:"seatsPaidFor"` // in payments booking kept (not refunded)
	Requests     int64 `json:"requests"`
}

// Refusal counts the answers one defence (or rule) gave to one kind of
// client on one endpoint: the error code, with the limit's scope for 429s.
type Refusal struct {
	Kind     string `json:"kind"` // "people" or "bots"
	Endpoint string `json:"endpoint"`
	Status   int    `json:"status"`
	Reason   string `json:"reason"`
	Count    int64  `json:"count"`
}

// BotReport compares the bots with the people.
type BotReport struct {
	People  KindCounts `json:"people"`
	Bots    KindCounts `json:"bots"`
	Refused []Refusal  `json:"refused"`
}

// botState is the crowd's bots.
type botState struct {
	cfg    Bots
	sched  *scheduler
	counts KindCounts
	// powSeen: the bots' operator learned that joins need a proof of
	// work, so its bots fetch a challenge before their first join.
	powSeen atomic.Bool
}

// ---- client networks ----

// networkAddr is the loopback source address of network i: 127.<10 +
// i/256>.<i%256>.1, a /24 of its own (Linux routes all of 127/8 to the
// loopback interface, so no setup or privilege is needed), for i up to
// 62,719. The bots' network is 127.255.0.1.
func networkAddr(i int) net.IP {
	if i == botNetwork {
		return net.IPv4(127, 255, 0, 1)
	}
	return net.IPv4(127, byte(10+i/256), byte(i%256), 1)
}

type sourceKey struct{}

// WithSource asks a Config.DialContext to dial from src.
func WithSource(ctx context.Context, src net.IP) context.Context {
	return context.WithValue(ctx, sourceKey{}, src)
}

// Source is the address a dial of ctx should come from (nil: any).
func Source(ctx context.Context) net.IP {
	ip, _ := ctx.Value(sourceKey{}).(net.IP)
	return ip
}

// networkClients returns one HTTP client per client network (the people's
// cfg.Networks, then the bots'), each dialing from its network's address,
// and a function that closes their idle connections. None without either.
func networkClients(cfg Config, dial func(ctx context.Context, network, addr string) (net.Conn, error)) ([]*http.Client, func()) {
	n := cfg.Networks
	if n <= 0 && cfg.Bots.Count <= 0 {
		return nil, func() {}
	}
	perNet := max(4, 2*cfg.Profile.Concurrency/max(n, 1))
	var transports []*http.Transport
	var clients []*http.Client
	for i := 0; i <= n; i++ {
		idx := i
		if i == n {
			idx = botNetwork
		}
		src := networkAddr(idx)
		tr := &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return dial(WithSource(ctx, src), network, addr)
			},
			MaxIdleConns: perNet, MaxIdleConnsPerHost: perNet, IdleConnTimeout: 90 * time.Second,
		}
		transports = append(transports, tr)
		clients = append(clients, &http.Client{Transport: tr, Timeout: 15 * time.Second})
	}
	return clients, func() {
		for _, t := range transports {
			t.CloseIdleConnections()
		}
	}
}

// SourceDialer dials from Source(ctx) when the context names one.
func SourceDialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if src := Source(ctx); src != nil {
			dd := *d
			dd.LocalAddr = &net.TCPAddr{IP: src}
			return dd.DialContext(ctx, network, addr)
		}
		return d.DialContext(ctx, network, addr)
	}
}

type networkKey struct{}

// onNetwork makes the requests of ctx go out from network i (botNetwork:
// the bots'); without network clients it changes nothing.
func (a *api) onNetwork(ctx context.Context, i int) context.Context {
	if len(a.nets) == 0 {
		return ctx
	}
	return context.WithValue(ctx, networkKey{}, i)
}

// client is the HTTP client of ctx's network.
func (a *api) client(ctx context.Context) *http.Client {
	if i, ok := ctx.Value(networkKey{}).(int); ok && len(a.nets) > 0 {
		if i == botNetwork {
			return a.nets[len(a.nets)-1]
		}
		if n := len(a.nets) - 1; n > 0 {
			return a.nets[i%n]
		}
	}
	return a.http
}

// networkOf is the network a person comes from.
func (cr *crowd) networkOf(c *customer) int {
	if c.bot {
		return botNetwork
	}
	if cr.cfg.Networks <= 0 {
		return 0
	}
	return int(c.id) % cr.cfg.Networks
}

// ---- refusals ----

type refusalKey struct {
	endpoint string
	status   int
	reason   string
}

// refusals counts the 403, 409 and 429 answers by endpoint and reason.
type refusals struct {
	mu sync.Mutex
	n  map[refusalKey]int64
}

func newRefusals() *refusals { return &refusals{n: map[refusalKey]int64{}} }

func (r *refusals) note(endpoint string, status int, body []byte) {
	if r == nil || (status != http.StatusForbidden && status != http.StatusConflict && status != http.StatusTooManyRequests) {
		return
	}
	var e struct {
		Error struct {
			Code  string `json:"code"`
			Scope string `json:"scope"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	reason := e.Error.Code
	if e.Error.Scope != "" {
		reason += " (" + e.Error.Scope + ")"
	}
	r.add(endpoint, status, reason)
}

// add counts one refusal of endpoint for reason.
func (r *refusals) add(endpoint string, status int, reason string) {
	r.mu.Lock()
	r.n[refusalKey{endpoint, status, reason}]++
	r.mu.Unlock()
}

func (r *refusals) list() []Refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Refusal, 0, len(r.n))
	for k, n := range r.n {
		kind, ep := "people", k.endpoint
		if rest, ok := strings.CutPrefix(ep, "bot "); ok {
			kind, ep = "bots", rest
		}
		out = append(out, Refusal{Kind: kind, Endpoint: ep, Status: k.status, Reason: k.reason, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind > b.Kind // people first
		}
		if a.Endpoint != b.Endpoint {
			return a.Endpoint < b.Endpoint
		}
		return a.Reason < b.Reason
	})
	return out
}

// ---- the proof of work, as the page and as a bot ----

func isPowRefusal(r result) bool {
	if r.status != http.StatusForbidden {
		return false
	}
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return strings.HasPrefix(e.Error.Code, "pow_")
}

func (a *api) joinWith(ctx context.Context, name, idToken string, body []byte) (queueapi.Place, result) {
	r := a.do(ctx, name, http.MethodPost, a.eventPath(a.queueURL)+"/queue", body, bearer(idToken))
	var j queueapi.Place
	if r.status == http.StatusOK || r.status == http.StatusCreated {
		_ = json.Unmarshal(r.body, &j)
	}
	return j, r
}

// solvedBody fetches a challenge and solves it with workers goroutines
// (0: every core, as a bot; 1: as the page's one worker), returning the
// join's body.
func (a *api) solvedBody(ctx context.Context, name, idToken string, workers int) ([]byte, bool) {
	return a.solvedBodyWith(ctx, name, idToken, workers, "")
}

// solvedBodyWith is solvedBody for a join with an access code ("": none).
func (a *api) solvedBodyWith(ctx context.Context, name, idToken string, workers int, code string) ([]byte, bool) {
	r := a.do(ctx, name, http.MethodGet, a.eventPath(a.queueURL)+"/queue/challenge", nil, bearer(idToken))
	if r.status != http.StatusOK {
		return nil, false
	}
	var c pow.ChallengeView
	if json.Unmarshal(r.body, &c) != nil {
		return nil, false
	}
	nonce, _, err := pow.Solve(ctx, c.Challenge, c.Difficulty, workers)
	if err != nil {
		return nil, false
	}
	m := map[string]any{"pow": pow.Solution{Challenge: c.Challenge, Nonce: nonce}}
	if code != "" {
		m["code"] = code
	}
	body, _ := json.Marshal(m)
	return body, true
}

// joinAsPage joins as the waiting page does: a 403 pow_required (or
// pow_invalid) makes it fetch a challenge, solve it (one worker) and join
// again with the solution.
func (cr *crowd) joinAsPage(ctx context.Context, c *customer) (queueapi.Place, result) {
	tok := cr.identityToken(c)
	code := ""
	if c.code > 0 {
		code = cr.cfg.AccessCodes[c.code-1]
	}
	var j queueapi.Place
	var r result
	if code == "" {
		j, r = cr.api.join(ctx, tok)
	} else {
		body, _ := json.Marshal(map[string]string{"code": code})
		j, r = cr.api.joinWith(ctx, "join", tok, body)
	}
	for tries := 0; isPowRefusal(r) && tries < 3; tries++ {
		body, ok := cr.api.solvedBodyWith(ctx, "challenge", tok, 1, code)
		if !ok {
			break
		}
		j, r = cr.api.joinWith(ctx, "join", tok, body)
	}
	return j, r
}

// ---- the bots ----

// runBots schedules the bots on their own workers, joining at times drawn
// as the people's are, and returns a function that waits for them.
func (cr *crowd) runBots(ctx context.Context, now time.Time) func() {
	if cr.cfg.Bots.Count <= 0 {
		return func() {}
	}
	b := &cr.bots
	b.cfg = cr.cfg.Bots.withDefaults(cr.cfg.Profile)
	b.sched = newScheduler()
	b.counts.Identities = int64(b.cfg.Count)
	p := cr.cfg.Profile
	open := cr.cfg.SalesOpenAt
	if open.IsZero() {
		open = now
	}
	preWindow := time.Until(open)
	for i := 0; i < b.cfg.Count; i++ {
		c := &customer{id: int32(i + 1), bot: true, want: int8(p.MaxSeats)}
		at := open.Add(time.Duration(cr.rnd.Float64() * float64(p.JoinWindow)))
		if cr.rnd.Float64() < p.PreQueue && preWindow > 0 {
			at = now.Add(time.Duration(cr.rnd.Float64() * float64(preWindow) * 0.9))
		}
		b.sched.add(c, at)
	}
	done := make(chan struct{})
	go func() { b.sched.run(ctx, b.cfg.Workers, cr.botStep); close(done) }()
	return func() { <-done }
}

func botName(c *customer) string { return "bot-" + strconv.Itoa(int(c.id)) }

func (cr *crowd) botLater(c *customer, s step, d time.Duration) {
	c.next = s
	cr.bots.sched.at(c, time.Now().Add(d))
}

func (cr *crowd) botDone(c *customer) {
	c.queueID, c.access = "", ""
	cr.bots.sched.done()
}

// botStep runs one action of bot c, from the bots' network.
func (cr *crowd) botStep(ctx context.Context, c *customer) {
	if ctx.Err() != nil {
		cr.botDone(c)
		return
	}
	ctx = cr.api.onNetwork(ctx, botNetwork)
	tok := cr.signer.Sign(botName(c), time.Hour)
	switch c.next {
	case stepJoin:
		cr.botJoin(ctx, c, tok)
	case stepPoll:
		cr.botPoll(ctx, c, tok)
	case stepChoose:
		cr.botHold(ctx, c)
	default:
		cr.botPay(ctx, c)
	}
}

// botAfter reschedules after a refusal that asks to wait, or gives up.
func (cr *crowd) botAfter(c *customer, r result, s step) {
	c.tries++
	if c.tries > 40 || (r.status != 0 && r.status < 500 && r.status != http.StatusTooManyRequests) {
		cr.botDone(c)
		return
	}
	d := r.retryAfter
	if d <= 0 {
		d = time.Second
	}
	cr.botLater(c, s, d)
}

func (cr *crowd) botJoin(ctx context.Context, c *customer, tok string) {
	b := &cr.bots
	body := []byte("{}")
	if b.powSeen.Load() {
		atomic.AddInt64(&b.counts.Requests, 1)
		var ok bool
		if body, ok = cr.api.solvedBody(ctx, "bot challenge", tok, 0); !ok {
			cr.botLater(c, stepJoin, time.Second)
			return
		}
	}
	var last result
	for i := 0; i < b.cfg.JoinFlood; i++ {
		atomic.AddInt64(&b.counts.Requests, 1)
		j, r := cr.api.joinWith(ctx, "bot join", tok, body)
		last = r
		switch {
		case r.status == http.StatusOK || r.status == http.StatusCreated:
			if c.queueID == "" {
				atomic.AddInt64(&b.counts.Joined, 1)
			}
			c.queueID, c.place = j.QueueID, j.Place
		case isPowRefusal(r):
			b.powSeen.Store(true)
			atomic.AddInt64(&b.counts.Requests, 1)
			var ok bool
			if body, ok = cr.api.solvedBody(ctx, "bot challenge", tok, 0); !ok {
				cr.botLater(c, stepJoin, time.Second)
				return
			}
		}
	}
	if c.queueID == "" {
		cr.botAfter(c, last, stepJoin)
		return
	}
	c.tries = 0
	cr.botLater(c, stepPoll, b.cfg.PollEvery)
}

func (cr *crowd) botPoll(ctx context.Context, c *customer, tok string) {
	b := &cr.bots
	atomic.AddInt64(&b.counts.Requests, 1)
	r := cr.api.do(ctx, "bot poll", http.MethodGet, cr.api.eventPath(cr.api.queueURL)+"/queue/"+c.queueID, nil, bearer(tok))
	if r.status != http.StatusOK {
		cr.botAfter(c, r, stepPoll)
		return
	}
	c.tries = 0
	var p queueapi.Place
	_ = json.Unmarshal(r.body, &p)
	switch {
	case p.Status == queueapi.StatusAdmitted && p.AccessToken != "":
		c.access = p.AccessToken
		atomic.AddInt64(&b.counts.Admitted, 1)
		cr.botLater(c, stepChoose, 0)
	case p.Status == queueapi.StatusWaiting || p.Status == queueapi.StatusPaused || p.Status == queueapi.StatusAdmitted:
		cr.botLater(c, stepPoll, b.cfg.PollEvery)
	default: // sold out, expired, closed
		cr.botDone(c)
	}
}

func (cr *crowd) botHold(ctx context.Context, c *customer) {
	b := &cr.bots
	var seats []string
	for _, s := range cr.sections {
		if seats = cr.pick(ctx, s, int(c.want)); len(seats) > 0 {
			break
		}
	}
	if len(seats) == 0 {
		cr.botDone(c)
		return
	}
	atomic.AddInt64(&b.counts.Requests, 1)
	body, _ := json.Marshal(map[string]any{"seats": seats})
	r := cr.api.do(ctx, "bot hold", http.MethodPost, cr.api.eventPath(cr.api.bookingURL)+"/holds", body, map[string]string{"X-Queue-Token": c.access})
	switch {
	case r.status == http.StatusCreated || r.status == http.StatusOK:
		var h holdResponse
		_ = json.Unmarshal(r.body, &h)
		atomic.AddInt64(&b.counts.HoldsOK, 1)
		c.orderID, c.amount, c.seats, c.tries = h.OrderID, h.Amount, int8(len(h.Seats)), 0
		cr.botLater(c, stepPay, 0)
	case r.status == http.StatusConflict && c.tries < int16(cr.cfg.Profile.SeatRetries):
		c.tries++
		for _, s := range cr.sections {
			cr.invalidate(s, nil)
		}
		cr.botLater(c, stepChoose, 50*time.Millisecond)
	default:
		cr.botAfter(c, r, stepChoose)
	}
}

// botPay is the payment provider's callback for a bot's hold, paid with
// the bots' one card.
func (cr *crowd) botPay(ctx context.Context, c *customer) {
	b := &cr.bots
	body, _ := json.Marshal(map[string]any{
		"orderId": c.orderID, "paymentId": "pay-" + c.orderID, "amount": c.amount,
		"currency": cr.cfg.Currency, "status": "succeeded", "cardFingerprint": b.cfg.Card,
	})
	atomic.AddInt64(&b.counts.Requests, 1)
	r := cr.api.do(ctx, "bot webhook", http.MethodPost, cr.api.bookingURL+"/payments/webhook", body,
		map[string]string{webhooksig.Header: webhooksig.Sign(cr.cfg.WebhookSecret, time.Now(), body)})
	if r.status == 0 || r.status >= 500 {
		cr.botAfter(c, r, stepPay)
		return
	}
	if r.status/100 == 2 {
		cr.paidMu.Lock()
		cr.paid = append(cr.paid, c.orderID)
		cr.paidMu.Unlock()
		// Booking may take the payment and refund it (the card's seat
		// limit): a refusal of the webhook's, though it answers 200.
		var o struct {
			Status       string `json:"status"`
			RefundReason string `json:"refundReason"`
		}
		_ = json.Unmarshal(r.body, &o)
		if o.RefundReason != "" {
			cr.api.refusals.add("bot webhook", r.status, "refunded: "+o.RefundReason)
		} else {
			atomic.AddInt64(&b.counts.SeatsPaidFor, int64(c.seats))
		}
	}
	cr.botDone(c)
}

// botReport compares the bots with the people (nil without bots).
func (cr *crowd) botReport(people Counts) *BotReport {
	if cr.cfg.Bots.Count <= 0 {
		return nil
	}
	b := &cr.bots.counts
	load := func(p *int64) int64 { return atomic.LoadInt64(p) }
	var requests uint64
	for _, e := range cr.api.rec.snapshot() {
		if !strings.HasPrefix(e.Endpoint, "bot ") {
			requests += e.Requests
		}
	}
	return &BotReport{
		People: KindCounts{Identities: people.Customers, Joined: people.Joined, Admitted: people.Admitted,
			HoldsOK: people.HoldsOK, SeatsPaidFor: people.SeatsPaidFor, Requests: int64(requests)},
		Bots: KindCounts{Identities: b.Identities, Joined: load(&b.Joined), Admitted: load(&b.Admitted),
			HoldsOK: load(&b.HoldsOK), SeatsPaidFor: load(&b.SeatsPaidFor), Requests: load(&b.Requests)},
		Refused: cr.api.refusals.list(),
	}
}
