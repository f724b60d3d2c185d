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

// Queue configures `ticketfair queue`: the waiting room and its admitter.
// The admission fields are live: the admitter also follows the TicketEvent.
type Queue struct {
	Server
	Event
	Redis
	Identity
	AccessTokens
	Admission
	RateLimits
	ProofOfWork

	SalesOpenAt string `env:"TICKETFAIR_SALES_OPEN_AT" flag:"sales-open-at" live:"true" usage:"RFC 3339 time when sales open; joins before it form the pre-queue"`
	// Phases are the sale's phases (a JSON list of Phase); empty: one
	// phase, the general sale at SalesOpenAt, with one queue.
	Phases string `env:"TICKETFAIR_PHASES" flag:"phases" live:"true" usage:"the sale's phases as JSON: [{name, opensAt, queues: [{name, weight, tiers, accessCode}]}] (empty: one general queue opening at sales-open-at)"`
	// AccessCodeKey signs and checks the event's access codes.
	AccessCodeKey string `env:"TICKETFAIR_ACCESS_CODE_KEY" flag:"access-code-key" secret:"true" usage:"base64 key of the event's access codes (empty: codes are refused)"`
	// JoinBatch coalesces the joins arriving at one pod at the same moment
	// into one script call.
	JoinBatch int `env:"TICKETFAIR_JOIN_BATCH" flag:"join-batch" default:"256" usage:"most concurrent joins coalesced into one Redis script call (1: one call per join)"`
	// JoinLinger lets a batch wait for more joins once the last call
	// carried several, until as many as then are waiting: a call's cost to
	// Redis is mostly per call, not per join. A join alone is never held
	// back.
	JoinLinger time.Duration `env:"TICKETFAIR_JOIN_LINGER" flag:"join-linger" default:"2ms" usage:"how long a batch of joins gathers more while joins arrive together, at most until it holds as many as the last call (0: only those already waiting)"`

	// AdmitStep spreads each tick's admissions over steps: people reach
	// booking evenly instead of in a burst at every tick.
	AdmitStep time.Duration `env:"TICKETFAIR_ADMIT_STEP" flag:"admit-step" default:"50ms" usage:"shortest admission step: each tick's admissions are spread evenly over steps at least this long (0: all at once, each tick)"`

	// Admitter and leader election.
	Admitter        bool          `env:"TICKETFAIR_ADMITTER" flag:"admitter" default:"true" usage:"run the admitter in this process"`
	LeaderElection  bool          `env:"TICKETFAIR_LEADER_ELECTION" flag:"leader-election" default:"true" usage:"elect the admitter through a Kubernetes Lease; false runs a single admitter without election"`
	LeaseName       string        `env:"TICKETFAIR_LEASE_NAME" flag:"lease-name" usage:"name of the admitter's Lease (default ticketfair-admitter-<eventId>)"`
	Namespace       string        `env:"TICKETFAIR_NAMESPACE" flag:"namespace" usage:"namespace of the Lease and the TicketEvent (in a pod: from the downward API)"`
	PodName         string        `env:"TICKETFAIR_POD_NAME" flag:"pod-name" usage:"identity in leader election (in a pod: from the downward API)"`
	TicketEventName string        `env:"TICKETFAIR_TICKETEVENT_NAME" flag:"ticketevent-name" usage:"TicketEvent whose spec.admission is followed live (empty: configuration from env only)"`
	LeaseDuration   time.Duration `env:"TICKETFAIR_LEASE_DURATION" flag:"lease-duration" default:"15s" usage:"leader election lease duration"`
	RenewDeadline   time.Duration `env:"TICKETFAIR_RENEW_DEADLINE" flag:"renew-deadline" default:"10s" usage:"leader election renew deadline"`
	RetryPeriod     time.Duration `env:"TICKETFAIR_RETRY_PERIOD" flag:"retry-period" default:"2s" usage:"leader election retry period"`
	Kubeconfig      string        `env:"TICKETFAIR_KUBECONFIG" flag:"kubeconfig" usage:"kubeconfig outside a cluster (in a pod: in-cluster config)"`
}

// Admission is the live part of the queue's configuration (tagged
// live:"true"). The operator renders it from TicketEvent.spec.admission.
type Admission struct {
	MaxActive     int           `env:"TICKETFAIR_MAX_ACTIVE" flag:"max-active" live:"true" default:"5000" usage:"most people in seat selection at once"`
	RatePerSecond int           `env:"TICKETFAIR_ADMIT_RATE" flag:"admit-rate" live:"true" default:"500" usage:"most admissions per second"`
	TickInterval  time.Duration `env:"TICKETFAIR_TICK_INTERVAL" flag:"tick-interval" live:"true" default:"1s" usage:"admitter tick"`
	TokenTTL      time.Duration `env:"TICKETFAIR_TOKEN_TTL" flag:"token-ttl" live:"true" default:"10m" usage:"lifetime of an access token and its session"`
	ClaimTimeout  time.Duration `env:"TICKETFAIR_CLAIM_TIMEOUT" flag:"claim-timeout" live:"true" default:"60s" usage:"time an admitted person has to pick up the token"`
	// SelectionWindow bounds who the admitter counts as still choosing
	// seats: a session that picked up its token longer ago and holds
	// nothing is presumed gone (it stays valid until its token expires).
	// Without it, people who walk away silently, after a failed payment
	// say, stall the last seats of a sale for a whole token TTL.
	SelectionWindow time.Duration `env:"TICKETFAIR_SELECTION_WINDOW" flag:"selection-window" live:"true" default:"2m" usage:"how long after picking up the token a person without a hold counts as choosing seats when admissions are sized to the seats left"`
	PreQueue        string        `env:"TICKETFAIR_PRE_QUEUE" flag:"pre-queue" live:"true" default:"shuffle" usage:"order of the pre-queue at opening: shuffle or fifo"`
	Paused          bool          `env:"TICKETFAIR_PAUSED" flag:"paused" live:"true" usage:"stop admitting (joins still accepted)"`
	// Autotune lets the admitter choose its rate, between AutotuneMinRate
	// and AutotuneMaxRate, so that booking's server-side hold p99 stays at
	// or under AutotuneHoldP99 (see the queue's autotune.go). It is off
	// unless all three are set; RatePerSecond is then where it starts.
	AutotuneHoldP99 time.Duration `env:"TICKETFAIR_AUTOTUNE_HOLD_P99" flag:"autotune-hold-p99" live:"true" usage:"booking's server-side hold p99 the admitter steers its rate to (0: autotune off, admit-rate applies)"`
	AutotuneMinRate int           `env:"TICKETFAIR_AUTOTUNE_MIN_RATE" flag:"autotune-min-rate" live:"true" usage:"lowest admissions per second autotune sets"`
	AutotuneMaxRate int           `env:"TICKETFAIR_AUTOTUNE_MAX_RATE" flag:"autotune-max-rate" live:"true" usage:"highest admissions per second autotune sets"`
}

// Autotuned reports whether the admitter tunes its rate (AutotuneHoldP99).
func (a Admission) Autotuned() bool { return a.AutotuneHoldP99 > 0 }

// The hold p99 autotune may aim at: below 10 ms the target is under a
// hold's own transaction and only starves the sale; above 10 s it no
// longer protects anyone.
const (
	MinAutotuneHoldP99 = 10 * time.Millisecond
	MaxAutotuneHoldP99 = 10 * time.Second
)
