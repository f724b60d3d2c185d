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

package config

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
)

// FieldError is a setting that breaks a rule, named by the path of its
// field: the environment variable and flag (TICKETFAIR_MAX_ACTIVE,
// --max-active), followed, for a JSON setting, by the path inside it
// (TICKETFAIR_PHASES[1].queues[0].weight).
type FieldError struct {
	Field string // the environment variable
	Flag  string
	Path  string // inside a JSON setting, e.g. "[1].queues[0].weight"
	Value any
	Rule  string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.Field)
	if e.Field != "" && e.Path != "" && e.Path[0] != '[' {
		b.WriteByte('.')
	}
	b.WriteString(e.Path)
	if e.Flag != "" {
		fmt.Fprintf(&b, " (--%s)", e.Flag)
	}
	if e.Value != nil {
		fmt.Fprintf(&b, ": %v", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Rule)
	return b.String()
}

// Validate methods check what a workload needs to run, each rule once per
// config type; every workload calls its own at startup and the operator
// calls it on what it renders. They leave two things to others:
//   - credentials (tagged secret): the operator renders them as Secret
//     references, so their values are checked where they are parsed, by
//     the key packages at the workload's startup;
//   - the narrower bounds the TicketEvent puts on a seller's settings
//     (a tick of at least 100ms, say): the CRD states those, and
//     ApplyTicketEvent keeps to them; a local sale or a test may tick
//     faster.
//
// Each returns every broken rule at once (errors.Join of *FieldError).

// Validate checks the queue's configuration.
func (q Queue) Validate() error {
	c := newChecker(&q)
	q.Server.check(c)
	q.Event.check(c)
	q.Redis.check(c)
	q.Identity.check(c)
	q.Admission.check(c)
	q.RateLimits.check(c)
	q.ProofOfWork.check(c)
	if ps, err := ParsePhases(q.Phases); err != nil {
		c.add(&q.Phases, err)
	} else {
		c.add(&q.Phases, CheckPhases(ps, true))
	}
	c.check(q.JoinBatch >= 1, &q.JoinBatch, "must be at least 1")
	c.check(q.JoinLinger >= 0, &q.JoinLinger, "must not be negative")
	c.check(q.AdmitStep >= 0, &q.AdmitStep, "must not be negative (0: one step per tick)")
	if q.LeaderElection && q.Admitter {
		c.check(q.LeaseDuration > q.RenewDeadline && q.RenewDeadline > q.RetryPeriod && q.RetryPeriod > 0, &q.LeaseDuration,
			fmt.Sprintf("must be longer than the renew deadline (%s), itself longer than the retry period (%s) > 0", q.RenewDeadline, q.RetryPeriod))
	}
	return c.err()
}

// Validate checks booking's (and migrate's) configuration. The phases'
// limits are checked against the event's, their sections against the
// seating when booking is told it (the operator renders both).
func (b Booking) Validate() error {
	c := newChecker(&b)
	b.Server.check(c)
	b.Event.check(c)
	b.Redis.check(c)
	b.Identity.check(c)
	b.RateLimits.check(c)
	c.check(b.HoldTTL > 0, &b.HoldTTL, "must be positive")
	c.check(b.PaymentTimeout >= 0 && (b.PaymentTimeout == 0 || b.PaymentTimeout < b.HoldTTL), &b.PaymentTimeout,
		fmt.Sprintf("must be shorter than the hold TTL (%s), so no payment completes after its hold expired (0: 4/5 of it)", b.HoldTTL))
	c.check(b.MaxSeatsPerCustomer >= 1, &b.MaxSeatsPerCustomer, "must be at least 1")
	c.check(len(b.Currency) == 3 && strings.ToUpper(b.Currency) == b.Currency, &b.Currency, "must be an ISO 4217 code such as EUR")
	c.check(b.SweepInterval > 0, &b.SweepInterval, "must be positive")
	c.check(b.SweepBatch >= 1, &b.SweepBatch, "must be at least 1")
	c.check(b.SeatMapRefresh > 0, &b.SeatMapRefresh, "must be positive")
	c.check(b.DatabaseMaxConns >= 1, &b.DatabaseMaxConns, "must be at least 1")
	c.check(b.WebhookTolerance > 0, &b.WebhookTolerance, "must be positive")
	set := 0
	for _, s := range []string{b.Seating, b.Venue, b.VenueFile} {
		if s != "" {
			set++
		}
	}
	c.check(set <= 1, &b.Venue, "set at most one of seating, venue and venue file")
	ps, err := ParsePhases(b.Phases)
	c.add(&b.Phases, err)
	for i, p := range ps {
		if p.MaxSeatsPerCustomer > b.MaxSeatsPerCustomer {
			c.failAt(&b.Phases, fmt.Sprintf("[%d].maxSeatsPerCustomer", i), p.MaxSeatsPerCustomer,
				fmt.Sprintf("must not exceed the event's limit, %d", b.MaxSeatsPerCustomer))
		}
	}
	return c.err()
}

// Validate checks the relay's configuration.
func (r Relay) Validate() error {
	c := newChecker(&r)
	r.Server.check(c)
	r.Kafka.check(c)
	c.check(r.TopicRefundRequested != "", &r.TopicRefundRequested, "required: the relay publishes refunds there")
	c.check(r.BatchSize >= 1, &r.BatchSize, "must be at least 1")
	c.check(r.PollInterval > 0, &r.PollInterval, "must be positive")
	c.check(r.Retention > 0, &r.Retention, "must be positive")
	c.check(r.PruneInterval > 0, &r.PruneInterval, "must be positive")
	c.check(r.BackoffMin > 0, &r.BackoffMin, "must be positive")
	c.check(r.BackoffMax >= r.BackoffMin, &r.BackoffMax, fmt.Sprintf("must be at least the first delay (%s)", r.BackoffMin))
	c.check(r.LockRetry > 0, &r.LockRetry, "must be positive")
	return c.err()
}

// Validate checks the tickets service's configuration.
func (t Tickets) Validate() error {
	c := newChecker(&t)
	t.Server.check(c)
	t.Kafka.check(c)
	t.Identity.check(c)
	t.Mail.check(c)
	t.EventInfo.check(c)
	c.check(t.ConsumerGroup != "", &t.ConsumerGroup, "required")
	c.check(t.RetryBackoff > 0, &t.RetryBackoff, "must be positive")
	c.check(t.MaxTransfers >= 0, &t.MaxTransfers, "must not be negative")
	c.check(t.TransferCutoff >= 0, &t.TransferCutoff, "must not be negative")
	return c.err()
}

// Validate checks the edge's configuration.
func (e Edge) Validate() error {
	c := newChecker(&e)
	e.Server.check(c)
	for _, raw := range []*string{&e.QueueURL, &e.BookingURL, &e.TicketsURL} {
		u, err := url.Parse(*raw)
		c.check(err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "", raw, "must be http(s)://host[:port]")
	}
	return c.err()
}

// Validate checks identity settings alone, for the verifier, which keeps
// to them whoever builds it.
func (i Identity) Validate() error {
	c := newChecker(&i)
	i.check(c)
	return c.err()
}

// Validate checks mail settings alone, for the sender.
func (m Mail) Validate() error {
	c := newChecker(&m)
	m.check(c)
	return c.err()
}

func (s *Server) check(c *checker) {
	_, port, ok := strings.Cut(s.HTTPAddr, ":")
	c.check(ok && port != "", &s.HTTPAddr, "must be host:port or :port")
	c.check(s.ShutdownGrace >= 0, &s.ShutdownGrace, "must not be negative")
	c.check(s.DrainDelay >= 0, &s.DrainDelay, "must not be negative")
}

func (e *Event) check(c *checker) {
	c.check(e.EventID >= 1, &e.EventID, "required: the numeric id of the event, at least 1")
}

func (r *Redis) check(c *checker) {
	switch r.RedisMode {
	case "standalone", "cluster":
	case "sentinel":
		c.check(r.RedisMasterName != "", &r.RedisMasterName, "required in sentinel mode")
	default:
		c.fail(&r.RedisMode, r.RedisMode, "must be standalone, sentinel or cluster")
	}
}

func (k *Kafka) check(c *checker) {
	c.check(len(k.Brokers) > 0, &k.Brokers, "required: at least one bootstrap broker")
	switch k.KafkaSASLMechanism {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		c.fail(&k.KafkaSASLMechanism, k.KafkaSASLMechanism, "must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	}
	c.check(k.TopicTicketIssued != "", &k.TopicTicketIssued, "required")
}

// RegisteredClaims are the claims of an identity token that the verifier
// reads itself: neither the tier nor the email may be read from one.
var RegisteredClaims = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti"}

func (i *Identity) check(c *checker) {
	c.check(i.IdentityIssuer != "", &i.IdentityIssuer, "required: identity tokens' iss is always checked")
	c.check(i.IdentityAudience != "", &i.IdentityAudience, "required: identity tokens' aud is always checked")
	c.check(!slices.Contains(RegisteredClaims, i.TierClaim), &i.TierClaim, "must not be a claim the verifier reads itself ("+strings.Join(RegisteredClaims, ", ")+")")
	c.check(!slices.Contains(RegisteredClaims, i.EmailClaim), &i.EmailClaim, "must not be a claim the verifier reads itself ("+strings.Join(RegisteredClaims, ", ")+")")
	if i.IdentityJWKSURL != "" {
		c.check(strings.HasPrefix(i.IdentityJWKSURL, "https://") || strings.HasPrefix(i.IdentityJWKSURL, "http://"), &i.IdentityJWKSURL, "must be an http:// or https:// URL")
	}
}

func (a *Admission) check(c *checker) {
	c.check(a.MaxActive >= 1, &a.MaxActive, "must be at least 1")
	c.check(a.RatePerSecond >= 1, &a.RatePerSecond, "must be at least 1")
	c.check(a.TickInterval > 0, &a.TickInterval, "must be positive")
	c.check(a.TokenTTL > 0, &a.TokenTTL, "must be positive")
	c.check(a.ClaimTimeout > 0, &a.ClaimTimeout, "must be positive")
	c.check(a.SelectionWindow > 0, &a.SelectionWindow, "must be positive")
	c.check(a.PreQueue == "shuffle" || a.PreQueue == "fifo", &a.PreQueue, "must be shuffle or fifo")
	if a.AutotuneHoldP99 == 0 && a.AutotuneMinRate == 0 && a.AutotuneMaxRate == 0 {
		return // autotune off
	}
	c.check(a.AutotuneHoldP99 >= MinAutotuneHoldP99 && a.AutotuneHoldP99 <= MaxAutotuneHoldP99, &a.AutotuneHoldP99,
		"must be between "+MinAutotuneHoldP99.String()+" and "+MaxAutotuneHoldP99.String()+" while autotune is set")
	c.check(a.AutotuneMinRate >= 1, &a.AutotuneMinRate, "must be at least 1 while autotune is set")
	c.check(a.AutotuneMaxRate >= a.AutotuneMinRate, &a.AutotuneMaxRate, "must be at least TICKETFAIR_AUTOTUNE_MIN_RATE")
}

func (r *RateLimits) check(c *checker) {
	limited := false
	for _, n := range []*int{&r.JoinPerIdentity, &r.JoinPerNetwork, &r.PollPerIdentity, &r.PollPerNetwork, &r.HoldPerIdentity, &r.HoldPerNetwork} {
		c.check(*n >= 0, n, "must not be negative (0: no limit)")
		limited = limited || *n > 0
	}
	// Without any limit there is no counter, and no window.
	c.check(!limited || r.RateLimitWindow > 0, &r.RateLimitWindow, "must be positive while a rate limit is set")
}

// MaxPowDifficulty is the most leading zero bits a proof of work may ask
// for: a challenge's cost doubles with each, and 32 is beyond any phone.
const MaxPowDifficulty = 32

func (p *ProofOfWork) check(c *checker) {
	if p.PowDifficulty == 0 {
		return
	}
	c.check(p.PowDifficulty > 0 && p.PowDifficulty <= MaxPowDifficulty, &p.PowDifficulty, fmt.Sprintf("must be 0 to %d", MaxPowDifficulty))
	c.check(p.PowMaxDifficulty >= 0 && p.PowMaxDifficulty <= MaxPowDifficulty, &p.PowMaxDifficulty, fmt.Sprintf("must be 0 to %d", MaxPowDifficulty))
	c.check(p.PowTTL > 0, &p.PowTTL, "must be positive")
	c.check(p.PowAdaptiveThreshold >= 0, &p.PowAdaptiveThreshold, "must not be negative (0: the difficulty never rises)")
	c.check(p.PowAdaptiveStep >= 1, &p.PowAdaptiveStep, "must be at least 1")
	c.check(p.PowSubjectPrefix >= 0, &p.PowSubjectPrefix, "must not be negative (0: only networks)")
}

// TLS modes of Mail.SMTPTLS.
const (
	SMTPTLSNone     = "none"
	SMTPTLSStartTLS = "starttls"
	SMTPTLSImplicit = "tls"
)

// check: without an SMTP host mail is off and nothing else matters.
func (m *Mail) check(c *checker) {
	if m.SMTPHost == "" {
		return
	}
	c.check(m.SMTPPort >= 1 && m.SMTPPort <= 65535, &m.SMTPPort, "must be a port, 1 to 65535")
	switch m.SMTPTLS {
	case SMTPTLSStartTLS, SMTPTLSImplicit:
	case SMTPTLSNone:
		// The mail library refuses to send credentials in the clear
		// elsewhere, so every mail would fail; say so at startup instead.
		// The user's presence is checked here, not its value.
		c.check(m.SMTPUsername == "" || loopback(m.SMTPHost), &m.SMTPTLS,
			"would send the SMTP password in the clear; allowed only to a loopback SMTP host")
	default:
		c.fail(&m.SMTPTLS, m.SMTPTLS, "must be none, starttls or tls")
	}
	// A display name is allowed ("Ticketfair <tickets@example.org>"):
	// the sender puts From in the header as written.
	addr := ""
	if a, err := mail.ParseAddress(m.From); err == nil {
		addr = a.Address
	}
	at := strings.LastIndexByte(addr, '@')
	c.check(at > 0 && at < len(addr)-1, &m.From, "must be an email address with a domain, such as tickets@example.org or Tickets <tickets@example.org>")
	c.check(m.Workers >= 1, &m.Workers, "must be at least 1")
	c.check(m.RetryMin > 0, &m.RetryMin, "must be positive")
	c.check(m.RetryMax >= m.RetryMin, &m.RetryMax, fmt.Sprintf("must be at least the first delay (%s)", m.RetryMin))
}

// loopback reports the hosts the mail library sends credentials to
// without TLS.
func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

func (e *EventInfo) check(c *checker) {
	if e.StartsAt != "" {
		_, err := time.Parse(time.RFC3339, e.StartsAt)
		c.check(err == nil, &e.StartsAt, "must be an RFC 3339 time")
	}
}

// checker collects the broken rules of one config value, naming each field
// by the tags of the struct it was made for: a rule names its field by
// address (&cfg.MaxActive), so no field name is written twice.
type checker struct {
	root reflect.Value
	errs []error
}

// newChecker checks the struct root points to. The check methods of the
// embedded structs get the addresses of root's own fields, since root is
// the copy they were called on.
func newChecker(root any) *checker { return &checker{root: reflect.ValueOf(root).Elem()} }

func (c *checker) check(ok bool, field any, rule string) {
	if !ok {
		c.fail(field, reflect.ValueOf(field).Elem().Interface(), rule)
	}
}

func (c *checker) fail(field, value any, rule string) { c.failAt(field, "", value, rule) }

func (c *checker) failAt(field any, path string, value any, rule string) {
	e := &FieldError{Path: path, Value: value, Rule: rule}
	if s, ok := value.(string); ok {
		e.Value = fmt.Sprintf("%q", s)
	}
	e.Field, e.Flag = c.name(field)
	c.errs = append(c.errs, e)
}

// add records err, which a parser or checker of field's value returned
// (nil: nothing), under the field's name.
func (c *checker) add(field any, err error) {
	if err == nil {
		return
	}
	env, flag := c.name(field)
	for _, e := range within(env, err) {
		e.Flag = flag
		c.errs = append(c.errs, e)
	}
}

// Within names field (say "spec.phases") as the setting of err's
// *FieldErrors, those a checker of a JSON setting's value returned with
// paths inside it; any other error becomes a rule of field.
func Within(field string, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range within(field, err) {
		out = append(out, e)
	}
	return errors.Join(out...)
}

func within(field string, err error) []*FieldError {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []*FieldError
	for _, err := range errs {
		e := &FieldError{Rule: err.Error()}
		if fe, ok := err.(*FieldError); ok {
			copied := *fe
			e = &copied
		}
		e.Field = field
		out = append(out, e)
	}
	return out
}

// name finds the field at address field in the checked struct.
func (c *checker) name(field any) (env, flag string) {
	addr := reflect.ValueOf(field).Pointer()
	walk(c.root, func(f reflect.StructField, fv reflect.Value) {
		if fv.CanAddr() && fv.Addr().Pointer() == addr {
			env, flag = f.Tag.Get("env"), f.Tag.Get("flag")
		}
	})
	if env == "" {
		// A programming error: the field is not one of the struct's.
		panic(fmt.Sprintf("config: no field at %p in %s", field, c.root.Type()))
	}
	return env, flag
}

func (c *checker) err() error { return errors.Join(c.errs...) }
