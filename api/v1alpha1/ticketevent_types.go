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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TicketEventSpec describes one sale: the event, its seating, and how people
// are admitted from the waiting room into seat selection.
// +kubebuilder:validation:XValidation:rule="!has(self.payment) || !has(self.payment.timeout) || !has(self.holds) || !has(self.holds.ttl) || !self.payment.timeout.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || !self.holds.ttl.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || duration(self.payment.timeout) < duration(self.holds.ttl)",message="payment.timeout must be shorter than holds.ttl, so a payment cannot complete after its hold expired",fieldPath=".payment.timeout",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.phases) || !has(self.seating.sections) || self.phases.all(p, !has(p.sections) || p.sections.all(n, self.seating.sections.exists(x, x.name == n)))",message="phases[].sections must name sections of seating.sections",fieldPath=".phases",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.phases) || !has(self.holds) || !has(self.holds.maxSeatsPerCustomer) || self.phases.all(p, !has(p.maxSeatsPerCustomer) || p.maxSeatsPerCustomer <= self.holds.maxSeatsPerCustomer)",message="phases[].maxSeatsPerCustomer must not exceed holds.maxSeatsPerCustomer, the event's limit",fieldPath=".phases",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.startsAt) || self.startsAt > self.salesOpenAt",message="startsAt must be after salesOpenAt: the event starts after its sale opened",fieldPath=".startsAt",reason=FieldValueInvalid
type TicketEventSpec struct {
	// EventID is the numeric id of the event used in the REST paths
	// (/events/{eventId}/...). It cannot be changed once set. At least 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="eventId is immutable"
	EventID int64 `json:"eventId"`

	// DisplayName is the name shown to customers; 1 to 200 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	DisplayName string `json:"displayName"`

	// SalesOpenAt is when the pre-queue closes, is shuffled, and admission starts.
	SalesOpenAt metav1.Time `json:"salesOpenAt"`

	// Venue is where the event takes place, as printed on the tickets and
	// in the ticket mails. At most 200 characters.
	// +kubebuilder:validation:MaxLength=200
	// +optional
	Venue string `json:"venue,omitempty"`

	// StartsAt is when the event itself starts, as printed on the tickets;
	// ticket transfers close gates.transfers.cutoff before it. It must be
	// after salesOpenAt. Unset: the tickets name no time and transfers stay
	// open.
	// +optional
	StartsAt *metav1.Time `json:"startsAt,omitempty"`

	// Seating is the event's places: sections of seats and standing areas,
	// inline or from a ConfigMap (seating.venueFrom). It cannot be changed
	// once set.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="seating is immutable once set: seats may already be held or sold"
	Seating Seating `json:"seating"`

	// Admission controls how people move from the waiting room into seat selection.
	// Changes reach the running admitter within seconds, without restarting pods.
	// +kubebuilder:default={}
	// +optional
	Admission Admission `json:"admission,omitempty"`

	// Holds controls seat holds.
	// +kubebuilder:default={}
	// +optional
	Holds Holds `json:"holds,omitempty"`

	// Payment configures the payment provider callback.
	// +kubebuilder:default={}
	// +optional
	Payment Payment `json:"payment,omitempty"`

	// BotProtection holds the defences against bots: a proof of work at
	// join and rate limits on join, poll and hold.
	// +kubebuilder:default={}
	// +optional
	BotProtection BotProtection `json:"botProtection,omitempty"`

	// Phases are the sale's phases in order of opening, e.g. a members'
	// presale then the general sale; each has its queues, admitted by
	// weight. Empty: one phase, the general sale at salesOpenAt, with one
	// queue. With phases the sale opens with the first (its opensAt takes
	// the place of salesOpenAt). Changes, such as new weights, reach the
	// running queue within seconds, without restarting pods. 1 to 8 phases.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="(size(self) < 2 || self[1].opensAt > self[0].opensAt) && (size(self) < 3 || self[2].opensAt > self[1].opensAt) && (size(self) < 4 || self[3].opensAt > self[2].opensAt) && (size(self) < 5 || self[4].opensAt > self[3].opensAt) && (size(self) < 6 || self[5].opensAt > self[4].opensAt) && (size(self) < 7 || self[6].opensAt > self[5].opensAt) && (size(self) < 8 || self[7].opensAt > self[6].opensAt)",message="phases[].opensAt must be in increasing order, each phase after the one before it"
	// +listType=map
	// +listMapKey=name
	// +optional
	Phases []SalePhase `json:"phases,omitempty"`

	// Delivery says how tickets reach their buyers besides the order page.
	// +optional
	Delivery Delivery `json:"delivery,omitempty"`

	// Gates configures check-in at the doors and ticket transfers.
	// +kubebuilder:default={}
	// +optional
	Gates Gates `json:"gates,omitempty"`

	// Identity says how customers' identity tokens are verified. Required
	// before the queue, booking and tickets services can be provisioned.
	// +optional
	Identity *Identity `json:"identity,omitempty"`

	// Redis is the waiting room's store. Required before the queue and
	// booking services can be provisioned.
	// +optional
	Redis *Redis `json:"redis,omitempty"`

	// Postgres holds orders, seats and the outbox. Required before the
	// migration Job and the booking, relay and tickets services can be provisioned.
	// +optional
	Postgres *Postgres `json:"postgres,omitempty"`

	// Kafka carries paid orders from the outbox relay to the tickets service.
	// Required before the relay and tickets services can be provisioned.
	// +optional
	Kafka *Kafka `json:"kafka,omitempty"`

	// Queue is the waiting room service (join, position, admission).
	// +optional
	Queue ScalableWorkload `json:"queue,omitempty"`

	// Booking is the seat hold and order service.
	// +optional
	Booking ScalableWorkload `json:"booking,omitempty"`

	// Relay publishes the booking outbox to Kafka.
	// +optional
	Relay Workload `json:"relay,omitempty"`

	// Tickets issues signed tickets for paid orders.
	// +optional
	Tickets Workload `json:"tickets,omitempty"`

	// NetworkPolicy, when enabled, has the operator create one NetworkPolicy
	// per service (queue, booking, relay, tickets) that restricts the ingress
	// of its pods to their HTTP port. Off by default. Egress is not
	// restricted (see networkPolicy.enabled).
	// +optional
	NetworkPolicy *NetworkPolicy `json:"networkPolicy,omitempty"`
}

// PreQueueOrder says how the people who joined before sales opened are ordered.
// +kubebuilder:validation:Enum=Shuffle;FIFO
type PreQueueOrder string

const (
	// PreQueueShuffle draws the pre-queue's order uniformly at random at opening.
	PreQueueShuffle PreQueueOrder = "Shuffle"
	// PreQueueFIFO keeps the pre-queue in arrival order.
	PreQueueFIFO PreQueueOrder = "FIFO"
)

// SalePhase is one phase of a sale: from opensAt, the people its queues
// accept are admitted.
type SalePhase struct {
	// Name of the phase, as access codes carry it: lower-case letters,
	// digits and '-', at most 32.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$')",message="phases[].name must be lower-case letters, digits and '-', at most 32"
	Name string `json:"name"`
	// OpensAt is when the phase's queues start to be admitted. People may
	// join a phase's queue once the phase before it has opened (its
	// pre-queue, shuffled at opensAt).
	OpensAt metav1.Time `json:"opensAt"`
	// Queues of the phase, 1 to 8: a join enters the first one it may.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Queues []PhaseQueue `json:"queues"`
	// MaxSeatsPerCustomer, when set, is the phase's own seat limit per
	// customer, at most holds.maxSeatsPerCustomer: booking holds a customer
	// admitted under the phase to it, counting the seats they hold or
	// bought in any phase. Unset: the event's limit. An order keeps the
	// limit it was held under, so its payment, late or not, is held to it.
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="phases[].maxSeatsPerCustomer must be at least 1"
	// +optional
	MaxSeatsPerCustomer *int32 `json:"maxSeatsPerCustomer,omitempty"`
	// Sections, when set, are the only sections of seating the phase sells
	// to the customers admitted under it (at most 100 names of at most 16
	// characters); booking refuses their holds of other seats.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=16
	// +listType=set
	// +optional
	Sections []string `json:"sections,omitempty"`
}

// PhaseQueue is one queue of a phase. A queue name listed by several
// phases is one line of people: it opens with the first of them and is
// admitted with the weight of the latest open phase that lists it.
type PhaseQueue struct {
	// Name of the queue: lower-case letters, digits and '-', at most 32.
	// "general" is the queue of a sale without phases.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$')",message="phases[].queues[].name must be lower-case letters, digits and '-', at most 32"
	Name string `json:"name"`
	// Weight is the queue's share of admissions while several queues
	// wait, e.g. members 3 : general 1. At least 1.
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="phases[].queues[].weight must be at least 1"
	Weight int32 `json:"weight"`
	// Tiers are the identity token's tier claim values that may enter
	// (at most 16 values of at most 64 characters); empty: anyone.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	// +optional
	Tiers []string `json:"tiers,omitempty"`
	// AccessCode: entry needs an access code issued for this phase
	// (`ticketfair access-codes`).
	// +optional
	AccessCode bool `json:"accessCode,omitempty"`
}

// Admission controls the waiting room.
type Admission struct {
	// MaxActive is the most people in seat selection at once. Default 5000; at least 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=5000
	// +optional
	MaxActive int32 `json:"maxActive,omitempty"`
	// RatePerSecond is the most people admitted per second. Default 500; at least 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=500
	// +optional
	RatePerSecond int32 `json:"ratePerSecond,omitempty"`
	// TickInterval is how often the admitter admits a batch. Default 1s; 100ms to 1m.
	// +kubebuilder:default="1s"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="admission.tickInterval must be a duration such as 1s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('100ms') && duration(self) <= duration('1m'))",message="admission.tickInterval must be between 100ms and 1m"
	TickInterval *metav1.Duration `json:"tickInterval,omitempty"`
	// TokenTTL is how long an access token (and its session) lasts. Default 10m; 1m to 2h.
	// +kubebuilder:default="10m"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="admission.tokenTTL must be a duration such as 10m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1m') && duration(self) <= duration('2h'))",message="admission.tokenTTL must be between 1m and 2h"
	TokenTTL *metav1.Duration `json:"tokenTTL,omitempty"`
	// ClaimTimeout is how long an admitted person has to pick up the access token before the slot goes to the next.
	// Default 60s; at least 5s.
	// +kubebuilder:default="60s"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="admission.claimTimeout must be a duration such as 60s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('5s'))",message="admission.claimTimeout must be at least 5s"
	ClaimTimeout *metav1.Duration `json:"claimTimeout,omitempty"`
	// SelectionWindow is how long after picking up the access token a person who holds no seats still counts
	// as choosing seats, when the admitter sizes its admissions to the seats left. Past it they are presumed
	// gone, so people who walk away silently cannot stall the last seats of a sale; their session stays valid
	// until its token expires. Default 2m; at least 10s.
	// +kubebuilder:default="2m"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="admission.selectionWindow must be a duration such as 2m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('10s'))",message="admission.selectionWindow must be at least 10s"
	SelectionWindow *metav1.Duration `json:"selectionWindow,omitempty"`
	// PreQueue orders the people who joined before sales opened: Shuffle or FIFO. Default Shuffle.
	// +kubebuilder:default=Shuffle
	// +optional
	PreQueue PreQueueOrder `json:"preQueue,omitempty"`
	// Paused stops admission; joins are still accepted.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// Autotune lets the admitter choose the admission rate from the
	// booking service's health, so that holds stay fast: unset, people
	// are admitted at ratePerSecond. With it, admission starts at
	// ratePerSecond (within the autotune bounds) and moves between
	// minRatePerSecond and maxRatePerSecond; maxActive still caps the
	// people in seat selection.
	// +optional
	Autotune *Autotune `json:"autotune,omitempty"`
}

// Autotune steers the admission rate toward a hold latency.
// +kubebuilder:validation:XValidation:rule="self.minRatePerSecond <= self.maxRatePerSecond",message="admission.autotune.minRatePerSecond must not exceed admission.autotune.maxRatePerSecond",fieldPath=".minRatePerSecond",reason=FieldValueInvalid
type Autotune struct {
	// TargetHoldP99 is the 99th percentile of the booking service's
	// server-side hold latency the admitter steers to: it admits fewer
	// people while holds are slower, more while they are well under it.
	// 10ms to 10s, e.g. 100ms. The operator and the queue check the range
	// (a CEL rule here would exceed the schema's CEL cost budget).
	TargetHoldP99 metav1.Duration `json:"targetHoldP99"`
	// MinRatePerSecond is the fewest people admitted per second however
	// slow booking gets. At least 1.
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="admission.autotune.minRatePerSecond must be at least 1"
	MinRatePerSecond int32 `json:"minRatePerSecond"`
	// MaxRatePerSecond is the most people admitted per second however
	// fast booking is. At least minRatePerSecond.
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="admission.autotune.maxRatePerSecond must be at least 1"
	MaxRatePerSecond int32 `json:"maxRatePerSecond"`
}

// Holds controls seat holds.
type Holds struct {
	// TTL is how long held seats stay reserved for payment. Default 5m; 1m to 1h.
	// +kubebuilder:default="5m"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="holds.ttl must be a duration such as 5m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1m') && duration(self) <= duration('1h'))",message="holds.ttl must be between 1m and 1h"
	TTL *metav1.Duration `json:"ttl,omitempty"`
	// MaxSeatsPerCustomer limits the seats one customer may hold or buy. Default 4; 1 to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=4
	// +optional
	MaxSeatsPerCustomer int32 `json:"maxSeatsPerCustomer,omitempty"`
}

// Payment configures the payment provider.
type Payment struct {
	// Timeout is how long the payment provider's checkout for a hold may
	// stay open; it must be shorter than holds.ttl. Default: 4/5 of
	// holds.ttl (4m for the default 5m), computed by the booking service
	// (config.DefaultPaymentTimeout), so setting only holds.ttl never leaves
	// a payment timeout that outlasts the hold. At least 10s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="payment.timeout must be a duration such as 4m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('10s'))",message="payment.timeout must be at least 10s"
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// WebhookSecretRef selects the key of a Secret holding the webhook signing secret.
	// +optional
	WebhookSecretRef *corev1.SecretKeySelector `json:"webhookSecretRef,omitempty"`
	// StripeWebhookSecretRef selects the key of a Secret holding Stripe's
	// webhook signing secrets (whsec_..., comma-separated during a
	// rotation). Set, booking serves the Stripe-shaped webhook
	// POST /payments/stripe/webhook; unset, that route answers 503.
	// +optional
	StripeWebhookSecretRef *corev1.SecretKeySelector `json:"stripeWebhookSecretRef,omitempty"`
}

// Identity configures the verification of customers' identity tokens:
// either a shared HMAC secret or the identity provider's JWKS URL.
// +kubebuilder:validation:XValidation:rule="has(self.hmacSecretRef) != has(self.jwksURL)",message="identity needs exactly one of hmacSecretRef (HS256 tokens) or jwksURL (tokens signed by an identity provider)"
type Identity struct {
	// HMACSecretRef selects the key of a Secret holding the HS256 secret of identity tokens.
	// +optional
	HMACSecretRef *corev1.SecretKeySelector `json:"hmacSecretRef,omitempty"`
	// JWKSURL is the identity provider's JSON Web Key Set, e.g. https://id.example.com/.well-known/jwks.json.
	// At most 2048 characters.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	JWKSURL string `json:"jwksURL,omitempty"`
	// Issuer is the required "iss" claim of identity tokens. Default ticketfair-identity.
	// +kubebuilder:default=ticketfair-identity
	// +kubebuilder:validation:MinLength=1
	// +optional
	Issuer string `json:"issuer,omitempty"`
	// Audience is the required "aud" claim of identity tokens. Default ticketfair.
	// +kubebuilder:default=ticketfair
	// +kubebuilder:validation:MinLength=1
	// +optional
	Audience string `json:"audience,omitempty"`
	// TierClaim names the claim of identity tokens whose string value is
	// the customer's tier (e.g. "member"), which presale phases admit by.
	// At most 64 characters. Unset, the workloads' default claim name applies.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z][A-Za-z0-9_.:/-]*$') && !(self in ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'])",message="identity.tierClaim must be a claim name (a letter, then letters, digits, _ . : / -, e.g. https://example.com/tier) and not a registered claim (iss, sub, aud, exp, nbf, iat, jti)"
	// +optional
	TierClaim string `json:"tierClaim,omitempty"`
	// EmailClaim names the claim of identity tokens whose string value is
	// the customer's email address, where the tickets service mails their
	// tickets (delivery.mail); an address whose email_verified claim is
	// false is not used. At most 64 characters. Unset, the workloads'
	// default claim name applies.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z][A-Za-z0-9_.:/-]*$') && !(self in ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'])",message="identity.emailClaim must be a claim name (a letter, then letters, digits, _ . : / -, e.g. https://example.com/email) and not a registered claim (iss, sub, aud, exp, nbf, iat, jti)"
	// +optional
	EmailClaim string `json:"emailClaim,omitempty"`
}

// Delivery says how tickets reach their buyers. The order page always
// shows them.
type Delivery struct {
	// Mail, when set, has the tickets service mail each paid order's
	// tickets to the buyer's verified email address (identity.emailClaim),
	// retrying a failed send with a growing delay. Unset: no mail.
	// +optional
	Mail *Mail `json:"mail,omitempty"`
}

// Mail configures the ticket mail, one message per paid order.
type Mail struct {
	// SMTP is the server the mails are handed to.
	SMTP SMTP `json:"smtp"`
	// From is the From address of the ticket mails, e.g.
	// tickets@example.com; its domain also names the Message-IDs. At most
	// 254 characters.
	// +kubebuilder:validation:MaxLength=254
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9.!#$%&*+/=?^_{|}~-]+@[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$')",message="delivery.mail.from must be an email address such as tickets@example.com"
	From string `json:"from"`
	// Workers is the number of SMTP connections sending mails in
	// parallel. Default 4; 1 to 64.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=4
	// +optional
	Workers int32 `json:"workers,omitempty"`
}

// SMTPTLS is the transport security to the SMTP server.
// +kubebuilder:validation:Enum=none;starttls;tls
type SMTPTLS string

// SMTP transport security.
const (
	// SMTPStartTLS upgrades the connection with STARTTLS, and fails if the server does not offer it.
	SMTPStartTLS SMTPTLS = "starttls"
	// SMTPImplicitTLS speaks TLS from the first byte (usually port 465).
	SMTPImplicitTLS SMTPTLS = "tls"
	// SMTPNoTLS sends in plain text.
	SMTPNoTLS SMTPTLS = "none"
)

// SMTP locates the SMTP server and says how to authenticate to it.
type SMTP struct {
	// Host is the SMTP server's DNS name or IP address; 1 to 253 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9.:-]+$')",message="delivery.mail.smtp.host must be a DNS name or an IP address"
	Host string `json:"host"`
	// Port is the SMTP server's port. Default 587; 1 to 65535.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=587
	// +optional
	Port int32 `json:"port,omitempty"`
	// TLS is the transport security: starttls (STARTTLS, required: a
	// server that does not offer it is not sent to), tls (TLS from the
	// first byte, usually port 465) or none (plain text, for a relay on
	// the pod's loopback such as a sidecar, or a test server: the mails
	// would cross the network readable). With credentialsSecretRef, the
	// tickets service refuses to start with none unless host is a loopback
	// address. The server's certificate is verified against the system's
	// CAs. Default starttls.
	// +kubebuilder:default=starttls
	// +optional
	TLS SMTPTLS `json:"tls,omitempty"`
	// CredentialsSecretRef names a Secret in the TicketEvent's namespace
	// with the keys username and password, the layout of a
	// kubernetes.io/basic-auth Secret, to authenticate with (SMTP AUTH).
	// Unset: no authentication.
	// +optional
	CredentialsSecretRef *corev1.LocalObjectReference `json:"credentialsSecretRef,omitempty"`
}

// Keys of the Secret that delivery.mail.smtp.credentialsSecretRef names.
const (
	SMTPUsernameKey = "username"
	SMTPPasswordKey = "password"
)

// Gates configures check-in at the doors and ticket transfers.
type Gates struct {
	// GateSecretRef selects the key of a Secret holding the gate secret, from
	// which the credential of each gate device is derived (kubectl
	// ticketfair gate-credential). Unset: the operator generates one into
	// the sale's keys Secret (<name>-keys, key gate-secret). Changing it
	// shuts out every device whose credential came from the old one.
	// +optional
	GateSecretRef *corev1.SecretKeySelector `json:"gateSecretRef,omitempty"`
	// Transfers limits the handing on of tickets between customers.
	// +kubebuilder:default={}
	// +optional
	Transfers Transfers `json:"transfers,omitempty"`
}

// Transfers limits ticket transfers.
type Transfers struct {
	// Max is how many times one ticket may change hands; 0 turns transfers
	// off. Default 3; 0 to 20.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	// +kubebuilder:default=3
	// +optional
	Max *int32 `json:"max,omitempty"`
	// Cutoff is how long before startsAt transfers close. Default 2h; 0s to 720h.
	// +kubebuilder:default="2h"
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="gates.transfers.cutoff must be a duration such as 2h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') || duration(self) <= duration('720h')",message="gates.transfers.cutoff must be at most 720h"
	Cutoff *metav1.Duration `json:"cutoff,omitempty"`
}

// Redis locates the Redis of the waiting room: a single server, a master
// found through Sentinel, or a Redis Cluster.
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'Sentinel') == has(self.masterName)",message="redis.masterName is required in Sentinel mode and only there"
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'Sentinel') || (!has(self.sentinelUsernameSecretRef) && !has(self.sentinelPasswordSecretRef))",message="redis.sentinelUsernameSecretRef and redis.sentinelPasswordSecretRef apply to Sentinel mode only"
type Redis struct {
	// URLSecretRef selects the key of a Secret holding the Redis URL,
	// redis[s]://[user:password@]host:port[/db][?addr=host:port&addr=...]:
	// the server (Standalone), the sentinels (Sentinel) or seed nodes
	// (Cluster, e.g. a managed service's configuration endpoint). URLs may
	// carry passwords, so they live in Secrets; rediss:// turns TLS on.
	URLSecretRef corev1.SecretKeySelector `json:"urlSecretRef"`
	// Mode is Standalone (one server, or a managed service's primary
	// endpoint), Sentinel (the URL names the sentinels) or Cluster (Redis
	// Cluster; an event's keys share one hash slot). Default Standalone.
	// +kubebuilder:default=Standalone
	// +optional
	Mode RedisMode `json:"mode,omitempty"`
	// MasterName is the name under which the sentinels monitor the master
	// (Sentinel mode). 1 to 256 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	MasterName string `json:"masterName,omitempty"`
	// UsernameSecretRef selects the key of a Secret holding the ACL user (instead of the URL's).
	// +optional
	UsernameSecretRef *corev1.SecretKeySelector `json:"usernameSecretRef,omitempty"`
	// PasswordSecretRef selects the key of a Secret holding the password or AUTH token (instead of the URL's).
	// +optional
	PasswordSecretRef *corev1.SecretKeySelector `json:"passwordSecretRef,omitempty"`
	// SentinelUsernameSecretRef selects the key of a Secret holding the sentinels' ACL user.
	// +optional
	SentinelUsernameSecretRef *corev1.SecretKeySelector `json:"sentinelUsernameSecretRef,omitempty"`
	// SentinelPasswordSecretRef selects the key of a Secret holding the sentinels' password, when they require one.
	// +optional
	SentinelPasswordSecretRef *corev1.SecretKeySelector `json:"sentinelPasswordSecretRef,omitempty"`
	// TLS, when set, connects with TLS (as a rediss:// URL does).
	// +optional
	TLS *ClientTLS `json:"tls,omitempty"`
}

// RedisMode is how Redis is reached.
// +kubebuilder:validation:Enum=Standalone;Sentinel;Cluster
type RedisMode string

// Redis modes.
const (
	RedisStandalone RedisMode = "Standalone"
	RedisSentinel   RedisMode = "Sentinel"
	RedisCluster    RedisMode = "Cluster"
)

// ClientTLS is how a client verifies its server, and optionally proves
// itself with a certificate. Every PEM comes from a Secret.
// +kubebuilder:validation:XValidation:rule="has(self.certSecretRef) == has(self.keySecretRef)",message="tls.certSecretRef and tls.keySecretRef go together"
type ClientTLS struct {
	// CASecretRef selects the key of a Secret holding the PEM CA
	// certificates that sign the server's certificate (default: the system's).
	// +optional
	CASecretRef *corev1.SecretKeySelector `json:"caSecretRef,omitempty"`
	// CertSecretRef selects the key of a Secret holding the PEM client certificate.
	// +optional
	CertSecretRef *corev1.SecretKeySelector `json:"certSecretRef,omitempty"`
	// KeySecretRef selects the key of a Secret holding the PEM private key of the client certificate.
	// +optional
	KeySecretRef *corev1.SecretKeySelector `json:"keySecretRef,omitempty"`
	// ServerName is the name the server's certificate must carry (default:
	// the host dialed). At most 253 characters.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`
}

// Postgres locates the PostgreSQL database of orders and seats.
type Postgres struct {
	// URLSecretRef selects the key of a Secret holding the PostgreSQL URL
	// (postgres://user:password@host:5432/db?sslmode=verify-full). Several
	// hosts with target_session_attrs=read-write
	// (postgres://u:p@db-a:5432,db-b:5432/db?target_session_attrs=read-write)
	// follow a failover to whichever is the primary.
	URLSecretRef corev1.SecretKeySelector `json:"urlSecretRef"`
	// CASecretRef selects the key of a Secret holding the PEM CA
	// certificates of the server, checked with sslmode=verify-full in the URL.
	// +optional
	CASecretRef *corev1.SecretKeySelector `json:"caSecretRef,omitempty"`
}

// Kafka locates the Kafka cluster and names the topics.
type Kafka struct {
	// Brokers are the bootstrap brokers, host:port; 1 to 32.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^[^\s,]+:[0-9]{1,5}$`
	Brokers []string `json:"brokers"`
	// TicketIssuedTopic receives one record per paid order. Default ticket-issued.
	// +kubebuilder:default=ticket-issued
	// +optional
	TicketIssuedTopic string `json:"ticketIssuedTopic,omitempty"`
	// RefundRequestedTopic receives one record per refund to make. Default refund-requested.
	// +kubebuilder:default=refund-requested
	// +optional
	RefundRequestedTopic string `json:"refundRequestedTopic,omitempty"`
	// TLS, when set, connects to the brokers with TLS.
	// +optional
	TLS *ClientTLS `json:"tls,omitempty"`
	// SASL, when set, authenticates to the brokers.
	// +optional
	SASL *KafkaSASL `json:"sasl,omitempty"`
}

// KafkaSASL authenticates a client to the brokers.
type KafkaSASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	// +kubebuilder:validation:Enum=PLAIN;SCRAM-SHA-256;SCRAM-SHA-512
	Mechanism string `json:"mechanism"`
	// UsernameSecretRef selects the key of a Secret holding the user.
	UsernameSecretRef corev1.SecretKeySelector `json:"usernameSecretRef"`
	// PasswordSecretRef selects the key of a Secret holding the password.
	PasswordSecretRef corev1.SecretKeySelector `json:"passwordSecretRef"`
}

// Workload sets how one service of the sale runs.
type Workload struct {
	// Replicas of the service; defaults: queue 2, booking 2, relay 1, tickets 2.
	// Ignored while autoscaling is set. 0 to 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Image of the ticketfair workloads; defaults to the operator's --workload-image.
	// +optional
	Image string `json:"image,omitempty"`
	// Resources of the container; defaults per component, measured under a sale (docs/operator.md, Resources).
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector constrains the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of the pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity of the pods (core/v1 Affinity; validated when the Deployment is
	// written, not here, to keep the CRD under the apiserver's size limits).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
}

// ScalableWorkload is a Workload that may be scaled by a HorizontalPodAutoscaler.
type ScalableWorkload struct {
	Workload `json:",inline"`
	// Autoscaling, when set, creates a HorizontalPodAutoscaler that owns the replica count.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
}

// Autoscaling scales a service on CPU utilisation.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="autoscaling.minReplicas must not exceed autoscaling.maxReplicas",fieldPath=".minReplicas",reason=FieldValueInvalid
type Autoscaling struct {
	// MinReplicas is the fewest replicas. Default 2; at least 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=2
	// +optional
	MinReplicas int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the most replicas; 1 to 1000.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxReplicas int32 `json:"maxReplicas"`
	// TargetCPUUtilizationPercentage is the average CPU use, in percent of requests, to scale towards.
	// Default 70; 10 to 100.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=70
	// +optional
	TargetCPUUtilizationPercentage int32 `json:"targetCPUUtilizationPercentage,omitempty"`
}

// NetworkPolicy restricts which sources may connect to the sale's pods.
type NetworkPolicy struct {
	// Enabled creates a NetworkPolicy named <name>-<service> for each of
	// queue, booking, relay and tickets, selecting that service's pods, with
	// policyTypes [Ingress] only: ingress is allowed on the pods' HTTP port
	// ("http", 8080: the API, /healthz, /readyz, /metrics) from the
	// ingressFrom peers, and on no other port. The migration Job's pods are
	// not selected. Egress is deliberately not restricted: Redis, PostgreSQL,
	// Kafka, the identity provider's JWKS URL and the Kubernetes API server
	// (the queue's admitter Lease) are addresses the operator cannot know.
	// Turning it off deletes the NetworkPolicies. It takes effect only if the
	// cluster's network plugin enforces NetworkPolicies.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// IngressFrom are the sources allowed to reach the HTTP port of every
	// service of the sale (NetworkPolicyPeer, as in a NetworkPolicy's
	// ingress.from): typically the namespace of the ingress controller or
	// gateway in front of the queue, booking and tickets APIs. Also list the
	// operator's namespace (it reads the queue's and the tickets service's
	// /events/{eventId}/stats for status.sale and status.tickets), your Prometheus (/metrics) and whatever calls booking's
	// internal endpoints, or they are cut off. Kubelet probes come from the
	// node and are always allowed. Empty allows any source on the HTTP port.
	// May be set while enabled is false, to prepare a policy before turning it on. At most 32 peers.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:XValidation:rule="has(self.ipBlock) ? !has(self.podSelector) && !has(self.namespaceSelector) : has(self.podSelector) || has(self.namespaceSelector)",message="each networkPolicy.ingressFrom peer needs podSelector and/or namespaceSelector, or ipBlock alone"
	// +listType=atomic
	// +optional
	IngressFrom []networkingv1.NetworkPolicyPeer `json:"ingressFrom,omitempty"`
}

// TicketEventStatus reports how the sale stands.
type TicketEventStatus struct {
	// ObservedGeneration is the generation of the spec last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Progressing, Degraded, SalesOpen.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// SeatsTotal is the number of seats the seating describes.
	// +optional
	SeatsTotal int64 `json:"seatsTotal,omitempty"`
	// Migration reports the Job that migrates the database and seeds the seats.
	// +optional
	Migration MigrationStatus `json:"migration,omitempty"`
	// Components reports the replicas of each service.
	// +optional
	Components ComponentsStatus `json:"components,omitempty"`
	// Sale holds the latest figures reported by the queue service; they are
	// kept when the queue cannot be reached (see the SalesOpen condition).
	// +optional
	Sale *SaleStatus `json:"sale,omitempty"`
	// Tickets holds the latest figures reported by the tickets service:
	// tickets issued, their mails and check-in at the gates. They are kept
	// when the tickets service cannot be reached.
	// +optional
	Tickets *TicketsStatus `json:"tickets,omitempty"`
}

// Condition types of a TicketEvent.
const (
	// ConditionReady is True when the migration succeeded and every service is available.
	ConditionReady = "Ready"
	// ConditionProgressing is True while the operator is creating or rolling out something.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when something failed (migration Job, missing configuration).
	ConditionDegraded = "Degraded"
	// ConditionSalesOpen is True once sales opened, as reported by the queue.
	ConditionSalesOpen = "SalesOpen"
)

// MigrationPhase is the state of the migration Job.
type MigrationPhase string

// Migration phases.
const (
	MigrationPending   MigrationPhase = "Pending"
	MigrationRunning   MigrationPhase = "Running"
	MigrationSucceeded MigrationPhase = "Succeeded"
	MigrationFailed    MigrationPhase = "Failed"
)

// MigrationStatus reports the migration Job.
type MigrationStatus struct {
	// JobName is the current migration Job.
	// +optional
	JobName string `json:"jobName,omitempty"`
	// Phase is Pending, Running, Succeeded or Failed.
	// +optional
	Phase MigrationPhase `json:"phase,omitempty"`
}

// ComponentsStatus reports the replicas of each service.
type ComponentsStatus struct {
	// +optional
	Queue ComponentStatus `json:"queue,omitempty"`
	// +optional
	Booking ComponentStatus `json:"booking,omitempty"`
	// +optional
	Relay ComponentStatus `json:"relay,omitempty"`
	// +optional
	Tickets ComponentStatus `json:"tickets,omitempty"`
}

// ComponentStatus reports one Deployment.
type ComponentStatus struct {
	// Replicas desired.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas that pass their readiness probe.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

// SaleStatus holds the sale figures reported by the queue service.
type SaleStatus struct {
	// Waiting is the number of people in the waiting room (pre-queue included).
	Waiting int64 `json:"waiting"`
	// Active is the number of people in seat selection now.
	Active int64 `json:"active"`
	// AdmittedTotal is the number of people admitted so far.
	AdmittedTotal int64 `json:"admittedTotal"`
	// Remaining is the number of seats not sold yet: available or held.
	// 0 means sold out; -1 until the booking service has published it.
	Remaining int64 `json:"remaining"`
	// Held is the number of seats held by customers who have not paid yet
	// (part of remaining); -1 until the booking service has published it.
	Held int64 `json:"held"`
	// Sold is the number of seats sold; -1 until the booking service has
	// published it.
	Sold int64 `json:"sold"`
	// SoldOut is true once every seat is sold.
	// +optional
	SoldOut bool `json:"soldOut,omitempty"`
	// Paused is true while admission is paused.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// AdmitRate is the people per second the admitter admits at now: the
	// rate autotune chose (spec.admission.autotune), or ratePerSecond
	// without it.
	// +optional
	AdmitRate int64 `json:"admitRate,omitempty"`
	// UpdatedAt is when the queue computed these figures. A refresh that
	// changes no figure is not written, so it may be older than the last one.
	// +optional
	UpdatedAt metav1.Time `json:"updatedAt,omitempty"`
	// Phase is the latest phase opened (empty before the first, or
	// without phases).
	// +optional
	Phase string `json:"phase,omitempty"`
	// Queues are the figures of each queue of a sale with phases.
	// +listType=map
	// +listMapKey=name
	// +optional
	Queues []QueueStatus `json:"queues,omitempty"`
}

// QueueStatus is one queue's figures.
type QueueStatus struct {
	Name string `json:"name"`
	// Weight is the queue's weight now.
	Weight int32 `json:"weight"`
	// Waiting is the number of people in the queue.
	Waiting int64 `json:"waiting"`
	// Admitted is the number of people admitted from it so far.
	Admitted int64 `json:"admitted"`
}

// TicketsStatus holds the figures reported by the tickets service.
type TicketsStatus struct {
	// Tickets is the number of tickets issued and not cancelled.
	Tickets int64 `json:"tickets"`
	// EmailsSent is the number of ticket mails the SMTP server accepted.
	EmailsSent int64 `json:"emailsSent"`
	// EmailsPending is the number of ticket mails not sent yet.
	EmailsPending int64 `json:"emailsPending"`
	// EmailsFailing is the number of pending mails whose sending failed at
	// least once (part of emailsPending).
	EmailsFailing int64 `json:"emailsFailing"`
	// CheckedIn is the number of tickets admitted at the gates.
	CheckedIn int64 `json:"checkedIn"`
	// Conflicts is the number of tickets an offline gate admitted after
	// another gate had admitted them.
	Conflicts int64 `json:"conflicts"`
	// LastMinute is the admissions of the last full minute, all gates.
	LastMinute int64 `json:"lastMinute"`
	// Gates are the admissions of each gate, by gate name.
	// +listType=map
	// +listMapKey=gate
	// +optional
	Gates []GateStatus `json:"gates,omitempty"`
	// UpdatedAt is when the tickets service computed these figures. A
	// refresh that changes no figure is not written, so it may be older
	// than the last one.
	// +optional
	UpdatedAt metav1.Time `json:"updatedAt,omitempty"`
}

// GateStatus is one gate's admissions.
type GateStatus struct {
	// Gate is the gate's name, as its credential carries it.
	Gate string `json:"gate"`
	// Admitted is the number of tickets the gate admitted.
	Admitted int64 `json:"admitted"`
	// Offline is the number of those admitted while the gate was offline,
	// reported when it reconnected.
	Offline int64 `json:"offline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=te,categories=ticketfair
// +kubebuilder:printcolumn:name="Event",type=integer,JSONPath=`.spec.eventId`
// +kubebuilder:printcolumn:name="Display Name",type=string,JSONPath=`.spec.displayName`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Sales Open",type=string,JSONPath=`.status.conditions[?(@.type=="SalesOpen")].status`
// Opens is a string column: a date column prints an age, which for a future
// time is "<invalid>".
// +kubebuilder:printcolumn:name="Opens",type=string,JSONPath=`.spec.salesOpenAt`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.sale.phase`
// +kubebuilder:printcolumn:name="Waiting",type=integer,JSONPath=`.status.sale.waiting`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.sale.active`
// +kubebuilder:printcolumn:name="Sold",type=integer,JSONPath=`.status.sale.sold`
// +kubebuilder:printcolumn:name="Held",type=integer,JSONPath=`.status.sale.held`,priority=1
// +kubebuilder:printcolumn:name="Remaining",type=integer,JSONPath=`.status.sale.remaining`,priority=1
// +kubebuilder:printcolumn:name="Seats",type=integer,JSONPath=`.status.seatsTotal`,priority=1
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=`.status.sale.admittedTotal`,priority=1
// +kubebuilder:printcolumn:name="Checked In",type=integer,JSONPath=`.status.tickets.checkedIn`,priority=1
// +kubebuilder:printcolumn:name="Migration",type=string,JSONPath=`.status.migration.phase`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// TicketEvent is one concert sale: the operator provisions its queue, booking,
// relay and ticket services and reports the sale's progress.
type TicketEvent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TicketEventSpec   `json:"spec,omitempty"`
	Status TicketEventStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TicketEventList contains a list of TicketEvent.
type TicketEventList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TicketEvent `json:"items"`
}
