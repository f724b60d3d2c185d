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

package migrations

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Several pods migrating at once: all succeed, the schema is applied once.
func TestConcurrentUp(t *testing.T) {
	url := testenv.PostgresURL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- Up(ctx, url) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := Pending(ctx, url); err != nil || n != 0 {
		t.Fatalf("pending after Up: %d, %v", n, err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	latest, _ := Latest()
	var applied int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if int64(applied) != latest {
		t.Fatalf("applied %d migrations, latest is %d", applied, latest)
	}
	// The outbox trigger notifies.
	if _, err := conn.Exec(ctx, `LISTEN ticketfair_outbox`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO outbox (topic, key, event_type, payload) VALUES ('t','k','e','{}')`); err != nil {
		t.Fatal(err)
	}
	n, err := conn.WaitForNotification(ctx)
	if err != nil || n.Channel != "ticketfair_outbox" {
		t.Fatalf("notification: %+v %v", n, err)
	}
}

// TestSeatHoldExpiry: 00008 mends the seats that break "a hold expiry
// exactly while HELD" (a SOLD seat keeping its expiry, a HELD one without)
// and from then on the database refuses such a seat.
func TestSeatHoldExpiry(t *testing.T) {
	url := testenv.PostgresURL(t)
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	p, db, err := providerOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := p.UpTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		INSERT INTO ticket_order (id, customer_id, event_id, amount, currency, hold_expires_at)
		VALUES ('00000000-0000-0000-0000-000000000001', 'c', 1, 10, 'EUR', now() + interval '1 hour');
		INSERT INTO seat (event_id, seat_id, section, row_no, seat_no, price, status, held_by, order_id, hold_expires_at) VALUES
		  (1, 'A-1-1', 'A', 1, 1, 10, 'SOLD', 'c', '00000000-0000-0000-0000-000000000001', now() + interval '1 hour'),
		  (1, 'A-1-2', 'A', 1, 2, 10, 'HELD', 'c', '00000000-0000-0000-0000-000000000001', NULL),
		  (1, 'A-1-3', 'A', 1, 3, 10, 'HELD', 'c', '00000000-0000-0000-0000-000000000001', now() + interval '1 hour'),
		  (1, 'A-1-4', 'A', 1, 4, 10, 'AVAILABLE', NULL, NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var mended string
	if err := conn.QueryRow(ctx, `SELECT string_agg(seat_id || ':' || status || ':' ||
		CASE WHEN hold_expires_at IS NULL THEN 'none' WHEN hold_expires_at <= now() THEN 'expired' ELSE 'later' END, ',' ORDER BY seat_id) FROM seat`).Scan(&mended); err != nil {
		t.Fatal(err)
	}
	if want := "A-1-1:SOLD:none,A-1-2:HELD:expired,A-1-3:HELD:later,A-1-4:AVAILABLE:none"; mended != want {
		t.Fatalf("after 00008: %s, want %s", mended, want)
	}
	var valid bool
	if err := conn.QueryRow(ctx, `SELECT convalidated FROM pg_constraint WHERE conname = 'seat_hold_expiry'`).Scan(&valid); err != nil || !valid {
		t.Fatalf("seat_hold_expiry validated: %v %v", valid, err)
	}
	for _, bad := range []string{
		`UPDATE seat SET status = 'SOLD' WHERE seat_id = 'A-1-3'`,
		`UPDATE seat SET hold_expires_at = NULL WHERE seat_id = 'A-1-3'`,
		`UPDATE seat SET hold_expires_at = now() WHERE seat_id = 'A-1-4'`,
	} {
		_, err := conn.Exec(ctx, bad)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" || pgErr.ConstraintName != "seat_hold_expiry" {
			t.Fatalf("%s: %v, want a check violation of seat_hold_expiry", bad, err)
		}
	}
}
