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

package database_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func startPostgres(t *testing.T, certs testenv.Certs, settings ...string) *localsvc.Server {
	t.Helper()
	s, err := localsvc.StartPostgresWith(context.Background(), certs.ServerCert, certs.ServerKey, settings...)
	if err != nil {
		if strings.Contains(err.Error(), "not installed") {
			testenv.Unavailable(t, "PostgreSQL", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// TestVerifyFull connects with sslmode=verify-full and the server's CA
// from the configuration, as from a Secret.
func TestVerifyFull(t *testing.T) {
	certs := testenv.NewCerts(t)
	pg := startPostgres(t, certs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := fmt.Sprintf("postgres://postgres@localhost:%s/postgres?sslmode=verify-full", strings.Split(pg.Addr, ":")[1])
	try := func(c config.Postgres) error {
		pool, err := database.Pool(ctx, c)
		if err != nil {
			return err
		}
		defer pool.Close()
		var ssl bool
		if err := pool.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil {
			return err
		}
		if !ssl {
			return fmt.Errorf("connected without TLS")
		}
		return nil
	}
	if err := try(config.Postgres{DatabaseURL: url, DatabaseTLSCA: certs.CA}); err != nil {
		t.Fatalf("verify-full with the CA: %v", err)
	}
	if err := try(config.Postgres{DatabaseURL: url, DatabaseTLSCA: testenv.NewCerts(t).CA}); err == nil {
		t.Fatal("a server certificate of another CA was accepted")
	}
	if err := try(config.Postgres{DatabaseURL: url}); err == nil {
		t.Fatal("the system's CAs accepted the test CA's certificate")
	}
	for _, mode := range []string{"disable", "require", "prefer"} {
		u := strings.Replace(url, "verify-full", mode, 1)
		p, err := database.Pool(context.Background(), config.Postgres{DatabaseURL: u, DatabaseTLSCA: certs.CA})
		if err == nil {
			p.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "verify-full") {
			t.Errorf("sslmode=%s with a CA: %v, want an error asking for verify-full", mode, err)
		}
	}
}

// TestMultiHostFindsThePrimary: with target_session_attrs=read-write the
// pool skips a host that is down and one that is read-only (a standby),
// whatever their order in the URL.
func TestMultiHostFindsThePrimary(t *testing.T) {
	primary := startPostgres(t, testenv.Certs{})
	standby := startPostgres(t, testenv.Certs{}, "default_transaction_read_only=on")
	down, err := localsvc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,%s,%s/postgres?sslmode=disable&target_session_attrs=read-write",
		down, standby.Addr, primary.Addr)
	pool, err := database.Pool(ctx, config.Postgres{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var port int
	if err := pool.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if want := strings.Split(primary.Addr, ":")[1]; fmt.Sprint(port) != want {
		t.Fatalf("connected to port %d, the primary is %s", port, primary.Addr)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE written (id int)"); err != nil {
		t.Fatalf("write: %v", err)
	}
}
