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
	"strings"
	"testing"
	"time"
)

// validated is a config type with its Validate.
type validated interface{ Validate() error }

// The tag defaults, with the settings that have none (an event id), are
// valid for every workload: a workload started with nothing else set
// fails on what is missing, never on its own defaults.
func TestDefaultsValidate(t *testing.T) {
	q := DefaultsOf[Queue]()
	q.EventID = 1
	b := DefaultsOf[Booking]()
	b.EventID = 1
	tk := DefaultsOf[Tickets]()
	tk.SMTPHost = "smtp.example.org"
	for _, v := range []validated{q, b, DefaultsOf[Relay](), tk, DefaultsOf[Edge]()} {
		if err := v.Validate(); err != nil {
			t.Errorf("%T: %v", v, err)
		}
	}
}

// Each broken rule names its field: the environment variable and flag, the
// value, and the rule; all of them at once.
func TestValidateNamesTheField(t *testing.T) {
	queue := func(mut func(*Queue)) validated {
		q := DefaultsOf[Queue]()
		q.EventID = 1
		mut(&q)
		return q
	}
	booking := func(mut func(*Booking)) validated {
		b := DefaultsOf[Booking]()
		b.EventID = 1
		mut(&b)
		return b
	}
	tickets := func(mut func(*Tickets)) validated {
		t := DefaultsOf[Tickets]()
		t.SMTPHost = "smtp.example.org"
		mut(&t)
		return t
	}
	for name, tc := range map[string]struct {
		cfg  validated
		want string
	}{
		"event id":        {queue(func(q *Queue) { q.EventID = 0 }), "TICKETFAIR_EVENT_ID (--event-id): 0: required"},
		"max active":      {queue(func(q *Queue) { q.MaxActive = 0 }), "TICKETFAIR_MAX_ACTIVE (--max-active): 0: must be at least 1"},
		"pre-queue":       {queue(func(q *Queue) { q.PreQueue = "lottery" }), `TICKETFAIR_PRE_QUEUE (--pre-queue): "lottery": must be shuffle or fifo`},
		"redis mode":      {queue(func(q *Queue) { q.RedisMode = "ring" }), `TICKETFAIR_REDIS_MODE (--redis-mode): "ring"`},
		"sentinel master": {queue(func(q *Queue) { q.RedisMode = "sentinel" }), "TICKETFAIR_REDIS_MASTER_NAME (--redis-master-name)"},
		"rate limit":      {queue(func(q *Queue) { q.JoinPerNetwork = -1 }), "TICKETFAIR_RATE_LIMIT_JOIN_PER_NETWORK"},
		"pow":             {queue(func(q *Queue) { q.PowDifficulty = 40 }), "TICKETFAIR_POW_DIFFICULTY (--pow-difficulty): 40: must be 0 to 32"},
		"lease":           {queue(func(q *Queue) { q.RenewDeadline = q.LeaseDuration }), "TICKETFAIR_LEASE_DURATION"},
		"tier claim":      {queue(func(q *Queue) { q.TierClaim = "sub" }), `TICKETFAIR_IDENTITY_TIER_CLAIM (--identity-tier-claim): "sub": must not be a claim the verifier reads itself`},
		"issuer":          {queue(func(q *Queue) { q.IdentityIssuer = "" }), "TICKETFAIR_IDENTITY_ISSUER (--identity-issuer)"},
		"http addr":       {queue(func(q *Queue) { q.HTTPAddr = "8080" }), `TICKETFAIR_HTTP_ADDR (--http-addr): "8080"`},
		"phase order": {queue(func(q *Queue) {
			q.Phases = `[{"name":"a","opensAt":"2036-01-01T10:00:00Z","queues":[{"name":"a","weight":1}]},{"name":"b","opensAt":"2036-01-01T09:00:00Z","queues":[{"name":"b","weight":1}]}]`
		}), "TICKETFAIR_PHASES[1].opensAt (--phases): \"2036-01-01T09:00:00Z\": must be after [0].opensAt"},
		"phase weight": {queue(func(q *Queue) {
			q.Phases = `[{"name":"a","opensAt":"2036-01-01T10:00:00Z","queues":[{"name":"a","weight":0}]}]`
		}), "TICKETFAIR_PHASES[0].queues[0].weight (--phases): 0: must be at least 1"},
		"phase JSON":     {queue(func(q *Queue) { q.Phases = `{"name":"a"}` }), "TICKETFAIR_PHASES (--phases): not a JSON list of phases"},
		"payment":        {booking(func(b *Booking) { b.PaymentTimeout = b.HoldTTL }), "TICKETFAIR_PAYMENT_TIMEOUT (--payment-timeout): 5m0s: must be shorter than the hold TTL (5m0s)"},
		"currency":       {booking(func(b *Booking) { b.Currency = "euro" }), `TICKETFAIR_CURRENCY (--currency): "euro"`},
		"seating twice":  {booking(func(b *Booking) { b.Seating, b.Venue = "A:1:1:1", "{}" }), "TICKETFAIR_VENUE (--venue)"},
		"phase limit":    {booking(func(b *Booking) { b.Phases = `[{"name":"presale","maxSeatsPerCustomer":5}]` }), "TICKETFAIR_PHASES[0].maxSeatsPerCustomer (--phases): 5: must not exceed the event's limit, 4"},
		"relay backoff":  {func() validated { r := DefaultsOf[Relay](); r.BackoffMax = time.Millisecond; return r }(), "TICKETFAIR_RELAY_BACKOFF_MAX (--backoff-max)"},
		"kafka":          {func() validated { r := DefaultsOf[Relay](); r.Brokers = nil; return r }(), "TICKETFAIR_KAFKA_BROKERS (--kafka-brokers)"},
		"sasl":           {func() validated { r := DefaultsOf[Relay](); r.KafkaSASLMechanism = "GSSAPI"; return r }(), "TICKETFAIR_KAFKA_SASL_MECHANISM"},
		"edge url":       {func() validated { e := DefaultsOf[Edge](); e.BookingURL = "booking:8082"; return e }(), "TICKETFAIR_EDGE_BOOKING_URL (--booking-url)"},
		"smtp port":      {tickets(func(t *Tickets) { t.SMTPPort = 70000 }), "TICKETFAIR_MAIL_SMTP_PORT (--mail-smtp-port): 70000"},
		"smtp tls":       {tickets(func(t *Tickets) { t.SMTPTLS = "ssl" }), `TICKETFAIR_MAIL_SMTP_TLS (--mail-smtp-tls): "ssl"`},
		"clear password": {tickets(func(t *Tickets) { t.SMTPTLS, t.SMTPUsername = "none", "u" }), "--mail-smtp-tls): \"none\": would send the SMTP password in the clear"},
		"from":           {tickets(func(t *Tickets) { t.From = "tickets" }), "TICKETFAIR_MAIL_FROM (--mail-from)"},
		"workers":        {tickets(func(t *Tickets) { t.Workers = 0 }), "--mail-workers"},
		"retry":          {tickets(func(t *Tickets) { t.RetryMax = t.RetryMin / 2 }), "--mail-retry-max"},
		"starts at":      {tickets(func(t *Tickets) { t.StartsAt = "tomorrow" }), "TICKETFAIR_EVENT_STARTS_AT"},
		"transfers":      {tickets(func(t *Tickets) { t.MaxTransfers = -1 }), "TICKETFAIR_TRANSFER_MAX"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T is not a *FieldError", name, err)
		}
	}

	// Every broken rule at once.
	q := DefaultsOf[Queue]()
	q.MaxActive, q.RatePerSecond = 0, 0
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "TICKETFAIR_EVENT_ID") ||
		!strings.Contains(err.Error(), "TICKETFAIR_MAX_ACTIVE") || !strings.Contains(err.Error(), "TICKETFAIR_ADMIT_RATE") {
		t.Errorf("three broken rules: %v", err)
	}

	// Mail off: nothing of it is checked; credentials in the clear to a
	// loopback server are allowed.
	off := DefaultsOf[Tickets]()
	off.Workers, off.From = 0, ""
	if err := off.Validate(); err != nil {
		t.Errorf("mail off: %v", err)
	}
	named := DefaultsOf[Tickets]()
	named.SMTPHost, named.From = "mail.example.org", "Ticketfair <tickets@ticketfair.test>"
	if err := named.Validate(); err != nil {
		t.Errorf("From with a display name: %v", err)
	}
	loop := DefaultsOf[Tickets]()
	loop.SMTPHost, loop.SMTPTLS, loop.SMTPUsername = "127.0.0.1", "none", "u"
	if err := loop.Validate(); err != nil {
		t.Errorf("credentials in the clear to loopback: %v", err)
	}
}

// Within names a JSON setting's field as the spec does.
func TestWithin(t *testing.T) {
	err := Within("spec.phases", CheckPhases([]Phase{{Name: "a", Queues: []PhaseQueue{{Name: "q", Weight: 1}}}, {Name: "a"}}, true))
	for _, want := range []string{`spec.phases[0].opensAt: required`, `spec.phases[1].name: "a": named twice`, `spec.phases[1].queues: at least one queue`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v, want %q", err, want)
		}
	}
	if Within("x", nil) != nil {
		t.Error("Within of nil is not nil")
	}
}
