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
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
)

// PlaceChecks are the audit's checks, by SQL after the sale, of what best
// available and standing areas promise.
type PlaceChecks struct {
	// Standing is each standing area: its capacity (the venue's, else
	// its places seeded), its places SOLD and those in PAID orders.
	Standing []StandingArea `json:"standing,omitempty"`
	// Orphans are the single seats best-available holds stranded (see
	// auditOrphans), with up to ten of them named.
	Orphans       int64    `json:"orphans"`
	OrphanSeats   []string `json:"orphanSeats,omitempty"`
	BestOrders    int      `json:"bestOrders"`
	Wheelchair    int64    `json:"wheelchairHolds"`
	NoCompanion   int64    `json:"wheelchairWithoutCompanion"`
	NoCompanionOf []string `json:"wheelchairWithoutCompanionOrders,omitempty"`
}

// StandingArea is one standing area's places after the sale.
type StandingArea struct {
	Section  string `json:"section"`
	Capacity int64  `json:"capacity"`
	Seeded   int64  `json:"seeded"`
	Sold     int64  `json:"sold"`
	Paid     int64  `json:"paid"`
}

// Oversold is how many places beyond its capacity the area sold.
func (a StandingArea) Oversold() int64 {
	return max(a.Seeded-a.Capacity, a.Sold-a.Capacity, a.Paid-a.Capacity, 0)
}

// Total is the number of violations: must be 0.
func (p PlaceChecks) Total() int64 {
	n := p.Orphans + p.NoCompanion
	for _, a := range p.Standing {
		n += a.Oversold()
	}
	return n
}

// auditPlaces runs the checks of PlaceChecks on eventID's places; v, when
// set, is the venue the sale seeded (the standing areas' capacities).
func auditPlaces(ctx context.Context, conn *pgx.Conn, eventID int64, v *config.Venue, res *loadtest.Result) (PlaceChecks, error) {
	p := PlaceChecks{BestOrders: len(res.BestOrders)}
	var err error
	if p.Standing, err = auditStanding(ctx, conn, eventID, v); err != nil {
		return p, err
	}
	if p.Orphans, p.OrphanSeats, err = auditOrphans(ctx, conn, eventID, res.BestOrders); err != nil {
		return p, err
	}
	p.Wheelchair, p.NoCompanion, p.NoCompanionOf, err = auditWheelchairs(ctx, conn, eventID, res.BestOrders)
	return p, err
}

// auditStanding counts each standing area's places: seeded, SOLD, and in
// PAID orders (distinct places). None may pass the area's capacity.
func auditStanding(ctx context.Context, conn *pgx.Conn, eventID int64, v *config.Venue) ([]StandingArea, error) {
	rows, err := conn.Query(ctx, `
		SELECT s.section, count(*), count(*) FILTER (WHERE s.status = 'SOLD'),
		       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM order_seat os JOIN ticket_order o ON o.id = os.order_id
		                                       WHERE os.event_id = s.event_id AND os.seat_id = s.seat_id AND o.status = 'PAID'))
		  FROM seat s WHERE s.event_id = $1 AND s.kind = 'standing'
		 GROUP BY s.section ORDER BY s.section`, eventID)
	if err != nil {
		return nil, err
	}
	var out []StandingArea
	var a StandingArea
	_, err = pgx.ForEachRow(rows, []any{&a.Section, &a.Seeded, &a.Sold, &a.Paid}, func() error {
		a.Capacity = a.Seeded
		if v != nil {
			a.Capacity = 0 // an area the venue does not have has none
			for _, s := range v.Sections {
				if s.Name == a.Section && s.Kind == config.SectionStanding {
					a.Capacity = int64(s.Capacity)
				}
			}
		}
		out = append(out, a)
		return nil
	})
	return out, err
}

// auditOrphans finds the single seats best-available holds stranded: a
// seat free after the sale (AVAILABLE, or HELD with its hold expired),
// never in any order, whose two neighbours in its row segment (the seats
// of its section and row at row_pos one less and one more: an aisle or a
// blocked seat breaks a segment) are both SOLD to orders of best (the
// crowd's best-available holds of seats). A seat once held and then
// released is left out: its hold's end, not a best-available choice, left
// it alone. Seats stranded beside picked seats are the pickers'.
func auditOrphans(ctx context.Context, conn *pgx.Conn, eventID int64, best []string) (int64, []string, error) {
	if len(best) == 0 {
		return 0, nil, nil
	}
	var n int64
	var examples []string
	err := conn.QueryRow(ctx, `
		WITH best AS (SELECT DISTINCT id::uuid AS id FROM unnest($2::text[]) id),
		r AS (
			SELECT s.seat_id, s.status, s.hold_expires_at, s.row_pos,
			       lag(s.row_pos) OVER w AS l_pos, lag(s.status) OVER w AS l_status, lag(s.order_id) OVER w AS l_order,
			       lead(s.row_pos) OVER w AS r_pos, lead(s.status) OVER w AS r_status, lead(s.order_id) OVER w AS r_order
			  FROM seat s WHERE s.event_id = $1 AND s.kind = 'seat' AND s.row_pos IS NOT NULL
			WINDOW w AS (PARTITION BY s.section, s.row_no ORDER BY s.row_pos)),
		o AS (
			SELECT r.seat_id FROM r
			 WHERE (r.status = 'AVAILABLE' OR (r.status = 'HELD' AND r.hold_expires_at <= now()))
			   AND r.l_pos = r.row_pos - 1 AND r.r_pos = r.row_pos + 1
			   AND r.l_status = 'SOLD' AND r.r_status = 'SOLD'
			   AND r.l_order IN (SELECT id FROM best) AND r.r_order IN (SELECT id FROM best)
			   AND NOT EXISTS (SELECT 1 FROM order_seat os WHERE os.event_id = $1 AND os.seat_id = r.seat_id))
		SELECT count(*), coalesce((SELECT array_agg(seat_id) FROM (SELECT seat_id FROM o ORDER BY seat_id LIMIT 10) e), '{}') FROM o`,
		eventID, best).Scan(&n, &examples)
	return n, examples, err
}

// auditWheelchairs checks every order of best that holds a wheelchair place
// (best available without wheelchair places takes none, so these are
// the holds that asked for them): each of its wheelchair places has a
// companion seat of the same order beside it (same section and row,
// row_pos one apart), and it has at least as many companion seats as
// wheelchair places. It answers the wheelchair holds, those that broke
// that, and up to ten of their orders.
func auditWheelchairs(ctx context.Context, conn *pgx.Conn, eventID int64, best []string) (holds, broken int64, examples []string, err error) {
	if len(best) == 0 {
		return 0, 0, nil, nil
	}
	err = conn.QueryRow(ctx, `
		WITH best AS (SELECT DISTINCT id::uuid AS id FROM unnest($2::text[]) id),
		p AS (
			SELECT os.order_id, s.section, s.row_no, s.row_pos, s.wheelchair, s.companion
			  FROM order_seat os JOIN seat s ON s.event_id = os.event_id AND s.seat_id = os.seat_id
			 WHERE os.event_id = $1 AND os.order_id IN (SELECT id FROM best)),
		w AS (
			SELECT p.order_id,
			       count(*) FILTER (WHERE p.wheelchair) AS wheelchairs,
			       count(*) FILTER (WHERE p.companion) AS companions,
			       count(*) FILTER (WHERE p.wheelchair AND NOT EXISTS (
			           SELECT 1 FROM p c WHERE c.order_id = p.order_id AND c.companion AND c.section = p.section
			              AND c.row_no = p.row_no AND abs(c.row_pos - p.row_pos) = 1)) AS alone
			  FROM p GROUP BY p.order_id HAVING bool_or(p.wheelchair)),
		bad AS (SELECT order_id FROM w WHERE alone > 0 OR companions < wheelchairs)
		SELECT (SELECT count(*) FROM w), (SELECT count(*) FROM bad),
		       coalesce((SELECT array_agg(order_id::text) FROM (SELECT order_id FROM bad ORDER BY order_id LIMIT 10) e), '{}')`,
		eventID, best).Scan(&holds, &broken, &examples)
	return holds, broken, examples, err
}

// check adds p's violations to problems.
func (p PlaceChecks) check(problems []string) []string {
	for _, a := range p.Standing {
		if n := a.Oversold(); n > 0 {
			problems = append(problems, fmt.Sprintf("standing area %s oversold: capacity %d, %d places seeded, %d sold, %d in paid orders", a.Section, a.Capacity, a.Seeded, a.Sold, a.Paid))
		}
	}
	if p.Orphans > 0 {
		problems = append(problems, fmt.Sprintf("%d single seats stranded between best-available holds (%s)", p.Orphans, strings.Join(p.OrphanSeats, ", ")))
	}
	if p.NoCompanion > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d wheelchair holds without a companion seat beside each wheelchair place (%s)", p.NoCompanion, p.Wheelchair, strings.Join(p.NoCompanionOf, ", ")))
	}
	return problems
}

func (p PlaceChecks) print(w io.Writer) {
	var areas []string
	for _, a := range p.Standing {
		areas = append(areas, fmt.Sprintf("%s %d of %d sold", a.Section, a.Sold, a.Capacity))
	}
	if len(areas) > 0 {
		fmt.Fprintf(w, "standing areas (SQL)\t%s; oversold %d\n", strings.Join(areas, ", "), totalOversold(p.Standing))
	}
	fmt.Fprintf(w, "best available (SQL)\t%d holds of seats, %d single seats stranded between them; %d wheelchair holds, %d without a companion beside each place\n",
		p.BestOrders, p.Orphans, p.Wheelchair, p.NoCompanion)
}

func totalOversold(areas []StandingArea) int64 {
	var n int64
	for _, a := range areas {
		n += a.Oversold()
	}
	return n
}

// printHolds writes the holds by kind: requests, holds, the 409s by
// reason and the share of requests they are.
func printHolds(w io.Writer, h loadtest.Holds) {
	total := h.Total()
	if total.Requests == 0 {
		return
	}
	fmt.Fprintf(w, "\nHOLDS\tREQUESTS\tHELD\t409s\tFAILED\tCONFLICTS\tNOT ENOUGH\tNOT TOGETHER\tLIMIT\t(conflicts: seats another hold took, or \"not enough\" while enough were left)\n")
	row := func(name string, c loadtest.HoldCounts) {
		if c.Requests == 0 && name != "total" {
			return
		}
		extra := ""
		if c.NoBlock > 0 {
			extra = fmt.Sprintf(" (split held %d, asked again %d)", c.SplitsAccepted, c.SplitsDeclined)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.1f%%\t%d\t%d\t%d%s\t%d\t\n", name, c.Requests, c.Held, c.Refused, 100*c.FailureShare(),
			c.Conflicts(), c.NotEnough, c.NoBlock, extra, c.Limit)
	}
	row("best available", h.Best)
	row("standing", h.Standing)
	row("split offered", h.Split)
	row("picked", h.Picked)
	row("total", total)
}
