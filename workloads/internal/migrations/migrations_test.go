package migrations

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

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
