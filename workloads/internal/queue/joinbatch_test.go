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
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// TestCoalescedJoins: 400 customers join at once, each of them from four
// goroutines. Coalesced into a few script calls, every customer still has
// exactly one place, the places are distinct FIFO places after opening,
// and far fewer script calls than joins reached Redis.
//
// On a loaded machine (every package's tests at once, with -race) a join
// can outlast its request's deadline and be answered 503 "try again
// shortly" while its batch still completes; the client then retries, as
// the waiting page does, and its retry finds the place (200). So a
// customer's place was created by exactly one answered 201, or by a join
// that was answered 503.
func TestCoalescedJoins(t *testing.T) {
	redisURL, rdb := testenv.RedisDB(t)
	base := startService(t, testConfig(t, redisURL), nil)
	const customers, dup, attempts = 400, 4, 20
	before := roundTrips(t, rdb, scriptsOnly)
	var mu sync.Mutex
	places := map[string]map[int64]bool{}
	created := map[string]int{}
	unavailable := map[string]int{}
	var wg sync.WaitGroup
	for i := range customers * dup {
		c := fmt.Sprintf("c%d", i%customers)
		tok := idToken(t, c)
		wg.Go(func() {
			r := do(t, "POST", queueURL(base), tok, nil)
			for n := 1; r.Status == http.StatusServiceUnavailable && n < attempts; n++ {
				mu.Lock()
				unavailable[c]++
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				r = do(t, "POST", queueURL(base), tok, nil)
			}
			if r.Status != http.StatusCreated && r.Status != http.StatusOK {
				t.Errorf("join: %d %s", r.Status, r.Body)
				return
			}
			v := r.view(t)
			mu.Lock()
			defer mu.Unlock()
			if places[c] == nil {
				places[c] = map[int64]bool{}
			}
			places[c][v.Place] = true
			if r.Status == http.StatusCreated {
				created[c]++
			}
		})
	}
	wg.Wait()
	calls := roundTrips(t, rdb, scriptsOnly) - before
	seen := map[int64]bool{}
	retried := 0
	for c, ps := range places {
		if len(ps) != 1 || created[c] > 1 || (created[c] == 0 && unavailable[c] == 0) {
			t.Fatalf("%s: places %v, created %d times, %d answers 503", c, ps, created[c], unavailable[c])
		}
		retried += unavailable[c]
		for p := range ps {
			if seen[p] || p <= postOpenBase {
				t.Fatalf("%s: place %d shared or not a FIFO place", c, p)
			}
			seen[p] = true
		}
	}
	if len(places) != customers {
		t.Fatalf("%d customers have places, want %d", len(places), customers)
	}
	// The snapshot refreshes too; joins alone were 1,600 calls uncoalesced.
	if calls >= customers*dup/2 {
		t.Fatalf("%d joins made %d script calls: not coalesced", customers*dup, calls)
	}
	t.Logf("%d joins (%d customers): %d script calls, %d answers 503 retried", customers*dup, customers, calls, retried)
}

// TestJoinManyFIFO: the joins of one batch get FIFO places in batch order,
// a repeat in the batch gets the same place, and an existing place is kept.
func TestJoinManyFIFO(t *testing.T) {
	_, rdb := testenv.RedisDB(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	first, err := st.join(ctx, "z", testSettings())
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.joinMany(ctx, []string{"a", "b", "a", "z", "c"}, testSettings())
	if err != nil {
		t.Fatal(err)
	}
	if ps[2].Score != ps[0].Score || ps[2].Created || !ps[0].Created || ps[3].Score != first.Score || ps[3].Created {
		t.Fatalf("repeats: %+v (z first at %d)", ps, first.Score)
	}
	scores := []int64{first.Score, ps[0].Score, ps[1].Score, ps[4].Score}
	if !slices.IsSorted(scores) || scores[0] == scores[1] || scores[1] == scores[2] || scores[2] == scores[3] {
		t.Fatalf("not FIFO in batch order: %v", scores)
	}
	// Places after opening are postOpenBase plus the arrival number,
	// exactly (above 2^52 a float format would lose the last digits), in
	// the reply and the queue alike, and a customer waiting after opening
	// has no record: the place is the record. z's repeat in the batch took
	// number 4 before ZADD NX found z waiting: numbers may skip, never
	// repeat or go back.
	for i, c := range []string{"z", "a", "b", "c"} {
		want := int64(postOpenBase + []int{1, 2, 3, 5}[i])
		if scores[i] != want || rdb.ZScore(ctx, st.k.queue, c).Val() != float64(want) || rdb.HExists(ctx, st.k.customers, c).Val() {
			t.Fatalf("%s: place %d, queue %v, record %v; want %d and none", c, scores[i], rdb.ZScore(ctx, st.k.queue, c).Val(), rdb.HGet(ctx, st.k.customers, c).Val(), want)
		}
	}
	// The batch took five numbers and gave back the one its repeat of a
	// left unused.
	if n, err := rdb.Get(ctx, st.k.arrival).Int64(); n != 5 || err != nil {
		t.Fatalf("arrival counter %d %v, want 5", n, err)
	}
	arrival := func(c string) int64 { n, _ := strconv.ParseInt(recordOf(t, st, c)[1], 10, 64); return n }
	arrivalB := ps[1].Score - postOpenBase
	// Leaving and joining again gives a new place at the back, same arrival.
	if ok, err := st.leave(ctx, "b", ps[1].Score); !ok || err != nil {
		t.Fatalf("leave: %v %v", ok, err)
	}
	again, err := st.joinMany(ctx, []string{"b", "d"}, testSettings())
	if err != nil {
		t.Fatal(err)
	}
	if !again[0].Created || arrival("b") != arrivalB || again[0].Score <= ps[4].Score || again[1].Score <= again[0].Score {
		t.Fatalf("re-join: %+v after %+v, arrival %d then %d", again, ps, arrivalB, arrival("b"))
	}
}

// recordOf splits the customer's record: state, arrivalSeq, score, sessionId.
func recordOf(t *testing.T, st *store, customer string) []string {
	t.Helper()
	rec, err := st.rdb.HGet(context.Background(), st.k.customers, customer).Result()
	if err != nil {
		t.Fatalf("record of %s: %v", customer, err)
	}
	f := strings.Split(rec, "|")
	if len(f) != 4 {
		t.Fatalf("record of %s: %q", customer, rec)
	}
	return f
}

// TestPlaceWithoutRecord: a customer who joined after opening waits with
// no record in the customers hash, and every script that reads records
// finds the place in the queue instead: repeat joins on both paths (also
// once the opening has been moved later), claim, leave and the join after
// leaving, which gives a new place and keeps the arrival number.
func TestPlaceWithoutRecord(t *testing.T) { onJoinPaths(t, testPlaceWithoutRecord) }

func testPlaceWithoutRecord(t *testing.T, join joinFunc) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	set := testSettings()
	join(t, st, set, "w", 1)
	const c, score = "w00000", postOpenBase + 1
	if rdb.HExists(ctx, st.k.customers, c).Val() || rdb.ZScore(ctx, st.k.queue, c).Val() != score {
		t.Fatalf("after the join: record %q, place %v; want none and %d", rdb.HGet(ctx, st.k.customers, c).Val(), rdb.ZScore(ctx, st.k.queue, c).Val(), int64(score))
	}
	later := set
	later.SalesOpenAt = time.Now().Add(time.Hour)
	for _, s := range []Settings{set, later} {
		one, err := st.join(ctx, c, s)
		if err != nil {
			t.Fatal(err)
		}
		many, err := st.joinMany(ctx, []string{"x", c, c}, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []place{one, many[1], many[2]} {
			if p.Created || p.State != "w" || p.Score != score {
				t.Fatalf("repeat join (opening %v): %+v, want the place %d kept", s.SalesOpenAt, p, int64(score))
			}
		}
	}
	if rdb.HExists(ctx, st.k.customers, c).Val() || rdb.ZScore(ctx, st.k.queue, c).Val() != score {
		t.Fatalf("after the repeats: record %q, place %v", rdb.HGet(ctx, st.k.customers, c).Val(), rdb.ZScore(ctx, st.k.queue, c).Val())
	}
	for _, tc := range []struct {
		score int64
		want  string
	}{{score + 1, "none"}, {score, "waiting"}} {
		if r, err := st.claim(ctx, c, tc.score, set.TokenTTL); err != nil || r.Status != tc.want {
			t.Fatalf("claim at %d: %+v %v, want %s", tc.score, r, err, tc.want)
		}
	}
	if ok, err := st.leave(ctx, c, score+1); ok || err != nil {
		t.Fatalf("leave with another place: %v %v", ok, err)
	}
	if ok, err := st.leave(ctx, c, score); !ok || err != nil {
		t.Fatalf("leave: %v %v", ok, err)
	}
	if rec := strings.Join(recordOf(t, st, c), "|"); rec != fmt.Sprintf("l|1|%d|", int64(score)) || rdb.ZScore(ctx, st.k.queue, c).Err() == nil {
		t.Fatalf("after leaving: record %q, in the queue %v", rec, rdb.ZScore(ctx, st.k.queue, c).Err() == nil)
	}
	again, err := st.joinMany(ctx, []string{c}, set)
	if err != nil || !again[0].Created || again[0].Score <= score {
		t.Fatalf("join after leaving: %+v %v, want a new place after %d", again, err, int64(score))
	}
	if rec := strings.Join(recordOf(t, st, c), "|"); rec != fmt.Sprintf("w|1|%d|", again[0].Score) {
		t.Fatalf("record after joining again: %q", rec)
	}
}

// TestJoinManyAsksForKeys: a batch sent without the pre-queue's random
// keys while Redis's clock says the sale has not opened is refused with
// NOKEYS before anything is written (joinMany then sends it again with
// them), and a shuffled pre-queue that gets them gives each its key.
func TestJoinManyAsksForKeys(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	openMs := time.Now().Add(time.Hour).UnixMilli()
	_, err := st.runJoinMany(ctx, []string{"a", "b"}, openMs, "shuffle", false)
	if err == nil || !strings.HasPrefix(err.Error(), "NOKEYS") {
		t.Fatalf("without keys before opening: %v, want NOKEYS", err)
	}
	if n := rdb.Exists(ctx, st.k.gen, st.k.arrival, st.k.queue, st.k.customers).Val(); n != 0 {
		t.Fatalf("the refused call wrote %d keys", n)
	}
	res, err := st.runJoinMany(ctx, []string{"a", "b"}, openMs, "shuffle", true)
	if err != nil || len(res) != 7 {
		t.Fatalf("with keys: %v %v", res, err)
	}
	for _, c := range []string{"a", "b"} {
		if s := rdb.ZScore(ctx, st.k.queue, c).Val(); s >= postOpenBase || recordOf(t, st, c)[0] != "w" {
			t.Fatalf("%s: place %v, record %v; want a pre-queue place with a record", c, s, recordOf(t, st, c))
		}
	}
	// After opening the keys are not needed.
	if _, err := st.runJoinMany(ctx, []string{"c"}, 0, "shuffle", false); err != nil {
		t.Fatal(err)
	}
}

// TestBenchmarkCommands: the scripts and arguments the bench hands to
// redis-benchmark, run as given with the customer placeholder replaced,
// give places after opening: one call per join and a coalesced call whose
// customers each get their own place, in order, after the first's.
func TestBenchmarkCommands(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	eval := func(src string, keys, args []string, customers ...string) []any {
		t.Helper()
		k := 0
		argv := make([]any, len(args))
		for i, a := range args {
			argv[i] = a
			if a == "c:__rand_int__" {
				argv[i] = customers[k]
				k++
			}
		}
		if k != len(customers) {
			t.Fatalf("%d placeholders for %d customers", k, len(customers))
		}
		res, err := rdb.Eval(ctx, src, keys, argv...).Slice()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	src, keys, args := JoinCommand(testEvent, "c:__rand_int__")
	one := eval(src, keys, args, "c:1")
	if toInt(one[0]) != 1 || toString(one[1]) != "w" || toInt(one[3]) != postOpenBase+1 {
		t.Fatalf("one join: %v, want created and waiting at %d", one, int64(postOpenBase+1))
	}
	const n = 5
	src, keys, args = JoinManyCommand(testEvent, "c:__rand_int__", n)
	many := eval(src, keys, args, "c:2", "c:3", "c:4", "c:5", "c:6")
	if len(many) != 3*n+1 {
		t.Fatalf("coalesced: %d values, want %d", len(many), 3*n+1)
	}
	for i := range n {
		r := many[3*i:]
		if want := int64(postOpenBase + 2 + i); toInt(r[0]) != 1 || toString(r[1]) != "w" || toInt(r[2]) != want {
			t.Fatalf("coalesced join %d: %v, want created and waiting at %d", i, r[:3], want)
		}
	}
	if got := rdb.ZCard(ctx, keysFor(testEvent).queue).Val(); got != n+1 {
		t.Fatalf("queue holds %d places, want %d", got, n+1)
	}
}
