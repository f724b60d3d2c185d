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

// Package queuestats is the JSON the queue serves at
// GET /events/{eventId}/stats: the sale figures the operator copies into a
// TicketEvent's status. One type for both sides, so the contract cannot
// drift.
package queuestats

import "time"

// Stats are the sale figures of one event.
type Stats struct {
	Waiting       int64 `json:"waiting"`
	Active        int64 `json:"active"`
	AdmittedTotal int64 `json:"admittedTotal"`
	Remaining     int64 `json:"remaining"` // seats not sold (available or held); -1 unknown
	Held          int64 `json:"held"`      // seats held; -1 unknown
	Sold          int64 `json:"sold"`      // seats sold; -1 unknown
	SalesOpen     bool  `json:"salesOpen"`
	Paused        bool  `json:"paused"`
	SoldOut       bool  `json:"soldOut"`
	// AdmitRate is the admissions per second the admitter runs at: the
	// rate autotune chose (0 while no admitter published one), or the
	// configured rate without autotune.
	AdmitRate int64     `json:"admitRate"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Phase is the latest phase opened and Queues each queue's figures,
	// for a sale with phases.
	Phase  string       `json:"phase,omitempty"`
	Queues []QueueStats `json:"queues,omitempty"`
}

// QueueStats is one queue's figures.
type QueueStats struct {
	Name     string `json:"name"`
	Weight   int    `json:"weight"`
	Waiting  int64  `json:"waiting"`
	Admitted int64  `json:"admitted"`
}
