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

package tickets

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Check-in results: what a gate shows. Each is distinct, so the person at
// the door knows what to do (send back, call a supervisor, redirect).
const (
	Admitted    = "admitted"
	AlreadyUsed = "already_used"
	Revoked     = "revoked"     // transferred on (an older code) or cancelled
	WrongEvent  = "wrong_event" // a genuine ticket of another event
	Invalid     = "invalid"     // not a ticket code, forged, or never issued
	Conflict    = "conflict"    // admitted by an offline gate after another gate had
)

// Scan is one scanned code at a gate.
type Scan struct {
	Code      string    `json:"code"`
	ScannedAt time.Time `json:"scannedAt"`
	// Offline says the gate admitted (or refused) the person itself, with no
	// network, and reports the scan now.
	Offline bool `json:"offline,omitempty"`
}

// Answer is the outcome of one scan.
type Answer struct {
	Result    string     `json:"result"`
	Message   string     `json:"message,omitempty"`
	TicketID  string     `json:"ticketId,omitempty"`
	SeatID    string     `json:"seatId,omitempty"`
	Section   string     `json:"section,omitempty"`
	Gate      string     `json:"gate,omitempty"`
	At        *time.Time `json:"at,omitempty"`
	FirstGate string     `json:"firstGate,omitempty"`
	FirstAt   *time.Time `json:"firstAt,omitempty"`
}

// CheckIn records scan at gate of eventID. The ticket row is read FOR
// SHARE, so a transfer committing at the same instant either comes first
// (and this scan sees the new generation) or waits for the admission (and
// then refuses to transfer a used ticket). The checkin primary key admits
// one scan of a ticket, however many gates race.
func CheckIn(ctx context.Context, pool *pgxpool.Pool, keys map[string]ed25519.PublicKey, eventID int64, gate string, scan Scan) (Answer, error) {
	c, err := verifySignature(scan.Code, keys)
	if err != nil {
		return Answer{Result: Invalid, Message: "not a valid ticket code"}, nil
	}
	a := Answer{TicketID: c.Subject, SeatID: c.SeatID, Section: c.Section, Gate: gate}
	if c.EventID != eventID {
		a.Result, a.Message = WrongEvent, fmt.Sprintf("this ticket is for event %d", c.EventID)
		return a, nil
	}
	var generation *int
	var revokedAt, recordedAt *time.Time
	err = pool.QueryRow(ctx, `WITH t AS (
			SELECT generation, revoked_at FROM ticket WHERE ticket_id = $1 AND event_id = $2 FOR SHARE
		), ins AS (
			INSERT INTO checkin (ticket_id, event_id, gate, generation, scanned_at, offline)
			SELECT $1, $2, $3, $4, $5, $6 FROM t WHERE t.revoked_at IS NULL AND t.generation = $4
			ON CONFLICT (ticket_id) DO NOTHING
			RETURNING recorded_at
		)
		SELECT (SELECT generation FROM t), (SELECT revoked_at FROM t), (SELECT recorded_at FROM ins)`,
		c.Subject, eventID, gate, c.Generation, scan.ScannedAt, scan.Offline).Scan(&generation, &revokedAt, &recordedAt)
	if err != nil {
		return Answer{}, fmt.Errorf("check in %s: %w", c.Subject, err)
	}
	switch {
	case generation == nil:
		a.Result, a.Message = Invalid, "this ticket was never issued"
	case revokedAt != nil:
		a.Result, a.Message, a.At = Revoked, "this ticket was cancelled", revokedAt
	case *generation > c.Generation:
		a.Result, a.Message = Revoked, "this code was replaced: the ticket was transferred to someone else"
	case *generation < c.Generation:
		a.Result, a.Message = Invalid, "this code is newer than the ticket"
	case recordedAt != nil:
		a.Result, a.At = Admitted, &scan.ScannedAt
	default:
		return alreadyUsed(ctx, pool, eventID, gate, scan, a)
	}
	return a, nil
}

// alreadyUsed answers a scan of a ticket that is already in: with where
// and when it was admitted. The same offline scan synced again is not news;
// an offline admission after another gate's is a conflict, kept for the
// report.
func alreadyUsed(ctx context.Context, pool *pgxpool.Pool, eventID int64, gate string, scan Scan, a Answer) (Answer, error) {
	var firstGate string
	var firstAt time.Time
	err := pool.QueryRow(ctx, `SELECT gate, scanned_at FROM checkin WHERE ticket_id = $1`, a.TicketID).Scan(&firstGate, &firstAt)
	if errors.Is(err, pgx.ErrNoRows) {
		// Only a check-in of a ticket deleted since: refuse, and let the
		// gate scan again.
		return Answer{}, fmt.Errorf("check in %s: admission vanished", a.TicketID)
	}
	if err != nil {
		return Answer{}, fmt.Errorf("check in %s: %w", a.TicketID, err)
	}
	a.FirstGate, a.FirstAt = firstGate, &firstAt
	if firstGate == gate && firstAt.Equal(scan.ScannedAt) {
		a.Result, a.At = Admitted, &firstAt // this very scan, resent
		return a, nil
	}
	a.Result = AlreadyUsed
	a.Message = fmt.Sprintf("already admitted at gate %s at %s", firstGate, firstAt.UTC().Format(time.RFC3339))
	if scan.Offline {
		a.Result = Conflict
		a.Message = fmt.Sprintf("admitted offline at gate %s at %s, but gate %s admitted it at %s", gate,
			scan.ScannedAt.UTC().Format(time.RFC3339), firstGate, firstAt.UTC().Format(time.RFC3339))
		if _, err := pool.Exec(ctx, `INSERT INTO checkin_conflict (ticket_id, event_id, gate, scanned_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, a.TicketID, eventID, gate, scan.ScannedAt); err != nil {
			return Answer{}, fmt.Errorf("record conflict of %s: %w", a.TicketID, err)
		}
	}
	return a, nil
}

// GateList is what an offline gate needs beyond the signatures: the
// tickets already in, and those whose codes no longer admit (with the
// generation that does, when the ticket changed hands).
type GateList struct {
	GeneratedAt time.Time    `json:"generatedAt"`
	CheckedIn   []string     `json:"checkedIn"`
	Revoked     []RevokedRef `json:"revoked"`
}

// RevokedRef names a ticket whose codes below Generation are dead; a
// cancelled ticket has Cancelled set and admits no code.
type RevokedRef struct {
	TicketID   string `json:"ticketId"`
	Generation int    `json:"generation"`
	Cancelled  bool   `json:"cancelled,omitempty"`
}

// ListForGate returns the gate list of an event.
func ListForGate(ctx context.Context, pool *pgxpool.Pool, eventID int64) (GateList, error) {
	l := GateList{GeneratedAt: time.Now().UTC(), CheckedIn: []string{}, Revoked: []RevokedRef{}}
	rows, err := pool.Query(ctx, `SELECT ticket_id FROM checkin WHERE event_id = $1 ORDER BY ticket_id`, eventID)
	if err != nil {
		return l, fmt.Errorf("gate list: %w", err)
	}
	l.CheckedIn, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return l, fmt.Errorf("gate list: %w", err)
	}
	rows, err = pool.Query(ctx, `SELECT ticket_id, generation, revoked_at IS NOT NULL FROM ticket
		WHERE event_id = $1 AND (generation > 0 OR revoked_at IS NOT NULL) ORDER BY ticket_id`, eventID)
	if err != nil {
		return l, fmt.Errorf("gate list: %w", err)
	}
	l.Revoked, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (RevokedRef, error) {
		var r RevokedRef
		err := row.Scan(&r.TicketID, &r.Generation, &r.Cancelled)
		return r, err
	})
	if err != nil {
		return l, fmt.Errorf("gate list: %w", err)
	}
	return l, nil
}

// Report is the check-in report of an event: admissions by gate and by
// minute, and every conflict the offline gates reported.
type Report struct {
	Admitted  int              `json:"admitted"`
	Tickets   int              `json:"tickets"`
	ByGate    []GateCount      `json:"byGate"`
	ByMinute  []MinuteCount    `json:"byMinute"`
	Conflicts []ConflictReport `json:"conflicts"`
}

// GateCount is the admissions of one gate.
type GateCount struct {
	Gate     string `json:"gate"`
	Admitted int    `json:"admitted"`
	Offline  int    `json:"offline"`
}

// MinuteCount is the admissions of one minute (by the gates' clocks).
type MinuteCount struct {
	Minute   time.Time `json:"minute"`
	Admitted int       `json:"admitted"`
}

// ConflictReport is one code admitted twice.
type ConflictReport struct {
	TicketID  string    `json:"ticketId"`
	Gate      string    `json:"gate"`
	ScannedAt time.Time `json:"scannedAt"`
	FirstGate string    `json:"firstGate"`
	FirstAt   time.Time `json:"firstAt"`
}

// CheckInReport builds the report of eventID.
func CheckInReport(ctx context.Context, pool *pgxpool.Pool, eventID int64) (Report, error) {
	r := Report{ByGate: []GateCount{}, ByMinute: []MinuteCount{}, Conflicts: []ConflictReport{}}
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM checkin WHERE event_id = $1),
		(SELECT count(*) FROM ticket WHERE event_id = $1 AND revoked_at IS NULL)`, eventID).Scan(&r.Admitted, &r.Tickets); err != nil {
		return r, fmt.Errorf("check-in report: %w", err)
	}
	rows, err := pool.Query(ctx, `SELECT gate, count(*), count(*) FILTER (WHERE offline) FROM checkin
		WHERE event_id = $1 GROUP BY gate ORDER BY gate`, eventID)
	if err != nil {
		return r, fmt.Errorf("check-in report: %w", err)
	}
	if r.ByGate, err = pgx.CollectRows(rows, pgx.RowToStructByPos[GateCount]); err != nil {
		return r, fmt.Errorf("check-in report: %w", err)
	}
	rows, err = pool.Query(ctx, `SELECT date_trunc('minute', scanned_at), count(*) FROM checkin
		WHERE event_id = $1 GROUP BY 1 ORDER BY 1`, eventID)
	if err != nil {
		return r, fmt.Errorf("check-in report: %w", err)
	}
	if r.ByMinute, err = pgx.CollectRows(rows, pgx.RowToStructByPos[MinuteCount]); err != nil {
		return r, fmt.Errorf("check-in report: %w", err)
	}
	rows, err = pool.Query(ctx, `SELECT x.ticket_id, x.gate, x.scanned_at, c.gate, c.scanned_at
		FROM checkin_conflict x JOIN checkin c USING (ticket_id) WHERE x.event_id = $1 ORDER BY x.id`, eventID)
	if err != nil {
		return r, fmt.Errorf("check-in report: %w", err)
	}
	if r.Conflicts, err = pgx.CollectRows(rows, pgx.RowToStructByPos[ConflictReport]); err != nil {
		return r, fmt.Errorf("check-in report: %w", err)
	}
	return r, nil
}
