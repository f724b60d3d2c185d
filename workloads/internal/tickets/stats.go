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
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/ticketstats"
)

// EventStats counts an event's tickets, mails and admissions: aggregates
// only, no names or codes, so the figures may be served without a
// credential (as the queue's are) to the operator and dashboards.
func EventStats(ctx context.Context, pool *pgxpool.Pool, eventID int64) (ticketstats.Stats, error) {
	st := ticketstats.Stats{Gates: []ticketstats.GateStats{}}
	err := pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM ticket WHERE event_id = $1 AND revoked_at IS NULL),
			(SELECT count(*) FROM checkin WHERE event_id = $1),
			(SELECT count(*) FROM checkin_conflict WHERE event_id = $1),
			(SELECT count(*) FROM checkin WHERE event_id = $1
				AND scanned_at >= date_trunc('minute', now()) - interval '1 minute' AND scanned_at < date_trunc('minute', now())),
			(SELECT count(*) FROM mail_outbox WHERE event_id = $1 AND status = 'sent'),
			(SELECT count(*) FROM mail_outbox WHERE event_id = $1 AND status = 'pending'),
			(SELECT count(*) FROM mail_outbox WHERE event_id = $1 AND status = 'pending' AND attempts > 0),
			now()`, eventID).
		Scan(&st.Tickets, &st.CheckedIn, &st.Conflicts, &st.LastMinute, &st.EmailsSent, &st.EmailsPending, &st.EmailsFailing, &st.UpdatedAt)
	if err != nil {
		return st, fmt.Errorf("ticket stats: %w", err)
	}
	rows, err := pool.Query(ctx, `SELECT gate, count(*), count(*) FILTER (WHERE offline) FROM checkin
		WHERE event_id = $1 GROUP BY gate ORDER BY gate`, eventID)
	if err != nil {
		return st, fmt.Errorf("ticket stats: %w", err)
	}
	if st.Gates, err = pgx.CollectRows(rows, pgx.RowToStructByPos[ticketstats.GateStats]); err != nil {
		return st, fmt.Errorf("ticket stats: %w", err)
	}
	st.UpdatedAt = st.UpdatedAt.UTC().Truncate(time.Millisecond)
	return st, nil
}

// stats is GET /events/{eventId}/stats.
func (s *Service) stats(w http.ResponseWriter, r *http.Request) error {
	eventID, err := strconv.ParseInt(r.PathValue("eventId"), 10, 64)
	if err != nil || eventID <= 0 {
		return httpapi.Errorf(http.StatusBadRequest, "bad_event_id", "event id must be a positive integer")
	}
	st, err := EventStats(r.Context(), s.pool, eventID)
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
	return nil
}
