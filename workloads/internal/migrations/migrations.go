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

// Package migrations holds ticketfair's SQL schema, embedded in the binary
// and applied by `ticketfair migrate`, in two steps:
//
//   - sql/NNNNN_name.sql, versioned and applied once each by goose: tables,
//     indexes, data changes and the drops of retired functions. A file,
//     once released, changes only in what leaves the final schema as it is;
//     a change is a new file.
//   - functions/name.sql, one stored function each, replaced on every run
//     after the migrations (CREATE OR REPLACE), then functions/compat.sql:
//     a function changes in its one file.
//
// schema.sql is the result, checked by TestSchema. Both steps take the
// same PostgreSQL advisory lock, so several pods may migrate at once: one
// applies, the others wait and find nothing left to change.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"slices"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql functions/*.sql
var files embed.FS

// compatFile is applied after the other functions: it drops what they
// replaced.
const compatFile = "functions/compat.sql"

// Up applies every pending migration to the database at databaseURL, then
// every stored function.
func Up(ctx context.Context, databaseURL string) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("database url: %w", err)
	}
	return UpConn(ctx, cfg)
}

// UpConn is Up on the database of cfg.
func UpConn(ctx context.Context, cfg *pgx.ConnConfig) error {
	p, db, err := providerOf(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return applyFunctions(ctx, cfg)
}

// applyFunctions runs every file of functions/, compat.sql last, in one
// transaction: a payment or hold sees the functions of one version, never
// a mix. The transaction takes goose's lock, so two pods never replace a
// function at once (PostgreSQL refuses the second: "tuple concurrently
// updated") nor while another pod migrates.
func applyFunctions(ctx context.Context, cfg *pgx.ConnConfig) error {
	names, err := fs.Glob(files, "functions/*.sql")
	if err != nil {
		return err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == compatFile })
	slices.Sort(names)
	names = append(names, compatFile)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("apply functions: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lock.DefaultLockID); err != nil {
			return fmt.Errorf("apply functions: lock: %w", err)
		}
		for _, name := range names {
			body, err := files.ReadFile(name)
			if err != nil {
				return err
			}
			// Without arguments Exec uses the simple protocol, which
			// runs a file of several statements.
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("apply %s: %w", name, err)
			}
		}
		return nil
	})
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
