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

package render

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// workloadConfig is one workload's rendered configuration.
type workloadConfig struct {
	vars []config.Var
	refs envRefs // fields whose value comes from a Secret key or a pod field
	port int32
}

// defaults fills dst from the struct tags, exactly as the workload sees them.
func defaults(dst any) error {
	if err := config.Defaults(dst); err != nil {
		return fmt.Errorf("workload defaults: %w", err)
	}
	return nil
}

func workloadConfigs(te *ticketsv1alpha1.TicketEvent) (map[Component]workloadConfig, error) {
	s := te.Spec
	keys := KeysSecretName(te)
	out := map[Component]workloadConfig{}

	var q config.Queue
	if err := defaults(&q); err != nil {
		return nil, err
	}
	qrefs := envRefs{}
	q.DrainDelay = drainDelay
	q.EventID = s.EventID
	redisConfig(&q.Redis, s.Redis, qrefs)
	identity(&q.Identity, s.Identity, qrefs)
	qrefs.secret(&q.AccessTokenKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyAccessTokenKeys})
	// spec.admission, spec.salesOpenAt and spec.phases: the queue applies
	// the same mapping when it follows its TicketEvent live.
	if err := q.ApplyTicketEvent(s); err != nil {
		return nil, err
	}
	rateLimits(&q.RateLimits, s.BotProtection.RateLimits)
	proofOfWork(&q.ProofOfWork, s.BotProtection.ProofOfWork)
	qrefs.secret(&q.PowKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyPowKeys})
	qrefs.secret(&q.AccessCodeKey, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyAccessCodeKey})
	q.Admitter = true
	q.LeaderElection = true
	q.LeaseName = LeaseName(te)
	qrefs.field(&q.Namespace, "metadata.namespace")
	qrefs.field(&q.PodName, "metadata.name")
	q.TicketEventName = te.Name
	// The queue follows spec.admission and spec.salesOpenAt of its
	// TicketEvent live: their fields are tagged live, and their keys do not
	// roll its pods.
	port, err := httpPort(q.HTTPAddr)
	if err != nil {
		return nil, err
	}
	out[Queue] = workloadConfig{vars: config.Render(&q), refs: qrefs, port: port}

	var b config.Booking
	if err := defaults(&b); err != nil {
		return nil, err
	}
	brefs := envRefs{}
	b.DrainDelay = drainDelay
	b.EventID = s.EventID
	postgresConfig(&b.Postgres, s.Postgres, brefs)
	redisConfig(&b.Redis, s.Redis, brefs)
	identity(&b.Identity, s.Identity, brefs)
	brefs.secret(&b.AccessTokenKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyAccessTokenKeys})
	rateLimits(&b.RateLimits, s.BotProtection.RateLimits)
	if s.Holds.TTL != nil {
		b.HoldTTL = s.Holds.TTL.Duration
	}
	// Unset, the payment timeout follows the hold TTL; rendered explicitly
	// so the ConfigMap shows what booking uses.
	b.PaymentTimeout = config.DefaultPaymentTimeout(b.HoldTTL)
	if s.Payment.Timeout != nil {
		b.PaymentTimeout = s.Payment.Timeout.Duration
	}
	if s.Holds.MaxSeatsPerCustomer > 0 {
		b.MaxSeatsPerCustomer = int(s.Holds.MaxSeatsPerCustomer)
	}
	if s.Payment.WebhookSecretRef != nil {
		brefs.secret(&b.WebhookSecrets, *s.Payment.WebhookSecretRef)
	}
	if s.Payment.StripeWebhookSecretRef != nil {
		brefs.secret(&b.StripeWebhookSecrets, *s.Payment.StripeWebhookSecretRef)
	}
	brefs.secret(&b.ServiceToken, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyServiceToken})
	if err := bookingSeating(&b, s.Seating); err != nil {
		return nil, err
	}
	if b.Phases, err = bookingPhases(s.Phases); err != nil {
		return nil, err
	}
	if port, err = httpPort(b.HTTPAddr); err != nil {
		return nil, err
	}
	out[Booking] = workloadConfig{vars: config.Render(&b), refs: brefs, port: port}

	var r config.Relay
	if err := defaults(&r); err != nil {
		return nil, err
	}
	rrefs := envRefs{}
	r.DrainDelay = drainDelay
	postgresConfig(&r.Postgres, s.Postgres, rrefs)
	kafka(&r.Kafka, s.Kafka, rrefs)
	if port, err = httpPort(r.HTTPAddr); err != nil {
		return nil, err
	}
	out[Relay] = workloadConfig{vars: config.Render(&r), refs: rrefs, port: port}

	var t config.Tickets
	if err := defaults(&t); err != nil {
		return nil, err
	}
	trefs := envRefs{}
	t.DrainDelay = drainDelay
	postgresConfig(&t.Postgres, s.Postgres, trefs)
	kafka(&t.Kafka, s.Kafka, trefs)
	identity(&t.Identity, s.Identity, trefs)
	trefs.secret(&t.TicketKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyTicketKeys})
	eventInfo(&t.EventInfo, s)
	mail(&t.Mail, s.Delivery.Mail, trefs)
	gate(&t.Gate, s.Gates, GateSecretRef(te), trefs)
	if port, err = httpPort(t.HTTPAddr); err != nil {
		return nil, err
	}
	out[Tickets] = workloadConfig{vars: config.Render(&t), refs: trefs, port: port}

	// Each workload's own rules, which it checks again at its start: a
	// spec that gets past the CRD but that a workload would refuse stops
	// here, in the event's status, rather than in a crash loop.
	for _, c := range []struct {
		name Component
		cfg  interface{ Validate() error }
		refs envRefs
	}{{Queue, &q, qrefs}, {Booking, &b, brefs}, {Relay, &r, rrefs}, {Tickets, &t, trefs}} {
		if err := validateAsStarted(c.cfg, c.refs); err != nil {
			return nil, fmt.Errorf("%s configuration: %w", c.name, err)
		}
	}
	return out, nil
}

// validateAsStarted checks cfg (a pointer) as its workload will at start,
// when the fields that come from a Secret or the downward API hold
// values: a rule on whether one is set (SMTP credentials in the clear,
// say) then sees it set. Their values are the key packages' to check.
func validateAsStarted(cfg interface{ Validate() error }, refs envRefs) error {
	for f := range refs {
		if p, ok := f.(*string); ok {
			*p = "(from " + refSource(refs[f]) + ")"
			defer func() { *p = "" }()
		}
	}
	return cfg.Validate()
}

func refSource(s *corev1.EnvVarSource) string {
	if s.SecretKeyRef != nil {
		return "Secret " + s.SecretKeyRef.Name
	}
	return "the pod"
}

func identity(dst *config.Identity, id *ticketsv1alpha1.Identity, refs envRefs) {
	dst.IdentityHMACSecret = ""
	refs.optSecret(&dst.IdentityHMACSecret, id.HMACSecretRef)
	dst.IdentityJWKSURL = id.JWKSURL
	if id.Issuer != "" {
		dst.IdentityIssuer = id.Issuer
	}
	if id.Audience != "" {
		dst.IdentityAudience = id.Audience
	}
	if id.TierClaim != "" {
		dst.TierClaim = id.TierClaim
	}
	if id.EmailClaim != "" {
		dst.EmailClaim = id.EmailClaim
	}
}

// eventInfo is what the tickets say about the event.
func eventInfo(dst *config.EventInfo, s ticketsv1alpha1.TicketEventSpec) {
	dst.EventName = s.DisplayName
	dst.Venue = s.Venue
	if s.StartsAt != nil {
		dst.StartsAt = s.StartsAt.UTC().Format(time.RFC3339)
	}
}

// mail copies spec.delivery.mail; unset, the tickets service sends no mail.
// The SMTP credentials come from the Secret's username and password keys.
func mail(dst *config.Mail, m *ticketsv1alpha1.Mail, refs envRefs) {
	if m == nil {
		dst.SMTPHost = ""
		return
	}
	dst.SMTPHost = m.SMTP.Host
	if m.SMTP.Port > 0 {
		dst.SMTPPort = int(m.SMTP.Port)
	}
	if m.SMTP.TLS != "" {
		dst.SMTPTLS = string(m.SMTP.TLS)
	}
	if c := m.SMTP.CredentialsSecretRef; c != nil {
		refs.secret(&dst.SMTPUsername, corev1.SecretKeySelector{LocalObjectReference: *c, Key: ticketsv1alpha1.SMTPUsernameKey})
		refs.secret(&dst.SMTPPassword, corev1.SecretKeySelector{LocalObjectReference: *c, Key: ticketsv1alpha1.SMTPPasswordKey})
	}
	dst.From = m.From
	if m.Workers > 0 {
		dst.Workers = int(m.Workers)
	}
}

// GateSecretRef is where the gate secret of a sale is: spec.gates.gateSecretRef,
// or else the generated key of the keys Secret.
func GateSecretRef(te *ticketsv1alpha1.TicketEvent) corev1.SecretKeySelector {
	if r := te.Spec.Gates.GateSecretRef; r != nil {
		return *r
	}
	return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: KeysSecretName(te)}, Key: KeyGateSecret}
}

// gate copies spec.gates; fields left unset keep the workload's defaults.
func gate(dst *config.Gate, g ticketsv1alpha1.Gates, secret corev1.SecretKeySelector, refs envRefs) {
	refs.secret(&dst.GateSecret, secret)
	if g.Transfers.Max != nil {
		dst.MaxTransfers = int(*g.Transfers.Max)
	}
	if g.Transfers.Cutoff != nil {
		dst.TransferCutoff = g.Transfers.Cutoff.Duration
	}
}

func kafka(dst *config.Kafka, k *ticketsv1alpha1.Kafka, refs envRefs) {
	dst.Brokers = append([]string(nil), k.Brokers...)
	if k.TicketIssuedTopic != "" {
		dst.TopicTicketIssued = k.TicketIssuedTopic
	}
	if k.RefundRequestedTopic != "" {
		dst.TopicRefundRequested = k.RefundRequestedTopic
	}
	kafkaSecurity(dst, k, refs)
}

func httpPort(addr string) (int32, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("http address %q: %w", addr, err)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("http address %q: %w", addr, err)
	}
	return int32(n), nil
}

// Seating renders sections as "name:price:rows:seatsPerRow;...".
func Seating(sections []ticketsv1alpha1.Section) string {
	parts := make([]string, len(sections))
	for i, s := range sections {
		parts[i] = fmt.Sprintf("%s:%s:%d:%d", s.Name, s.Price, s.Rows, s.SeatsPerRow)
	}
	return strings.Join(parts, ";")
}

// SeatsTotal is the number of seats of the seating.
func SeatsTotal(te *ticketsv1alpha1.TicketEvent) int64 {
	if n, ok := venuePlaces(te.Spec.Seating); ok {
		return n // the venue model: seats not blocked, plus standing capacity
	}
	var n int64
	for _, s := range te.Spec.Seating.Sections {
		n += int64(s.Rows) * int64(s.SeatsPerRow)
	}
	return n
}
