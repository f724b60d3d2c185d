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

// Package ticketmail sends the ticket mails: one message per paid order (and
// per completed transfer) with a QR code per ticket and a calendar entry.
//
// A mail is enqueued into the table mail_outbox in the transaction that
// issues its tickets, keyed so that a redelivered message enqueues nothing,
// and sent over SMTP by the Sender's workers. Delivery is at least once: a
// row is marked sent after the SMTP server accepted the message, so a crash
// in between sends it again, with the same Message-ID, which mail clients
// recognise. A mail server that is down delays mails and loses none: their
// rows stay pending, retried with backoff.
package ticketmail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Kind says why a mail is sent.
type Kind string

const (
	KindOrder    Kind = "order"    // the tickets of a paid order, to the buyer
	KindTransfer Kind = "transfer" // a transferred ticket, to its new holder
)

// Mail is one message to send.
type Mail struct {
	Key       string // OrderKey or TransferKey: deduplicates, names the Message-ID
	Kind      Kind
	EventID   int64
	OrderID   string   // the paid order (order mails)
	TicketIDs []string // the tickets the mail carries, in this order
	To        string   // recipient address
}

// ErrInvalidRecipient reports a recipient address that cannot be mailed.
// Enqueue returns it before touching the transaction, so the caller may
// issue the tickets without a mail.
var ErrInvalidRecipient = errors.New("ticketmail: invalid recipient address")

// OrderKey is the key of a paid order's mail.
func OrderKey(orderID string) string { return key("order", orderID) }

// TransferKey is the key of the mail to the holder a ticket's transfer
// made; generation counts the ticket's transfers, so each one mails once.
func TransferKey(ticketID string, generation int) string {
	return key("transfer", ticketID, strconv.Itoa(generation))
}

// key hashes the parts: ids may hold any character, and a Message-ID's
// local part takes only a few.
func key(kind string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return kind + "-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Enqueue adds m to the mails to send, in tx. A key already enqueued
// (a redelivered message) adds nothing.
func Enqueue(ctx context.Context, tx pgx.Tx, m Mail) error {
	switch {
	case m.Key == "":
		return errors.New("ticketmail: mail without a key")
	case m.Kind != KindOrder && m.Kind != KindTransfer:
		return fmt.Errorf("ticketmail: unknown kind %q", m.Kind)
	case len(m.TicketIDs) == 0:
		return fmt.Errorf("ticketmail: mail %s lists no tickets", m.Key)
	}
	if _, err := mail.ParseAddress(m.To); err != nil {
		return fmt.Errorf("%w %q: %v", ErrInvalidRecipient, m.To, err)
	}
	var orderID *string
	if m.OrderID != "" {
		orderID = &m.OrderID
	}
	_, err := tx.Exec(ctx, `INSERT INTO mail_outbox (message_key, kind, event_id, order_id, ticket_ids, recipient)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (message_key) DO NOTHING`,
		m.Key, string(m.Kind), m.EventID, orderID, m.TicketIDs, m.To)
	if err != nil {
		return fmt.Errorf("ticketmail: enqueue %s: %w", m.Key, err)
	}
	return nil
}

// Counts are an event's mails by state.
type Counts struct {
	Sent    int
	Pending int // not sent yet, Failing among them
	Failing int // pending after at least one failed attempt
}

// Stats counts the mails of the event, for its status and reports.
func Stats(ctx context.Context, pool *pgxpool.Pool, eventID int64) (Counts, error) {
	var s Counts
	err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'sent'),
			count(*) FILTER (WHERE status = 'pending'),
			count(*) FILTER (WHERE status = 'pending' AND attempts > 0)
		FROM mail_outbox WHERE event_id = $1`, eventID).Scan(&s.Sent, &s.Pending, &s.Failing)
	if err != nil {
		return Counts{}, fmt.Errorf("ticketmail: stats: %w", err)
	}
	return s, nil
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}
