// Package migrations holds ticketfair's versioned SQL schema, embedded in
// the binary and applied by `ticketfair migrate` with goose. goose takes a
// PostgreSQL session advisory lock, so several pods may migrate at once:
// one applies, the others wait and find nothing left to do.
//
// Files are sql/NNNNN_name.sql; a file, once released, is never edited:
// a change is a new file.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var files embed.FS

// Up applies every pending migration to the database at databaseURL.
func Up(ctx context.Context, databaseURL string) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("database url: %w", err)
	}
	return UpConn(ctx, cfg)
}

// UpConn applies every pending migration to the database of cfg.
func UpConn(ctx context.Context, cfg *pgx.ConnConfig) error {
	p, db, err := providerOf(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// Pending reports how many migrations are not yet applied (for /readyz).
func Pending(ctx context.Context, databaseURL string) (int, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return 0, fmt.Errorf("database url: %w", err)
	}
	return PendingConn(ctx, cfg)
}

// PendingConn is Pending on the database of cfg.
func PendingConn(ctx context.Context, cfg *pgx.ConnConfig) (int, error) {
	p, db, err := providerOf(cfg)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	has, err := p.HasPending(ctx)
	if err != nil {
		return 0, fmt.Errorf("check migrations: %w", err)
	}
	if !has {
		return 0, nil
	}
	st, err := p.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("migration status: %w", err)
	}
	n := 0
	for _, s := range st {
		if s.State == goose.StatePending {
			n++
		}
	}
	return n, nil
}

// Latest is the newest schema version in the binary.
func Latest() (int64, error) {
	entries, err := fs.Glob(files, "sql/*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e, "sql/%d_", &v); err == nil && v > latest {
			latest = v
		}
	}
	return latest, nil
}

func providerOf(cfg *pgx.ConnConfig) (*goose.Provider, *sql.DB, error) {
	db := stdlib.OpenDB(*cfg)
	sub, err := fs.Sub(files, "sql")
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithSessionLocker(locker))
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	return p, db, nil
}
