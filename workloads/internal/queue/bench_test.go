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

package queue

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
)

// Benchmarks report Redis round trips per request from INFO commandstats
// (scripts count once; their inner commands are not round trips) next to
// the straightforward design: join = INCR + ZADD NX, poll = ZRANK + GET.
//
//	go test -run XXX -bench . -benchtime 20000x ./workloads/internal/queue/

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}

func benchGet(b *testing.B, method, url, tok string) int {
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// roundTrips counts the commands in INFO commandstats that count says to.
func roundTrips(tb testing.TB, rdb *redis.Client, count func(command string) bool) int64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for name, calls := range scrape.CommandStats(info, "calls") {
		if count(name) {
			n += calls
		}
	}
	return n
}

// scriptsOnly counts EVAL/EVALSHA: the queue issues nothing else per
// request, and the scripts' inner commands are not round trips.
func scriptsOnly(name string) bool { return name == "evalsha" || name == "eval" }

// allButInfo counts every command (the straightforward design runs no scripts).
func allButInfo(name string) bool { return name != "info" }

// measure runs req b.N times in parallel and reports Redis round trips per
// request and requests per second.
func measure(b *testing.B, rdb *redis.Client, count func(string) bool, unit string, req func(i int) int, want int) {
	before := roundTrips(b, rdb, count)
	var i atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if s := req(int(i.Add(1) - 1)); want != 0 && s != want {
				b.Errorf("%s: status %d", unit, s)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(roundTrips(b, rdb, count)-before)/float64(b.N), "redis/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"/s")
}

func benchService(b *testing.B) (string, *redis.Client) {
	url := testenv.RedisURL(b)
	opt, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opt)
	b.Cleanup(func() { rdb.Close() })
	return startService(b, testConfig(b, url), nil), rdb
}

func tokens(b *testing.B, n int) []string {
	toks := make([]string, n)
	for i := range toks {
		toks[i] = idToken(b, fmt.Sprintf("c%07d", i))
	}
	return toks
}

func BenchmarkJoin(b *testing.B) {
	base, rdb := benchService(b)
	toks := tokens(b, b.N)
	measure(b, rdb, scriptsOnly, "joins", func(i int) int { return benchGet(b, "POST", queueURL(base), toks[i]) }, 201)
}

func BenchmarkPoll(b *testing.B) {
	base, rdb := benchService(b)
	const customers = 1000
	toks := tokens(b, customers)
	ids := make([]string, customers)
	for i, tok := range toks {
		req, _ := http.NewRequest("POST", queueURL(base), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := benchClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ids[i] = strings.Split(strings.Split(string(body), `"queueId":"`)[1], `"`)[0]
	}
	time.Sleep(2 * snapshotEvery)
	measure(b, rdb, scriptsOnly, "polls", func(i int) int {
		k := i % customers
		return benchGet(b, "GET", queueURL(base)+"/"+ids[k], toks[k])
	}, 200)
}

// naive is the straightforward design, behind the same identity check:
// join = INCR + ZADD NX, poll = ZRANK + GET (the admission state).
func naive(b *testing.B) (string, *redis.Client) {
	rdb := testenv.Redis(b)
	ver, err := identity.New(context.Background(), config.Identity{IdentityHMACSecret: testSecret, IdentityIssuer: testIss, IdentityAudience: testAud})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events/{e}/queue", func(w http.ResponseWriter, r *http.Request) {
		c, err := ver.Customer(r)
		if err != nil {
			w.WriteHeader(401)
			return
		}
		seq, err := rdb.Incr(r.Context(), "naive:seq").Result()
		if err == nil {
			err = rdb.ZAddNX(r.Context(), "naive:q", redis.Z{Score: float64(seq), Member: c}).Err()
		}
		if err != nil {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"queueId":%q}`, c)
	})
	mux.HandleFunc("GET /events/{e}/queue/{id}", func(w http.ResponseWriter, r *http.Request) {
		c, err := ver.Customer(r)
		if err != nil || c != r.PathValue("id") {
			w.WriteHeader(404)
			return
		}
		rank, err := rdb.ZRank(r.Context(), "naive:q", c).Result()
		if err == nil || err == redis.Nil {
			_, err = rdb.Get(r.Context(), "naive:admitted:"+c).Result()
		}
		if err != nil && err != redis.Nil {
			w.WriteHeader(503)
			return
		}
		fmt.Fprintf(w, `{"status":"waiting","ahead":%d}`, rank)
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv.URL, rdb
}

func BenchmarkNaiveJoin(b *testing.B) {
	base, rdb := naive(b)
	toks := tokens(b, b.N)
	measure(b, rdb, allButInfo, "joins", func(i int) int { return benchGet(b, "POST", queueURL(base), toks[i]) }, 201)
}

func BenchmarkNaivePoll(b *testing.B) {
	base, rdb := naive(b)
	const customers = 1000
	toks := tokens(b, customers)
	for _, tok := range toks {
		benchGet(b, "POST", queueURL(base), tok)
	}
	measure(b, rdb, allButInfo, "polls", func(i int) int {
		k := i % customers
		return benchGet(b, "GET", queueURL(base)+"/"+fmt.Sprintf("c%07d", k), toks[k])
	}, 200)
}

// loadQueue puts n waiting customers through the join script, pipelined.
func loadQueue(b *testing.B, rdb *redis.Client, st *store, prefix string, n int) {
	ctx := context.Background()
	if err := joinScript.Load(ctx, rdb).Err(); err != nil {
		b.Fatal(err)
	}
	for start := 0; start < n; start += 5000 {
		pipe := rdb.Pipeline()
		for i := start; i < min(start+5000, n); i++ {
			joinScript.EvalSha(ctx, pipe, st.k.joinKeys(),
				fmt.Sprintf("%s%07d", prefix, i), 0, "shuffle", "0", strconv.FormatInt(postOpenBase, 10), "1")
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmitTick5000 times one admission tick that admits 5,000 people.
func BenchmarkAdmitTick5000(b *testing.B) {
	rdb := testenv.Redis(b)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive = 5000
	ctx := context.Background()
	epoch, _ := st.takeEpoch(ctx)
	var spent time.Duration
	for i := range b.N {
		rdb.Del(ctx, st.k.active)
		loadQueue(b, rdb, st, fmt.Sprintf("r%d-", i), 5000)
		start := time.Now()
		r, err := st.tick(ctx, epoch, set, 5000)
		spent += time.Since(start)
		if err != nil || r.Admitted != 5000 {
			b.Fatalf("tick: %+v %v", r, err)
		}
	}
	b.ReportMetric(spent.Seconds()*1000/float64(b.N), "ms/tick")
}

// BenchmarkQueueMemory measures Redis memory per waiting member and for
// TICKETFAIR_BENCH_MEMBERS (default 2,000,000) of them.
func BenchmarkQueueMemory(b *testing.B) {
	n := 2_000_000
	if v, err := strconv.Atoi(os.Getenv("TICKETFAIR_BENCH_MEMBERS")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		rdb := testenv.Redis(b)
		st := newStore(rdb, testEvent)
		before := usedMemory(b, rdb)
		loadQueue(b, rdb, st, "customer-", n)
		after := usedMemory(b, rdb)
		b.ReportMetric(float64(after-before)/float64(n), "bytes/member")
		b.ReportMetric(float64(after-before)/(1<<20), "MiB-total")
		rdb.FlushDB(context.Background())
	}
}

func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no used_memory")
	return 0
}

// BenchmarkJoinRedisCPU measures Redis's own CPU time per join (INFO cpu)
// through the coalesced script, in calls of 256, 48 (about what a pod's
// calls carry under load) and 8, and through one script call per join,
// from 4 goroutines into a queue that grows as a sale's does: the sizes
// split a call's cost into a part per call and a part per join.
//
//	go test -run '^$' -bench JoinRedisCPU -benchtime 200000x ./workloads/internal/queue/
func BenchmarkJoinRedisCPU(b *testing.B) {
	for _, batch := range []int{256, 48, 8, 1} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			rdb := testenv.Redis(b)
			st := newStore(rdb, testEvent)
			set := testSettings()
			ctx := context.Background()
			cpu := func() float64 {
				info, err := rdb.Info(ctx, "cpu").Result()
				if err != nil {
					b.Fatal(err)
				}
				return scrape.CPUSeconds(info)
			}
			var next, done atomic.Int64
			before := cpu()
			b.ResetTimer()
			var g errgroup.Group
			for range 4 {
				g.Go(func() error {
					customers := make([]string, batch)
					for {
						end := next.Add(int64(batch))
						if end > int64(b.N) {
							return nil
						}
						for k := range customers {
							customers[k] = "c" + strconv.FormatInt(end-int64(k), 10)
						}
						var err error
						if batch == 1 {
							_, err = st.join(ctx, customers[0], set)
						} else {
							_, err = st.joinMany(ctx, customers, set)
						}
						if err != nil {
							return err
						}
						done.Add(int64(batch))
					}
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric((cpu()-before)*1e6/float64(max(done.Load(), 1)), "redis-cpu-µs/join")
		})
	}
}
