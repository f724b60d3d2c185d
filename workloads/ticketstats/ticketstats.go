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

// Package ticketstats is the JSON the tickets service serves at
// GET /events/{eventId}/stats: the delivery and door figures the operator
// copies into a TicketEvent's status. One type for both sides, so the
// contract cannot drift.
package ticketstats

import "time"

// Stats are the figures of one event's tickets.
type Stats struct {
	Tickets int64 `json:"tickets"` // issued and not cancelled
	// Emails: sent (accepted by the SMTP server), pending (not yet),
	// failing (pending after at least one failed attempt).
	EmailsSent    int64 `json:"emailsSent"`
	EmailsPending int64 `json:"emailsPending"`
	EmailsFailing int64 `json:"emailsFailing"`
	// CheckedIn counts admissions; Conflicts codes admitted by an offline
	// gate after another gate had admitted them.
	CheckedIn int64       `json:"checkedIn"`
	Conflicts int64       `json:"conflicts"`
	Gates     []GateStats `json:"gates"`
	// LastMinute is the admissions of the last full minute, all gates.
	LastMinute int64     `json:"lastMinute"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// GateStats is one gate's admissions.
type GateStats struct {
	Gate     string `json:"gate"`
	Admitted int64  `json:"admitted"`
	Offline  int64  `json:"offline"`
}
