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

// Package bench measures ticketfair against the machine's own limits in
// one run, so the figures compare: redis-benchmark running the queue's
// join script, pgbench running the hold's conditional UPDATE on a
// 50,000-seat table and booking's own hold_seats, and a plain Go HTTP
// handler, each next to ticketfair's joins/s, polls/s and holds/s under
// the same closed-loop load generator; and Apache Kafka's own
// kafka-producer-perf-test next to the relay's publishes/s on the same
// broker.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/booking"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/queue"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

// Options of a bench run.
type Options struct {
	Duration    time.Duration // per measurement
	Concurrency int           // closed-loop workers of the HTTP measurements
	Out         io.Writer
	Markdown    string // write the results table here too
	// HoldsOnly runs the hold measurements alone and prints their rows;
	// Markdown is not written.
	HoldsOnly bool
	// CPUProfile, when set, receives a CPU profile of the HTTP holds.
	CPUProfile string
}

// Row is one figure and its baseline.
type Row struct {
	What, Baseline         string
	PerSecond, BaselineRPS float64
	P50, P99               time.Duration
}

const eventID = 1

// pgbenchClients is pgbench's number of clients, and the store-level
// holds', so the two compare.
const pgbenchClients = 8

// waitingPeople is the size of the bench's waiting crowd.
const waitingPeople = 10000

// Run performs every measurement and prints the ratios.
func Run(ctx context.Context, o Options) ([]Row, error) {
	if o.Out == nil {
		o.Out = os.Stdout
	}
	dir, err := os.MkdirTemp("", "ticketfair-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rs, err := localsvc.StartRedis(ctx)
	if err != nil {
		return nil, err
	}
	defer rs.Stop()
	pg, err := localsvc.StartPostgres(ctx)
	if err != nil {
		return nil, err
	}
	defer pg.Stop()
	logf := func(f string, a ...any) { fmt.Fprintf(o.Out, f+"\n", a...) }
	// The services run in this process; a closed loop ending mid-request
	// makes them log cancelled requests, which are not failures here.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer slog.SetDefault(prev)
	if o.HoldsOnly {
		return runHolds(ctx, o, dir, rs.URL, pg.URL, logf)
	}

	// Baselines.
	logf("baseline: redis-benchmark running the join script ...")
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	src, keys, args := queue.JoinCommand(eventID+1000, "c:__rand_int__")
	joinScriptRPS, cpuAloneOne, err := scriptJoins(ctx, rdb, rs.Addr, 200000, 50, 1, src, keys, args)
	if err != nil {
		return nil, err
	}
	logf("baseline: redis-benchmark running the coalesced join script, %d joins a call ...", aloneJoinsPerCall)
	src, keys, args = queue.JoinManyCommand(eventID+2000, "c:__rand_int__", aloneJoinsPerCall)
	_, cpuAloneBatched, err := scriptJoins(ctx, rdb, rs.Addr, 200000/aloneJoinsPerCall, 4, aloneJoinsPerCall, src, keys, args)
	if err != nil {
		return nil, err
	}
	logf("baseline: redis-benchmark ZPOPMIN batches of 100 ...")
	if err := prepareZset(ctx, rdb, "bench:zpop", 2_000_000); err != nil {
		return nil, err
	}
	zpopRPS, err := redisBenchmark(ctx, rs.Addr, 15000, 10, "ZPOPMIN", "bench:zpop", "100")
	if err != nil {
		return nil, err
	}
	logf("baseline: pgbench with the hold's conditional UPDATE on 50,000 seats ...")
	if err := createBenchSeats(ctx, pg.URL); err != nil {
		return nil, err
	}
	pgbenchTPS, err := pgbench(ctx, pg.URL, dir, "update", pgbenchScript, pgbenchClients, int(o.Duration.Seconds()))
	if err != nil {
		return nil, err
	}
	logf("baseline: a plain Go HTTP handler ...")
	plainURL, stopPlain, err := plainServer()
	if err != nil {
		return nil, err
	}
	hc := httpClient(o.Concurrency)
	// The same request shape as a join: a POST with a bearer token; and
	// the same work in the load generator, which decodes a join's answer
	// (the later measurements need its queueId).
	plainTok, _ := identity.SignHS256("bench-identity-secret", "bench", "ticketfair", "c0", time.Hour)
	plain := closedLoop(ctx, o.Concurrency, o.Duration, func(ctx context.Context, w, i int) error {
		var resp queueapi.Place
		return call(ctx, hc, http.MethodPost, plainURL+"/events/1/queue", map[string]string{"Authorization": "Bearer " + plainTok}, "{}", &resp, http.StatusCreated)
	})
	stopPlain()

	// ticketfair.
	rdb.FlushAll(ctx)
	s, err := startServices(ctx, rs.URL, pg.URL)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	logf("ticketfair: joins ...")
	tokens := make([]string, 0, 400000)
	for i := 0; i < cap(tokens); i++ {
		tok, _ := identity.SignHS256(s.identitySecret, "bench", "ticketfair", fmt.Sprintf("c%d", i), time.Hour)
		tokens = append(tokens, tok)
	}
	var mu sync.Mutex
	var queueIDs []struct{ tok, id string }
	var next int
	var nextMu sync.Mutex
	joinVia := func(url string) func(ctx context.Context, w, i int) error {
		return func(ctx context.Context, w, i int) error {
			nextMu.Lock()
			tok := tokens[next%len(tokens)]
			next++
			nextMu.Unlock()
			var resp queueapi.Place
			if err := call(ctx, hc, http.MethodPost, url+"/events/1/queue", map[string]string{"Authorization": "Bearer " + tok}, "{}", &resp, http.StatusCreated, http.StatusOK); err != nil {
				return err
			}
			mu.Lock()
			queueIDs = append(queueIDs, struct{ tok, id string }{tok, resp.QueueID})
			mu.Unlock()
			return nil
		}
	}
	// Redis's background load (the queues' snapshot refreshes), measured
	// idle for as long as a measurement and subtracted from both.
	logf("ticketfair: Redis CPU while idle ...")
	idle0, err := redisNow(ctx, s.rdb)
	if err != nil {
		return nil, err
	}
	time.Sleep(o.Duration)
	r0, err := redisNow(ctx, s.rdb)
	if err != nil {
		return nil, err
	}
	background := r0.minus(idle0)
	logf("ticketfair: joins with one script call per join ...")
	joinsOne := closedLoop(ctx, o.Concurrency, o.Duration, joinVia(s.queueOneURL))
	r1, err := redisNow(ctx, s.rdb)
	if err != nil {
		return nil, err
	}
	logf("ticketfair: joins, coalesced ...")
	joins := closedLoop(ctx, o.Concurrency, o.Duration, joinVia(s.queueURL))
	r2, err := redisNow(ctx, s.rdb)
	if err != nil {
		return nil, err
	}
	one, batched := r1.minus(r0).minus(background), r2.minus(r1).minus(background)
	cpuOne := max(one.cpu, 0) / float64(joinsOne.Ops) * 100000
	cpuBatched := max(batched.cpu, 0) / float64(joins.Ops) * 100000
	if len(queueIDs) == 0 {
		return nil, fmt.Errorf("no join succeeded")
	}
	logf("ticketfair: polls ...")
	polls := closedLoop(ctx, o.Concurrency, o.Duration, func(ctx context.Context, w, i int) error {
		q := queueIDs[(w*7919+i)%len(queueIDs)]
		return call(ctx, hc, http.MethodGet, s.queueURL+"/events/1/queue/"+q.id, map[string]string{"Authorization": "Bearer " + q.tok}, "", nil, http.StatusOK)
	})
	logf("ticketfair: a waiting crowd, per-person polls, then the public state through nginx ...")
	ng, err := localsvc.StartNginx(ctx, s.queueURL)
	if err != nil {
		return nil, err
	}
	defer ng.Stop()
	people := make([]person, 0, waitingPeople)
	for _, q := range queueIDs[:min(len(queueIDs), waitingPeople)] {
		people = append(people, person{tok: q.tok, id: q.id})
	}
	before, err := measureWaiting(ctx, "per-person polls every 5 s (the page before)", hc, s.queueURL, ng.URL, s.rdb, people, o.Duration, 5*time.Second, time.Minute, false)
	if err != nil {
		return nil, err
	}
	after, err := measureWaiting(ctx, "public state every 5 s through nginx + per-person heartbeat every 5 min", hc, s.queueURL, ng.URL, s.rdb, people, o.Duration, 5*time.Second, queueapi.Heartbeat, true)
	if err != nil {
		return nil, err
	}
	h, err := s.measureHoldSection(ctx, dir, hc, o, logf)
	if err != nil {
		return nil, err
	}
	holdSeatsTPS, storeHolds, holds := h.pgbenchTPS, h.store, h.http
	// After the holds, so the map is a mix of held and available seats.
	logf("ticketfair: seat map bytes at 50,000 seats ...")
	time.Sleep(1100 * time.Millisecond) // the seat map cache's refresh
	seatBytes, err := seatMapBytes(ctx, s.bookingURL)
	if err != nil {
		return nil, err
	}

	door, err := measureDoor(ctx, s.databaseURL, hc, o, logf)
	if err != nil {
		return nil, err
	}
	// Last: its broker runs for this section alone, after every other
	// measurement.
	rel, err := measureRelay(ctx, pg.URL, dir, logf)
	if err != nil {
		return nil, err
	}

	// A rate of failing calls measures nothing.
	for name, m := range map[string]measurement{"plain handler": plain, "joins, one call each": joinsOne, "joins": joins,
		"polls": polls, "check-ins": door.checkins} {
		if m.Errors > (m.Ops+m.Errors)/100 {
			return nil, fmt.Errorf("bench: %s: %d of %d calls failed, the first: %v", name, m.Errors, m.Ops+m.Errors, m.FirstErr)
		}
	}
	rows := []Row{
		{What: "queue joins/s", PerSecond: joins.PerSecond, P50: joins.P50, P99: joins.P99, Baseline: "redis-benchmark join script", BaselineRPS: joinScriptRPS},
		{What: "queue joins/s", PerSecond: joins.PerSecond, P50: joins.P50, P99: joins.P99, Baseline: "plain Go handler (POST + bearer)", BaselineRPS: plain.PerSecond},
		{What: "queue joins/s", PerSecond: joins.PerSecond, P50: joins.P50, P99: joins.P99, Baseline: "one script call per join", BaselineRPS: joinsOne.PerSecond},
		{What: "queue polls/s", PerSecond: polls.PerSecond, P50: polls.P50, P99: polls.P99, Baseline: "plain Go handler (POST + bearer)", BaselineRPS: plain.PerSecond},
		{What: "booking holds/s (store)", PerSecond: storeHolds.PerSecond, P50: storeHolds.P50, P99: storeHolds.P99, Baseline: "pgbench conditional UPDATE", BaselineRPS: pgbenchTPS},
		{What: "booking holds/s (store)", PerSecond: storeHolds.PerSecond, P50: storeHolds.P50, P99: storeHolds.P99, Baseline: "pgbench hold_seats", BaselineRPS: holdSeatsTPS},
		{What: "pgbench hold_seats/s", PerSecond: holdSeatsTPS, Baseline: "pgbench conditional UPDATE", BaselineRPS: pgbenchTPS},
		{What: "booking holds/s (HTTP)", PerSecond: holds.PerSecond, P50: holds.P50, P99: holds.P99, Baseline: "pgbench conditional UPDATE", BaselineRPS: pgbenchTPS},
		{What: "booking holds/s (HTTP)", PerSecond: holds.PerSecond, P50: holds.P50, P99: holds.P99, Baseline: "plain Go handler (POST + bearer)", BaselineRPS: plain.PerSecond},
		h.bestRow(),
		h.ratioRow(),
		// The admitter's primitive, for reference: members popped per second.
		{What: "(reference only)", Baseline: "redis-benchmark ZPOPMIN 100, members/s", BaselineRPS: zpopRPS * 100},
	}
	rows = append(rows, door.rows(plain.PerSecond)...)
	rows = append(rows, rel.row())
	cpuLine := fmt.Sprintf("\nRedis CPU per 100,000 joins (INFO cpu, user+sys, less %.2f s of idle background per %s): %.2f s coalesced (%d joins, %.1f per script call) vs %.2f s with one script call per join (%d joins): %.2fx\n",
		background.cpu, o.Duration, cpuBatched, joins.Ops, float64(joins.Ops)/float64(max(batched.scripts, 1)), cpuOne, joinsOne.Ops, cpuBatched/cpuOne)
	cpuLine += fmt.Sprintf("Redis CPU per 100,000 joins, the same scripts run by redis-benchmark before the services start: %.2f s coalesced (%d a call, 4 connections) vs %.2f s one call per join (50 connections): %.2fx\n",
		cpuAloneBatched*1e5, aloneJoinsPerCall, cpuAloneOne*1e5, cpuAloneBatched/cpuAloneOne)
	sweepLine := h.sweepLine()
	table := formatRows(rows, o) + cpuLine + sweepLine + rel.line() + formatWaiting([]waitingCost{before, after}) + seatBytes
	fmt.Fprint(o.Out, table)
	if o.Markdown != "" {
		if err := writeLatest(o.Markdown, table); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

func formatRows(rows []Row, o Options) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\nticketfair-dev bench, %s, %s/%s, %d cores, %s per measurement, %d concurrent clients\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), o.Duration, o.Concurrency)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| measurement\t per second\t p50\t p99\t baseline\t baseline/s\t ratio\t")
	fmt.Fprintln(tw, "| ---\t ---\t ---\t ---\t ---\t ---\t ---\t")
	for _, r := range rows {
		perSecond, ratio := "-", "-"
		if r.PerSecond > 0 {
			perSecond = fmt.Sprintf("%.0f", r.PerSecond)
			if r.BaselineRPS > 0 {
				ratio = fmt.Sprintf("%.2f", r.PerSecond/r.BaselineRPS)
			}
		}
		fmt.Fprintf(tw, "| %s\t %s\t %s\t %s\t %s\t %.0f\t %s\t\n", r.What, perSecond, dur(r.P50), dur(r.P99), r.Baseline, r.BaselineRPS, ratio)
	}
	tw.Flush()
	return b.String()
}

func dur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(10 * time.Microsecond).String()
}

// services are the queue and booking services running in this process.
type services struct {
	queueURL, bookingURL string
	queueOneURL          string // the queue with one script call per join
	identitySecret       string
	databaseURL          string // booking's database
	keys                 *accesstoken.KeySet
	rdb                  *redis.Client
	stops                []func()
}

func (s *services) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

func startServices(ctx context.Context, redisURL, pgURL string) (*services, error) {
	s := &services{identitySecret: "bench-identity-secret"}
	db, err := createDatabase(ctx, pgURL, "ticketfair")
	if err != nil {
		return nil, err
	}
	s.databaseURL = db
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		return nil, err
	}
	sections, err := booking.ParseSeating("A:100.00:100:125;B:80.00:100:125;C:60.00:100:125;D:40.00:100:125")
	if err != nil {
		return nil, err
	}
	if _, err := booking.Seed(ctx, pool, eventID, sections); err != nil {
		return nil, err
	}
	pool.Close()
	keySpec, _ := accesstoken.GenerateKey("bench")
	s.keys, _ = accesstoken.ParseKeys(keySpec)
	opt, _ := redis.ParseURL(redisURL)
	s.rdb = redis.NewClient(opt)
	s.stops = append(s.stops, func() { s.rdb.Close() })
	ident := config.Identity{IdentityHMACSecret: s.identitySecret, IdentityIssuer: "bench", IdentityAudience: "ticketfair"}

	q := config.DefaultsOf[config.Queue]()
	q.HTTPAddr, q.EventID, q.RedisURL, q.Identity, q.AccessTokenKeys = "127.0.0.1:0", eventID, redisURL, ident, keySpec
	q.SalesOpenAt = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	q.LeaderElection, q.Admitter = false, false // measure joins and polls alone
	// The bench's clients are one network on loopback at thousands of
	// joins a second: the rate limits would refuse them, and their Redis
	// calls are measured by their own benchmark (ratelimit.BenchmarkAllow).
	q.RateLimits = config.RateLimits{}
	if s.queueURL, err = serve(ctx, s, func(ctx context.Context, ready func(net.Addr)) error { return queue.Run(ctx, q, ready) }); err != nil {
		return nil, err
	}
	// The same queue with one script call per join: the baseline of the
	// coalesced joins' Redis CPU. Both run through every measurement, so
	// their snapshot refreshes load Redis alike.
	q1 := q
	q1.JoinBatch = 1
	if s.queueOneURL, err = serve(ctx, s, func(ctx context.Context, ready func(net.Addr)) error { return queue.Run(ctx, q1, ready) }); err != nil {
		return nil, err
	}
	b := config.DefaultsOf[config.Booking]()
	b.HTTPAddr, b.EventID, b.DatabaseURL, b.RedisURL, b.Identity, b.AccessTokenKeys = "127.0.0.1:0", eventID, db, redisURL, ident, keySpec
	b.WebhookSecrets, b.ServiceToken = "bench-webhook", "bench-service"
	b.RateLimits = config.RateLimits{} // one client network at thousands of holds a second
	// The holds measured against pgbench expire at once, as pgbench's
	// own do, so that the seats can be taken again. Swept during the
	// measurement every 2 s, they would double its writes with releases a
	// sale does not make (its holds last minutes, and most are paid): the
	// bench sweeps them itself between measurements (services.sweep), and
	// the HTTP holds last the default five minutes.
	b.SweepInterval = time.Hour
	if s.bookingURL, err = serve(ctx, s, func(ctx context.Context, ready func(net.Addr)) error { return booking.Run(ctx, b, ready) }); err != nil {
		return nil, err
	}
	return s, nil
}

func serve(ctx context.Context, s *services, run func(context.Context, func(net.Addr)) error) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, func(a net.Addr) { ready <- a }) }()
	select {
	case a := <-ready:
		s.stops = append(s.stops, func() { cancel(); <-errc })
		url := "http://" + a.String()
		// Wait until ready.
		for i := 0; i < 100; i++ {
			if resp, err := http.Get(url + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return url, nil
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		return url, fmt.Errorf("%s not ready", url)
	case err := <-errc:
		cancel()
		return "", err
	}
}

// holdTokens admits n customers: their access tokens, with active
// sessions.
func (s *services) holdTokens(ctx context.Context, n int) ([]string, error) {
	tokens := make([]string, n)
	pipe := s.rdb.Pipeline()
	for i := 0; i < n; i++ {
		sid := fmt.Sprintf("bench-s%d", i)
		tok, _, err := s.keys.Sign(eventID, fmt.Sprintf("h%d", i), sid, time.Now(), time.Hour)
		if err != nil {
			return nil, err
		}
		tokens[i] = tok
		pipe.ZAdd(ctx, zone.ActiveKey(eventID), redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: sid})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	return tokens, nil
}

// measureHolds holds one random seat per request for distinct customers
// with active sessions (holdTokens): the uncontended hold path.
func (s *services) measureHolds(ctx context.Context, hc *http.Client, o Options, tokens []string) measurement {
	n := len(tokens)
	seats := benchSeats()
	var mu sync.Mutex
	next := 0
	return closedLoop(ctx, o.Concurrency/4+1, o.Duration, func(ctx context.Context, w, i int) error {
		mu.Lock()
		k := next
		next++
		mu.Unlock()
		if k >= n {
			return fmt.Errorf("out of customers")
		}
		body, _ := json.Marshal(map[string]any{"seats": []string{seats[k%len(seats)]}})
		return call(ctx, hc, http.MethodPost, s.bookingURL+"/events/1/holds", map[string]string{"X-Queue-Token": tokens[k], "Content-Type": "application/json"}, string(body), nil, http.StatusCreated)
	})
}

// benchSeats are the bench event's 50,000 seat ids.
func benchSeats() []string {
	seats := make([]string, 0, 50000)
	for _, sec := range []string{"A", "B", "C", "D"} {
		for r := 1; r <= 100; r++ {
			for c := 1; c <= 125; c++ {
				seats = append(seats, fmt.Sprintf("%s-%d-%d", sec, r, c))
			}
		}
	}
	return seats
}

// sweep frees the expired holds of the last measurement, as booking's
// sweeper would, and says what it freed and how long that took.
func (s *services) sweep(ctx context.Context) (string, error) {
	pool, err := database.Pool(ctx, config.Postgres{DatabaseURL: s.databaseURL}, database.MaxConns(1))
	if err != nil {
		return "", err
	}
	defer pool.Close()
	start := time.Now()
	seats, orders, _, err := benchStore(pool).Sweep(ctx, 1000)
	if err != nil {
		return "", fmt.Errorf("sweeping the expired holds: %w", err)
	}
	return fmt.Sprintf("%d seats and %d orders in %s", seats, orders, time.Since(start).Round(time.Millisecond)), nil
}

// benchStore is the store of the holds measured against pgbench, whose
// holds expire after a millisecond, and of the sweeps that free them.
func benchStore(pool *pgxpool.Pool) *booking.Store {
	return booking.NewStore(pool, eventID, time.Millisecond, 4, "EUR")
}

// measureStoreHolds holds one seat per call through booking.Store, with
// no HTTP, token or session check around it: what compares with pgbench's
// bare conditional UPDATE and with pgbench running hold_seats. The holds
// expire at once, as pgbench's do; sweep frees them afterwards. It has
// one connection per client, as pgbench has; pgx's default pool (four
// connections on two cores) would measure the queue for the pool.
func (s *services) measureStoreHolds(ctx context.Context, o Options, clients int) (measurement, error) {
	pool, err := database.Pool(ctx, config.Postgres{DatabaseURL: s.databaseURL}, database.MaxConns(clients))
	if err != nil {
		return measurement{}, err
	}
	defer pool.Close()
	st := benchStore(pool)
	seats := benchSeats()
	var next atomic.Int64
	m := closedLoop(ctx, clients, o.Duration, func(ctx context.Context, w, i int) error {
		k := next.Add(1)
		_, err := st.Hold(ctx, fmt.Sprintf("store-%d", k), "bench", []string{seats[k%int64(len(seats))]})
		return err
	})
	return m, nil
}

// measureStoreBest holds two seats together by best available through
// booking.Store, as measureStoreHolds holds one picked seat: the same
// clients, one connection each, holds that expire at once. The category
// cycles over the bench's four sections (each its own category in the
// shorthand seating), so the clients spread as picked holds do.
func (s *services) measureStoreBest(ctx context.Context, o Options, clients int) (measurement, error) {
	pool, err := database.Pool(ctx, config.Postgres{DatabaseURL: s.databaseURL}, database.MaxConns(clients))
	if err != nil {
		return measurement{}, err
	}
	defer pool.Close()
	st := benchStore(pool)
	var next atomic.Int64
	m := closedLoop(ctx, clients, o.Duration, func(ctx context.Context, w, i int) error {
		k := next.Add(1)
		_, err := st.HoldBest(ctx, fmt.Sprintf("best-%d", k), "bench", "", "", booking.BestRequest{Quantity: 2, Category: benchCategories[k%4], Together: true})
		return err
	})
	return m, nil
}

// benchCategories are the bench seating's sections, each a category.
var benchCategories = [4]string{"A", "B", "C", "D"}

// seatMapBytes compares the seat map's size as an object per seat with
// the compact one (a status string per row), gzipped as served.
func seatMapBytes(ctx context.Context, bookingURL string) (string, error) {
	size := func(query, encoding string) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, bookingURL+"/events/1/seats"+query, nil)
		req.Header.Set("Accept-Encoding", encoding)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return 0, "", fmt.Errorf("seat map%s: %d", query, resp.StatusCode)
		}
		return len(b), resp.Header.Get("Content-Encoding"), err
	}
	perSeat, _, err := size("", "identity")
	if err != nil {
		return "", err
	}
	rows, _, err := size("?format=rows", "identity")
	if err != nil {
		return "", err
	}
	gz, enc, err := size("?format=rows", "gzip")
	if err != nil {
		return "", err
	}
	if enc != "gzip" {
		return "", fmt.Errorf("seat map not gzipped")
	}
	return fmt.Sprintf("\nseat map of 50,000 seats: %d bytes as an object per seat, %d per row, %d per row gzipped (%.0fx fewer)\n",
		perSeat, rows, gz, float64(perSeat)/float64(gz)), nil
}

// call sends one request of the closed loop; it fails unless the answer's
// status is one of want, and decodes a JSON answer into dst when given.
func call(ctx context.Context, hc *http.Client, method, url string, hdr map[string]string, body string, dst any, want ...int) error {
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !slices.Contains(want, resp.StatusCode) {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("%s %s: status %d: %s", method, url, resp.StatusCode, bytes.TrimSpace(b))
	}
	if dst != nil {
		return json.NewDecoder(resp.Body).Decode(dst)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}
