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

// Package queueapi is the JSON the queue serves to the waiting crowd:
// joining (POST /events/{eventId}/queue), polling and leaving
// (GET and DELETE /events/{eventId}/queue/{queueId}), the public state
// (GET /events/{eventId}/queue/state) and the error body. The queue
// encodes these types and its clients (the load generator, the tests)
// decode them, so the contract cannot drift. The operator's figures are
// in queuestats.
package queueapi

import "time"

// Status of a Place.
const (
	StatusWaiting  = "waiting"
	StatusAdmitted = "admitted"
	StatusPaused   = "paused"
	StatusSoldOut  = "sold_out"
	StatusExpired  = "expired" // admitted, the session ran out
	StatusClosed   = "closed"  // left the queue
)

// Status of the State (besides StatusPaused and StatusSoldOut).
const (
	StatusPrequeue = "prequeue" // sales not open yet
	StatusOpen     = "open"
)

// Place is the answer of a join and a poll: one person's place.
type Place struct {
	QueueID string `json:"queueId,omitempty"`
	// Status is waiting, admitted, paused, sold_out, expired or closed.
	Status string `json:"status"`
	// Place is the score the queueId carries, once sales are open: the page
	// compares it with the public state's watermark.
	Place                int64      `json:"place,omitempty"`
	Position             int64      `json:"position"`
	Ahead                int64      `json:"ahead"`
	EstimatedWaitSeconds int64      `json:"estimatedWaitSeconds"`
	PollAfterSeconds     int        `json:"pollAfterSeconds"`
	SalesOpen            bool       `json:"salesOpen"`
	SalesOpenAt          *time.Time `json:"salesOpenAt,omitempty"` // before opening: for the countdown
	AccessToken          string     `json:"accessToken,omitempty"`
	AccessTokenExpiresAt *time.Time `json:"accessTokenExpiresAt,omitempty"`
	// Queue is the queue the place is in; Phase the sale phase that opens
	// it (empty for a sale without phases). Position, Ahead and the wait
	// are within the queue; SalesOpen and SalesOpenAt are the queue's.
	Queue string `json:"queue,omitempty"`
	Phase string `json:"phase,omitempty"`
}

// Left is the answer of leaving the queue.
type Left struct {
	Status string `json:"status"` // closed
}

// State is the public state: what the waiting page needs to place itself,
// identical for everyone, so a CDN can answer it. A waiting person's place
// is the score their queueId carries (Place.Place); they have been
// admitted once Watermark >= place, and then (only then) ask their own
// endpoint for the access token.
type State struct {
	// Status is prequeue (sales not open), open, paused or sold_out.
	Status      string     `json:"status"`
	SalesOpen   bool       `json:"salesOpen"`
	SalesOpenAt *time.Time `json:"salesOpenAt,omitempty"`
	Paused      bool       `json:"paused"`
	SoldOut     bool       `json:"soldOut"`
	// Watermark is the place of the last admitted person, -1 before the
	// first admission: every place at or below it has been let in.
	Watermark int64 `json:"watermark"`
	Waiting   int64 `json:"waiting"`
	// AdmissionRate is admissions per second observed over the last ~10 s
	// (the configured rate before any was seen).
	AdmissionRate float64 `json:"admissionRate"`
	// Samples are [rank, place] points of the waiting queue in order: the
	// number ahead of a place is interpolated between them. None before
	// opening, when no rank exists yet.
	Samples [][2]int64 `json:"samples"`
	// Phase is the latest phase opened (empty before the first, or for a
	// sale without phases), Queues the figures of each queue of a sale
	// with phases: a place compares with its own queue's watermark and
	// samples.
	Phase  string       `json:"phase,omitempty"`
	Queues []QueueState `json:"queues,omitempty"`
}

// QueueState is one queue's part of the public state.
type QueueState struct {
	Name    string     `json:"name"`
	Phase   string     `json:"phase"` // the phase that opens the queue
	Weight  int        `json:"weight"`
	Open    bool       `json:"open"`
	OpensAt *time.Time `json:"opensAt,omitempty"`
	// Watermark, Waiting, AdmissionRate and Samples are State's, for
	// this queue alone; Admitted is its admissions so far.
	Watermark     int64      `json:"watermark"`
	Waiting       int64      `json:"waiting"`
	Admitted      int64      `json:"admitted"`
	AdmissionRate float64    `json:"admissionRate"`
	Samples       [][2]int64 `json:"samples"`
}

// Ahead is the waiting page's estimate of the people ahead of place: place
// interpolated between the sampled [rank, place] points.
func (st State) Ahead(place int64) int64 {
	sm := st.Samples
	i := 0
	for i < len(sm) && sm[i][1] < place {
		i++
	}
	switch {
	case len(sm) == 0 || i == 0:
		return 0
	case i == len(sm):
		return st.Waiting
	}
	lo, hi := sm[i-1], sm[i]
	if hi[1] == lo[1] {
		return hi[0]
	}
	return lo[0] + int64(float64(place-lo[1])/float64(hi[1]-lo[1])*float64(hi[0]-lo[0]))
}

// StateMaxAge is how long a CDN or browser may reuse the public state
// (its Cache-Control max-age): with it, a waiting crowd of any size costs
// the origin about one request per second per cache.
const StateMaxAge = time.Second

// Heartbeat is how often the waiting page asks its per-person endpoint
// when the public state gives no reason to (its turn has not come): rare,
// so that a long wait costs the origin about 0.2 requests a minute. The
// page (web/assets/app.js) states it too.
const Heartbeat = 5 * time.Minute

// PollAfter is the spacing of polls, in seconds, for an expected wait:
// 2 s near the front, up to 15 s far back, so a long queue does not poll
// at the rate it is long. The queue advises it (pollAfterSeconds) and the
// page uses it between reads of the public state.
func PollAfter(waitSeconds float64) int {
	switch {
	case waitSeconds < 10:
		return 2
	case waitSeconds < 60:
		return 5
	default:
		return int(min(max(waitSeconds/10, 5), 15))
	}
}

// ErrorBody is the JSON of every error answer:
// {"error": {"code": ..., "message": ...}}.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Error is the error of an ErrorBody: a stable machine code and a message
// meant for people.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
