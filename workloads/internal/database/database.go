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

// Package database builds every ticketfair process's PostgreSQL
// connections from config.Postgres: the URL (several hosts with
// target_session_attrs=read-write follow a failover to the new primary)
// and, for sslmode=verify-full, the server's CA from a Secret.
package database

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// connectTimeout bounds each connection attempt per host: a primary that
// is down costs a request milliseconds to seconds and a 503, and a
// multi-host URL moves on to the next host, not after the OS's timeout.
const connectTimeout = 2 * time.Second

// ConnConfig parses cfg for a single connection.
func ConnConfig(cfg config.Postgres) (*pgx.ConnConfig, error) {
	c, err := pgx.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		// pgx's errors redact the password.
		return nil, fmt.Errorf("database url: %w", err)
	}
	if err := apply(&c.Config, cfg); err != nil {
		return nil, err
	}
	return c, nil
}

// PoolOption sizes or tunes a pool.
type PoolOption func(*pgxpool.Config)

// MaxConns caps the pool at n connections (n <= 0: pgx's default).
func MaxConns(n int) PoolOption {
	return func(c *pgxpool.Config) {
		if n > 0 {
			c.MaxConns = int32(n)
		}
	}
}

// Pool opens the pool cfg describes, the one way every process does
// (connections are made on demand, each bounded by the connect timeout).
func Pool(ctx context.Context, cfg config.Postgres, opts ...PoolOption) (*pgxpool.Pool, error) {
	c, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		// pgx's errors redact the password.
		return nil, fmt.Errorf("database url: %w", err)
	}
	if err := apply(&c.ConnConfig.Config, cfg); err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(c)
	}
	p, err := pgxpool.NewWithConfig(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return p, nil
}

func apply(c *pgconn.Config, cfg config.Postgres) error {
	if c.ConnectTimeout == 0 || c.ConnectTimeout > connectTimeout {
		c.ConnectTimeout = connectTimeout
	}
	if cfg.DatabaseTLSCA == "" {
		return nil
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(cfg.DatabaseTLSCA)) {
		return errors.New("database: TICKETFAIR_DATABASE_TLS_CA holds no PEM certificate")
	}
	// Every host of a multi-host URL is a fallback with its own TLS
	// settings; each must verify against the CA, none may skip it.
	tlsOf := []*pgconn.FallbackConfig{{TLSConfig: c.TLSConfig}}
	tlsOf = append(tlsOf, c.Fallbacks...)
	for _, f := range tlsOf {
		if f.TLSConfig == nil || f.TLSConfig.InsecureSkipVerify {
			return errors.New("database: a CA is given, so the URL needs sslmode=verify-full (a plain or unverified connection would ignore it)")
		}
		f.TLSConfig.RootCAs = roots
	}
	return nil
}
