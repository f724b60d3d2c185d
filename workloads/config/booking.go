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

import "time"

// Booking configures `ticketfair booking` and `ticketfair migrate`.
type Booking struct {
	Server
	Event
	Postgres
	Redis
	Identity
	AccessTokens
	RateLimits

	AccessTokenJWKSURL  string        `env:"TICKETFAIR_ACCESS_TOKEN_JWKS_URL" flag:"access-token-jwks-url" usage:"JWKS URL of the queue service (instead of TICKETFAIR_ACCESS_TOKEN_KEYS)"`
	HoldTTL             time.Duration `env:"TICKETFAIR_HOLD_TTL" flag:"hold-ttl" default:"5m" usage:"how long held seats stay reserved"`
	PaymentTimeout      time.Duration `env:"TICKETFAIR_PAYMENT_TIMEOUT" flag:"payment-timeout" usage:"how long the payment provider's checkout for a hold may stay open, shorter than the hold TTL so no payment completes after its hold expired; holds and orders carry it as payBy (default: 4/5 of the hold TTL)"`
	MaxSeatsPerCustomer int           `env:"TICKETFAIR_MAX_SEATS_PER_CUSTOMER" flag:"max-seats-per-customer" default:"4" usage:"seats one customer may hold or buy"`
	// Phases are the sale's phases, as the queue reads them (a JSON list
	// of Phase): a hold follows the seat limit and the sections of the
	// phase its access token names.
	Phases               string        `env:"TICKETFAIR_PHASES" flag:"phases" usage:"the sale's phases as JSON, as the queue's: a hold keeps to the maxSeatsPerCustomer (at most max-seats-per-customer) and sections of the phase its access token names (empty: no phases)"`
	WebhookSecrets       string        `env:"TICKETFAIR_WEBHOOK_SECRETS" flag:"webhook-secrets" secret:"true" usage:"comma-separated payment webhook secrets (several during rotation)"`
	StripeWebhookSecrets string        `env:"TICKETFAIR_STRIPE_WEBHOOK_SECRETS" flag:"stripe-webhook-secrets" secret:"true" usage:"comma-separated Stripe webhook signing secrets (whsec_...): enables the Stripe-shaped webhook POST /payments/stripe/webhook"`
	WebhookTolerance     time.Duration `env:"TICKETFAIR_WEBHOOK_TOLERANCE" flag:"webhook-tolerance" default:"5m" usage:"accepted age of a webhook timestamp"`
	ServiceToken         string        `env:"TICKETFAIR_SERVICE_TOKEN" flag:"service-token" secret:"true" usage:"bearer token of internal callers of /orders/{id}/confirm"`
	SweepInterval        time.Duration `env:"TICKETFAIR_SWEEP_INTERVAL" flag:"sweep-interval" default:"2s" usage:"how often expired holds return to stock"`
	Seating              string        `env:"TICKETFAIR_SEATING" flag:"seating" usage:"seating to seed, the shorthand of rectangular sections: name:price:rows:seatsPerRow;... (migrate; instead of a venue)"`
	// Venue is the venue model (a JSON Venue); VenueFile names a file that
	// holds one, such as a mounted ConfigMap key. At most one of Seating,
	// Venue and VenueFile is set.
	Venue            string        `env:"TICKETFAIR_VENUE" flag:"venue" usage:"the venue to seed and sell, as JSON: {categories, sections: [{name, kind, category, rank, capacity, rows}]} (instead of seating)"`
	VenueFile        string        `env:"TICKETFAIR_VENUE_FILE" flag:"venue-file" usage:"file holding the venue as JSON (instead of venue or seating)"`
	Currency         string        `env:"TICKETFAIR_CURRENCY" flag:"currency" default:"EUR" usage:"ISO 4217 currency of the event's prices"`
	SweepBatch       int           `env:"TICKETFAIR_SWEEP_BATCH" flag:"sweep-batch" default:"500" usage:"rows the sweeper claims per statement"`
	SeatMapRefresh   time.Duration `env:"TICKETFAIR_SEAT_MAP_REFRESH" flag:"seat-map-refresh" default:"1s" usage:"how old the cached seat map gets before a refresh (while one runs, a map up to 5 times as old is served)"`
	DatabaseMaxConns int           `env:"TICKETFAIR_DATABASE_MAX_CONNS" flag:"database-max-conns" default:"20" usage:"size of the PostgreSQL connection pool"`
}

// DefaultPaymentTimeout is the payment timeout when none is set: 4/5 of the
// hold TTL, which leaves the last fifth of a hold (a minute of the default
// five) between the end of the provider's checkout and the hold's. It is the
// only place this default is computed: booking applies it to an unset
// TICKETFAIR_PAYMENT_TIMEOUT, and the operator to an unset spec.payment.timeout,
// so the timeout follows the hold TTL it must stay below.
func DefaultPaymentTimeout(holdTTL time.Duration) time.Duration { return holdTTL * 4 / 5 }
