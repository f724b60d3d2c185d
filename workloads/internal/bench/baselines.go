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

package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// redisBenchmark runs redis-benchmark with one command line and returns requests/s.
func redisBenchmark(ctx context.Context, addr string, n, clients int, args ...string) (float64, error) {
	host, port, _ := net.SplitHostPort(addr)
	cmdArgs := append([]string{"-h", host, "-p", port, "-n", strconv.Itoa(n), "-c", strconv.Itoa(clients), "-q", "--csv"}, args...)
	out, err := exec.CommandContext(ctx, "redis-benchmark", cmdArgs...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark: %w: %s", err, out)
	}
	// CSV: "test","rps",... on the second line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	fields := strings.Split(last, ",")
	if len(fields) < 2 {
		return 0, fmt.Errorf("redis-benchmark output: %s", out)
	}
	return strconv.ParseFloat(strings.Trim(fields[1], `"`), 64)
}

// aloneJoinsPerCall is how many joins each coalesced call carries when
// redis-benchmark runs the script: about what a pod's calls carry under
// the HTTP measurement's 64 clients.
const aloneJoinsPerCall = 32

// scriptJoins runs a join script (its source, keys and arguments, each
// customer a random id) calls times from clients connections of
// redis-benchmark, and returns the calls per second and Redis's CPU
// seconds (INFO cpu) per join while it ran, each call carrying perCall.
func scriptJoins(ctx context.Context, rdb *redis.Client, addr string, calls, clients, perCall int, src string, keys, args []string) (rps, cpuPerJoin float64, err error) {
	sha, err := rdb.ScriptLoad(ctx, src).Result()
	if err != nil {
		return 0, 0, err
	}
	before, err := redisNow(ctx, rdb)
	if err != nil {
		return 0, 0, err
	}
	evalArgs := append([]string{"-r", "100000000", "EVALSHA", sha, strconv.Itoa(len(keys))}, append(keys, args...)...)
	if rps, err = redisBenchmark(ctx, addr, calls, clients, evalArgs...); err != nil {
		return 0, 0, err
	}
	after, err := redisNow(ctx, rdb)
	if err != nil {
		return 0, 0, err
	}
	return rps, after.minus(before).cpu / float64(calls*perCall), nil
}

// prepareZset fills a queue-like sorted set for the ZPOPMIN baseline.
func prepareZset(ctx context.Context, rdb *redis.Client, key string, n int) error {
	pipe := rdb.Pipeline()
	for i := 0; i < n; i++ {
		pipe.ZAdd(ctx, key, redis.Z{Score: float64(i), Member: "m" + strconv.Itoa(i)})
		if i%10000 == 9999 {
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
		}
	}
	_, err := pipe.Exec(ctx)
	return err
}

// seatTableSQL is the bare table for the pgbench baseline: the same
// conditional UPDATE a hold runs, with nothing else around it.
const seatTableSQL = `
CREATE TABLE bench_seat (
  event_id bigint NOT NULL, seat_id text NOT NULL, status text NOT NULL DEFAULT 'AVAILABLE',
  held_by text, hold_expires_at timestamptz, PRIMARY KEY (event_id, seat_id));
INSERT INTO bench_seat (event_id, seat_id) SELECT 1, 'S-' || g FROM generate_series(1, 50000) g;
ANALYZE bench_seat;`

// pgbenchScript holds or takes over an expired hold of one random seat,
// then lets it expire at once so the next transaction can take it again.
const pgbenchScript = `\set s random(1, 50000)
UPDATE bench_seat SET status = 'HELD', held_by = 'bench', hold_expires_at = now() - interval '1 second'
 WHERE event_id = 1 AND seat_id = 'S-' || :s
   AND (status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at < now()));
`

// holdSeatsScript is a whole hold as booking makes it, one call of
// hold_seats, run by pgbench on booking's schema and seats: the hold
// without the Go client. Each of pgbenchClients clients holds seats of
// its own rows (12 of the 100 rows in each section) for a new customer,
// and a hold lasts 0 ms, so a seat is never held when the next call picks
// it: pgbench ends a client at its first error, and every error would be
// a measurement's artefact, not a refusal a sale makes.
const holdSeatsScript = `\set q random(1, 4)
\set r 1 + :client_id * 12 + random(0, 11)
\set n random(1, 125)
\set c random(1, 1000000000)
SELECT * FROM hold_seats(1, gen_random_uuid(), 'pgbench-' || :client_id || '-' || :c, 'bench', 'EUR', 0, 4,
                         ARRAY[substr('ABCD', :q, 1) || '-' || :r || '-' || :n]);
`

// createBenchSeats creates and fills the bare table of pgbenchScript.
func createBenchSeats(ctx context.Context, databaseURL string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err = conn.Exec(ctx, seatTableSQL); err != nil {
		return fmt.Errorf("bench table: %w", err)
	}
	return nil
}

// pgbench runs script with clients clients for seconds and returns tps;
// a client that failed fails the run.
func pgbench(ctx context.Context, databaseURL, dir, name, script string, clients, seconds int) (float64, error) {
	file := filepath.Join(dir, name+".sql")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		return 0, err
	}
	bin := "pgbench"
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/pgbench"); err == nil {
		bin = "/usr/lib/postgresql/15/bin/pgbench"
	}
	out, err := exec.CommandContext(ctx, bin, "-n", "-f", file, "-c", strconv.Itoa(clients), "-j", "2",
		"-T", strconv.Itoa(seconds), "-M", "prepared", databaseURL).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench %s: %w: %s", name, err, out)
	}
	if m := regexp.MustCompile(`number of failed transactions: ([0-9]+)`).FindSubmatch(out); m != nil && string(m[1]) != "0" {
		return 0, fmt.Errorf("pgbench %s: %s transactions failed: %s", name, m[1], out)
	}
	m := regexp.MustCompile(`tps = ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench %s output: %s", name, out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// plainAnswer has the shape and size of a join's answer: a 55-character
// queueId (41 bytes in base64url) and the same fields.
var plainAnswer = []byte(`{"queueId":"AgAAAAAAAAABAAAAADuaygEAAAAAAAAAB5Zq3yvD0kK9n2xWc1TvQ8R","status":"waiting","place":1000000001,` +
	`"position":1,"ahead":0,"estimatedWaitSeconds":0,"pollAfterSeconds":5,"salesOpen":true}` + "\n")

// plainServer is a minimal Go HTTP handler: the ceiling of any HTTP service
// on this machine under the same load generator.
func plainServer() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events/{eventId}/queue", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(plainAnswer)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}
