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
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
)

// The audit finds by SQL a card that paid for more seats than the limit,
// across customers, and nothing when every card stayed within it.
func TestAuditCards(t *testing.T) {
	url, _ := migrationstest.NewDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	paid := func(customer, card string, seats int) {
		t.Helper()
		_, err := conn.Exec(ctx, `WITH o AS (
			INSERT INTO ticket_order (id, customer_id, event_id, status, amount, currency, hold_expires_at, card_fingerprint)
			VALUES (gen_random_uuid(), $1, 1, 'PAID', 10, 'EUR', now(), $2) RETURNING id)
			INSERT INTO order_seat (order_id, event_id, seat_id, section, price)
			SELECT o.id, 1, $1 || '-' || i, 'A', 5 FROM o, generate_series(1, $3::int) i`, customer, card, seats)
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg := AuditConfig{EventID: 1, MaxSeatsPerCustomer: 4}
	paid("a", "card-1", 2)
	paid("b", "card-1", 2)
	paid("c", "card-2", 4)
	if problem, err := auditCards(ctx, conn, cfg); err != nil || problem != "" {
		t.Fatalf("cards within the limit: %q %v", problem, err)
	}
	paid("d", "card-1", 1)
	problem, err := auditCards(ctx, conn, cfg)
	if err != nil || !strings.Contains(problem, "1 cards bought more than the limit of 4 seats (one bought 5)") {
		t.Fatalf("a card over the limit: %q %v", problem, err)
	}
	if problem, err := auditCards(ctx, conn, AuditConfig{EventID: 1}); err != nil || problem == "" {
		t.Fatalf("booking's default limit (4): %q %v", problem, err)
	}
}
