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

package demo

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// tailPercent is the share of the seats after which a sale's end counts as
// its tail: the last seats, which lapsed holds hand back a few at a time.
const tailPercent = 98

// SellOut says how the seats sold over time, from the ledger: when the
// first 98% and the last seat were paid for, and where the seats sold after
// the 98% came from.
type SellOut struct {
	// Seats98Seconds and Seats100Seconds are seconds after opening; 0
	// when that share was never sold.
	Seats98Seconds  float64 `json:"seats98Seconds"`
	Seats100Seconds float64 `json:"seats100Seconds"`
	// TailSeats are the seats sold after the first 98%; of them,
	// TailFromExpired had been in a hold that expired unpaid and
	// TailFromReleased (and no expired one) in a hold its customer let go.
	TailSeats        int `json:"tailSeats"`
	TailFromExpired  int `json:"tailFromExpired"`
	TailFromReleased int `json:"tailFromReleased"`
}

// soldSeat is one sold seat: when its order was paid, after opening, and
// whether it had been in an earlier hold that expired or was released.
type soldSeat struct {
	At       float64
	Expired  bool
	Released bool
}

// sellOutOf computes the sale's tail from its sold seats and the event's
// seat count. The 98% mark is the seat ranked ceil(0.98 × seats) by sale
// time: for 5,000 seats the 4,900th, and the tail the last 100.
func sellOutOf(sold []soldSeat, seats int) SellOut {
	var s SellOut
	if seats <= 0 || len(sold) == 0 {
		return s
	}
	sort.SliceStable(sold, func(i, j int) bool { return sold[i].At < sold[j].At })
	mark := tailMark(seats)
	if len(sold) < mark {
		return s
	}
	s.Seats98Seconds = sold[mark-1].At
	if len(sold) >= seats {
		s.Seats100Seconds = sold[seats-1].At
	}
	for _, seat := range sold[mark:] {
		s.TailSeats++
		switch {
		case seat.Expired:
			s.TailFromExpired++
		case seat.Released:
			s.TailFromReleased++
		}
	}
	return s
}

// tailMark is the rank of the seat that completes 98% of seats (at least 1).
func tailMark(seats int) int {
	return max((seats*tailPercent+99)/100, 1)
}

// querySoldSeats reads every sold seat of the event with the time its
// order was paid, in seconds after open, and whether an expired or a
// released (cancelled) hold had it before.
func querySoldSeats(ctx context.Context, conn *pgx.Conn, eventID int64, open time.Time) ([]soldSeat, error) {
	rows, err := conn.Query(ctx, `
		WITH returned AS (
			SELECT os.seat_id, bool_or(o.status = 'EXPIRED') AS expired, bool_or(o.status = 'CANCELLED') AS released
			  FROM order_seat os JOIN ticket_order o ON o.id = os.order_id
			 WHERE o.event_id = $1 AND o.status IN ('EXPIRED', 'CANCELLED')
			 GROUP BY os.seat_id)
		SELECT extract(epoch FROM o.settled_at - $2::timestamptz)::float8,
		       coalesce(r.expired, false), coalesce(r.released, false)
		  FROM seat s
		  JOIN ticket_order o ON o.id = s.order_id
		  LEFT JOIN returned r ON r.seat_id = s.seat_id
		 WHERE s.event_id = $1 AND s.status = 'SOLD' AND o.settled_at IS NOT NULL`, eventID, open)
	if err != nil {
		return nil, fmt.Errorf("sold seats: %w", err)
	}
	sold, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (soldSeat, error) {
		var s soldSeat
		return s, r.Scan(&s.At, &s.Expired, &s.Released)
	})
	if err != nil {
		return nil, fmt.Errorf("sold seats: %w", err)
	}
	return sold, nil
}

// printSellOut writes the report's tail row, or nothing when fewer than
// 98% of the seats sold.
func printSellOut(w io.Writer, s *SellOut) {
	if s == nil || s.Seats98Seconds == 0 {
		return
	}
	all := "not sold out"
	if s.Seats100Seconds > 0 {
		all = fmt.Sprintf("100%% at %.1fs", s.Seats100Seconds)
	}
	fmt.Fprintf(w, "sell-out tail\t98%% of seats sold %.1fs after opening, %s; of the last %d seats, %d came back from expired holds, %d from released ones\n",
		s.Seats98Seconds, all, s.TailSeats, s.TailFromExpired, s.TailFromReleased)
}
