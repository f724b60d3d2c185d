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

// Package testenv gives tests real servers: Redis, PostgreSQL, an
// Apache Kafka broker (KRaft) and a Kubernetes API server (envtest). Servers are
// taken from TICKETFAIR_TEST_REDIS_URL, TICKETFAIR_TEST_DATABASE_URL and
// TICKETFAIR_TEST_KAFKA_BROKERS when set, else started once per test binary.
// Every test gets isolated state: its own Redis database, its own PostgreSQL
// database, its own topics.
//
// A missing server skips the test on a developer machine and fails it in CI
// (CI=true), so CI never passes by skipping.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/localsvc"
)

var (
	mu       sync.Mutex
	redisSrv *localsvc.Server
	pgSrv    *localsvc.Server
	started  []func()

	redisDB atomic.Int64
	pgDB    atomic.Int64
)

// Main runs the tests of a package and stops the servers they started.
// Use it from TestMain: func TestMain(m *testing.M) { testenv.Main(m) }.
// Each after hook sees the exit code and may change it (e.g. fail a package
// whose tests all passed but left something unchecked).
func Main(m *testing.M, after ...func(code int) int) {
	code := m.Run()
	for _, f := range after {
		code = f(code)
	}
	mu.Lock()
	for i := len(started) - 1; i >= 0; i-- {
		started[i]()
	}
	mu.Unlock()
	os.Exit(code)
}

// Required reports whether a test must fail, not skip, when a server or
// tool it needs is missing: in CI, or with TICKETFAIR_TEST_REQUIRE_SERVICES=1.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("TICKETFAIR_TEST_REQUIRE_SERVICES") == "1"
}

// Unavailable fails t where what is Required and skips it elsewhere; err
// says what is missing and how to get it. The one skip policy of every test.
func Unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if Required() {
		t.Fatalf("%s is required in CI but unavailable: %v", what, err)
	}
	t.Skipf("%s unavailable: %v", what, err)
}

// RedisURL returns the URL of a Redis database no other test in this binary uses.
func RedisURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TICKETFAIR_TEST_REDIS_URL")
	if base == "" {
		mu.Lock()
		if redisSrv == nil {
			s, err := localsvc.StartRedis(context.Background())
			if err != nil {
				mu.Unlock()
				Unavailable(t, "redis-server", err)
				return ""
			}
			redisSrv = s
			started = append(started, func() { _ = s.Stop() })
		}
		base = redisSrv.URL
		mu.Unlock()
	}
	opt, err := redis.ParseURL(base)
	if err != nil {
		t.Fatalf("TICKETFAIR_TEST_REDIS_URL: %v", err)
	}
	// Database 0 is left to people; tests take 1.. in turn.
	db := int(redisDB.Add(1))
	u := fmt.Sprintf("redis://%s/%d", opt.Addr, db)
	c := redis.NewClient(&redis.Options{Addr: opt.Addr, DB: db, Password: opt.Password})
	defer c.Close()
	if err := c.FlushDB(context.Background()).Err(); err != nil {
		Unavailable(t, "redis", err)
	}
	return u
}

// Redis returns a client of a database no other test in this binary uses.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	_, c := RedisDB(t)
	return c
}

// RedisDB returns the URL of a database no other test in this binary uses,
// for the services under test, and a client of it, for the test.
func RedisDB(t testing.TB) (string, *redis.Client) {
	t.Helper()
	url := RedisURL(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return url, c
}

// PostgresURL returns the URL of a new, empty database.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TICKETFAIR_TEST_DATABASE_URL")
	if base == "" {
		mu.Lock()
		if pgSrv == nil {
			s, err := localsvc.StartPostgres(context.Background())
			if err != nil {
				mu.Unlock()
				Unavailable(t, "postgresql", err)
				return ""
			}
			pgSrv = s
			started = append(started, func() { _ = s.Stop() })
		}
		base = pgSrv.URL
		mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		Unavailable(t, "postgresql", err)
		return ""
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("tf_test_%d_%d", os.Getpid(), pgDB.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, base); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	return replaceDatabase(base, cfg.Database, name)
}

// replaceDatabase swaps the database name in a postgres:// URL.
func replaceDatabase(url, old, name string) string {
	q := ""
	if i := strings.IndexByte(url, '?'); i >= 0 {
		url, q = url[:i], url[i:]
	}
	if old != "" && strings.HasSuffix(url, "/"+old) {
		return strings.TrimSuffix(url, old) + name + q
	}
	return strings.TrimSuffix(url, "/") + "/" + name + q
}

// ModuleRoot finds the directory holding go.mod, walking up from the
// working directory.
func ModuleRoot() (string, error) { return localsvc.ModuleRoot() }

// WaitFor polls cond every 20 ms until it holds, failing the test when
// timeout passes first.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BuildWorkloads builds the ticketfair workloads binary (the image's
// /ticketfair) into a temporary directory and returns its path.
func BuildWorkloads(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "ticketfair")
	build := exec.Command("go", "build", "-o", bin, "./workloads/cmd/ticketfair")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build ticketfair: %v\n%s", err, out)
	}
	return bin
}

// Nginx starts nginx as a caching proxy in front of origin for this test
// (localsvc.StartNginx) and returns its base URL.
func Nginx(t testing.TB, origin string) string {
	t.Helper()
	ng, err := localsvc.StartNginx(context.Background(), origin)
	if err != nil {
		Unavailable(t, "nginx", err)
	}
	t.Cleanup(func() { _ = ng.Stop() })
	return ng.URL
}
