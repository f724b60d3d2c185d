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

package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
)

// BestRequest asks for places by quantity: Quantity adjacent seats of
// Category (Together, else the best split), Wheelchair of them wheelchair
// places each with a companion seat beside it; or, with Section a
// standing area, Quantity of its places. Section names a seated section
// to buy in, of its category unless Category is set.
type BestRequest struct {
	Quantity   int
	Category   string
	Section    string
	Together   bool
	Wheelchair int
}

// Place is a place a hold took, as the buyer reads it.
type Place struct {
	ID       string `json:"id"`
	Section  string `json:"section"`
	Row      string `json:"row,omitempty"`  // none for a standing place
	Seat     int    `json:"seat,omitempty"` // the seat number; none for a standing place
	Category string `json:"category"`
	Kind     string `json:"kind"` // seat or standing
}

// holdBestSQL is a hold by quantity: one call of hold_best
// (migrations/functions/hold_best.sql), which takes the customer's lock,
// checks the limit, finds and locks the places (SKIP LOCKED), and inserts
// the PENDING order with them, answering a row per place.
const holdBestSQL = `SELECT expires_at, amount, seat_id, section, coalesce(row_label, ''), seat_no, category, kind
  FROM hold_best($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`

// checkBest validates a quantity request under r.
func checkBest(req BestRequest, r phaseRule) error {
	switch {
	case req.Quantity < 1:
		return ErrBadQuantity
	case req.Quantity > r.maxSeats:
		return &TooManySeatsError{Limit: r.maxSeats, Phase: r.name}
	case req.Category == "" && req.Section == "":
		return ErrNoCategory
	case req.Category != "" && !validSectionName(req.Category):
		return &UnknownCategoryError{Category: req.Category}
	case req.Section != "" && !validSectionName(req.Section):
		return &UnknownSectionError{Section: req.Section}
	case req.Wheelchair < 0 || 2*req.Wheelchair > req.Quantity:
		return ErrBadWheelchair
	case req.Section != "" && r.sections != nil && !r.sections[req.Section]:
		return &SectionNotInPhaseError{Phase: r.name, Seats: []string{}, Sections: r.allowedSections()}
	}
	return nil
}

// HoldBest holds the best places of req for customer, all or none, in one
// round trip: one statement (holdBestSQL) under the limits of phase, as
// HoldInPhase's.
func (s *Store) HoldBest(ctx context.Context, customer, sessionID, phase, email string, req BestRequest) (*Hold, error) {
	r, err := s.rule(phase)
	if err != nil {
		return nil, err
	}
	if err := checkBest(req, r); err != nil {
		return nil, err
	}
	var res *Hold
	err = s.retrying(ctx, func() (err error) {
		res, err = s.holdBestOnce(ctx, customer, sessionID, email, req, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Store) holdBestOnce(ctx context.Context, customer, sessionID, email string, req BestRequest, r phaseRule) (*Hold, error) {
	orderID := uuid.New()
	var sections []string
	if r.sections != nil {
		sections = r.allowedSections()
	}
	rows, err := s.pool.Query(ctx, holdBestSQL, s.eventID, orderID, customer, sessionID, s.currency,
		s.holdTTL.Milliseconds(), r.maxSeats, req.Quantity, nullText(req.Category), nullText(req.Section), sections,
		req.Together, req.Wheelchair, nullText(email))
	if err != nil {
		return nil, bestRefusal(err, req, r)
	}
	var (
		expires time.Time
		amount  string
		places  []Place
	)
	var p Place
	_, err = pgx.ForEachRow(rows, []any{&expires, &amount, &p.ID, &p.Section, &p.Row, &p.Seat, &p.Category, &p.Kind}, func() error {
		if p.Kind == KindStanding {
			p.Seat = 0
		}
		places = append(places, p)
		return nil
	})
	if err != nil {
		return nil, bestRefusal(err, req, r)
	}
	if len(places) == 0 {
		return nil, fmt.Errorf("order %s: hold_best answered no places", orderID)
	}
	ids := make([]string, len(places))
	for i, p := range places {
		ids[i] = p.ID
	}
	slices.Sort(ids)
	return s.held(orderID, ids, places, amount, expires)
}

// bestRefusal turns hold_best's refusals into the business errors they
// stand for; the seat limit is hold_seats's (holdRefusal).
func bestRefusal(err error, req BestRequest, r phaseRule) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != holdRefusedCode {
		return err
	}
	switch pe.Message {
	case "not_enough":
		n, _ := strconv.Atoi(pe.Detail)
		return &NotEnoughPlacesError{Available: n}
	case "no_block":
		return &NoBlockError{Split: strings.Split(pe.Detail, ",")}
	case "unknown_category":
		return &UnknownCategoryError{Category: req.Category}
	case "unknown_section":
		return &UnknownSectionError{Section: req.Section}
	case "contended":
		// Every block it tried was taken first: a conflict, as a
		// picked seat taken first is.
		return &SeatsUnavailableError{Seats: []string{}}
	}
	return holdRefusal(err, r)
}

// holdAsked holds what req asks for: its seats, or its quantity.
func (s *service) holdAsked(ctx context.Context, c *accesstoken.Claims, email string, req holdRequest) (*Hold, error) {
	if req.Quantity == nil {
		if req.Category != "" || req.Section != "" || req.Together != nil || req.Wheelchair != 0 {
			return nil, ErrBadQuantity
		}
		return s.store.HoldInPhase(ctx, c.Subject, c.SessionID, c.Phase, email, req.Seats)
	}
	if req.Seats != nil {
		return nil, ErrSeatsAndQuantity
	}
	best := BestRequest{Quantity: *req.Quantity, Category: req.Category, Section: req.Section, Together: true, Wheelchair: req.Wheelchair}
	if req.Together != nil {
		best.Together = *req.Together
	}
	return s.store.HoldBest(ctx, c.Subject, c.SessionID, c.Phase, email, best)
}
