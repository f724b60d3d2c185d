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

// Package events defines the messages the booking service writes to its
// outbox and the relay publishes to Kafka. Consumers deduplicate on the
// outbox id carried in the HeaderOutboxID header.
package events

import "time"

// Topics and event types. Booking's outbox rows are written by the
// database (workloads/internal/migrations/functions/confirm_payment.sql)
// with these names and the JSON field names below: changing either needs
// that file changed too, and booking's tests decode its rows with these
// types.
const (
	TopicTicketIssued    = "ticket-issued"
	TopicRefundRequested = "refund-requested"

	TypeTicketIssued    = "ticket-issued"
	TypeRefundRequested = "refund-requested"

	// HeaderOutboxID carries the outbox row id (decimal) of a message.
	HeaderOutboxID = "outbox-id"
	// HeaderEventType carries the event type.
	HeaderEventType = "event-type"
)

// Seat is one seat of an order.
type Seat struct {
	SeatID  string `json:"seatId"`
	Section string `json:"section"`
	Price   string `json:"price"` // decimal string, e.g. "89.50"
}

// TicketIssued says an order was paid: one ticket is due per seat. The
// message key is the order id.
type TicketIssued struct {
	OrderID    string    `json:"orderId"`
	EventID    int64     `json:"eventId"`
	CustomerID string    `json:"customerId"`
	PaymentID  string    `json:"paymentId"`
	Amount     string    `json:"amount"`
	Currency   string    `json:"currency"`
	Seats      []Seat    `json:"seats"`
	PaidAt     time.Time `json:"paidAt"`
	// Email is the buyer's verified address, kept with the order at hold
	// time: where the tickets are mailed ("" when the token had none).
	Email string `json:"email,omitempty"`
}

// RefundRequested says a payment bought no seats and must be paid back:
// its order cannot be fulfilled (seat taken, amount mismatch, seat limit)
// or was already settled by another payment. There is exactly one per
// payment: refund by PaymentID (an order may have several).
type RefundRequested struct {
	OrderID    string    `json:"orderId"`
	EventID    int64     `json:"eventId"`
	CustomerID string    `json:"customerId"`
	PaymentID  string    `json:"paymentId"`
	Amount     string    `json:"amount"`
	Currency   string    `json:"currency"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}
