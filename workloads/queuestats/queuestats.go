// Package queuestats is the JSON the queue serves at
// GET /events/{eventId}/stats: the sale figures the operator copies into a
// TicketEvent's status. One type for both sides, so the contract cannot
// drift.
package queuestats

import "time"

// Stats are the sale figures of one event.
type Stats struct {
	Waiting       int64     `json:"waiting"`
	Active        int64     `json:"active"`
	AdmittedTotal int64     `json:"admittedTotal"`
	Remaining     int64     `json:"remaining"` // seats not sold (available or held); -1 unknown
	Held          int64     `json:"held"`      // seats held; -1 unknown
	Sold          int64     `json:"sold"`      // seats sold; -1 unknown
	SalesOpen     bool      `json:"salesOpen"`
	Paused        bool      `json:"paused"`
	SoldOut       bool      `json:"soldOut"`
	UpdatedAt     time.Time `json:"updatedAt"`
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
