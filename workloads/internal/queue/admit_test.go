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
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

func joinMany(t testing.TB, st *store, set Settings, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := st.join(context.Background(), fmt.Sprintf("%s%05d", prefix, i), set); err != nil {
			t.Fatal(err)
		}
	}
}

// joinCoalesced joins the same customers as joinMany through the coalesced
// script, seven to a call.
func joinCoalesced(t testing.TB, st *store, set Settings, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i += 7 {
		var batch []string
		for k := i; k < min(i+7, n); k++ {
			batch = append(batch, fmt.Sprintf("%s%05d", prefix, k))
		}
		ps, err := st.joinMany(context.Background(), batch, set)
		if err != nil {
			t.Fatal(err)
		}
		for k, p := range ps {
			if !p.Created || p.State != "w" {
				t.Fatalf("%s: %+v, want a new waiting place", batch[k], p)
			}
		}
	}
}

// joinFunc joins n customers named prefix00000, prefix00001, ...
type joinFunc func(t testing.TB, st *store, set Settings, prefix string, n int)

// joinPaths are the two ways a pod joins customers: one script call per
// join (join batch 1) and coalesced. Fairness must not depend on which.
var joinPaths = []struct {
	name string
	join joinFunc
}{{"one call per join", joinMany}, {"coalesced", joinCoalesced}}

// onJoinPaths runs test once per join path, as subtests.
func onJoinPaths(t *testing.T, test func(*testing.T, joinFunc)) {
	for _, path := range joinPaths {
		t.Run(path.name, func(t *testing.T) { test(t, path.join) })
	}
}

// parseLog splits the admit log's entries: the first pre must be of the
// pre-queue's cohort ("p"), the others of those placed after opening ("f").
func parseLog(t testing.TB, entries []string, pre int) (customers []string, arrival, qseq []int64) {
	t.Helper()
	for i, e := range entries {
		cohort := "f"
		if i < pre {
			cohort = "p"
		}
		p := strings.Split(e, "|")
		if len(p) != 4 || p[3] != cohort {
			t.Fatalf("admit log entry %d %q, want customer|arrivalSeq|queueSeq|%s", i, e, cohort)
		}
		a, _ := strconv.ParseInt(p[1], 10, 64)
		q, _ := strconv.ParseInt(p[2], 10, 64)
		customers, arrival, qseq = append(customers, p[0]), append(arrival, a), append(qseq, q)
	}
	return
}

func TestFIFOAfterOpening(t *testing.T) { onJoinPaths(t, testFIFOAfterOpening) }

func testFIFOAfterOpening(t *testing.T, join joinFunc) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings() // no SalesOpenAt: open
	join(t, st, set, "c", 300)
	epoch, _ := st.takeEpoch(context.Background())
	for range 10 {
		if _, err := st.tick(context.Background(), epoch, set, 40); err != nil {
			t.Fatal(err)
		}
	}
	customers, arrival, qseq := parseLog(t, admitLog(t, rdb), 0)
	if len(customers) != 100 { // MaxActive
		t.Fatalf("admitted %d, want 100 (MaxActive)", len(customers))
	}
	for i := range customers {
		if customers[i] != fmt.Sprintf("c%05d", i) || arrival[i] != int64(i+1) || qseq[i] != int64(i+1) {
			t.Fatalf("admission %d: %s arrival %d queueSeq %d, want c%05d %d %d", i, customers[i], arrival[i], qseq[i], i, i+1, i+1)
		}
	}
}

func TestPreQueueFIFOMode(t *testing.T) { onJoinPaths(t, testPreQueueFIFOMode) }

func testPreQueueFIFOMode(t *testing.T, join joinFunc) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.PreQueue = "fifo"
	set.SalesOpenAt = time.Now().Add(time.Hour)
	join(t, st, set, "p", 50)
	set.SalesOpenAt = time.Now().Add(-time.Second)
	join(t, st, set, "q", 50)
	epoch, _ := st.takeEpoch(context.Background())
	if _, err := st.tick(context.Background(), epoch, set, 100); err != nil {
		t.Fatal(err)
	}
	customers, _, qseq := parseLog(t, admitLog(t, rdb), 50)
	for i := range 100 {
		want := fmt.Sprintf("p%05d", i)
		if i >= 50 {
			want = fmt.Sprintf("q%05d", i-50)
		}
		if customers[i] != want {
			t.Fatalf("admission %d is %s, want %s", i, customers[i], want)
		}
		// The pre-queue's ranks 1..50, then the places after opening:
		// the arrival numbers 51..100.
		if wantSeq := int64(i + 1); qseq[i] != wantSeq {
			t.Fatalf("admission %d queueSeq %d, want %d", i, qseq[i], wantSeq)
		}
	}
}

// TestPreQueueShuffled checks that the pre-queue's admission order is a
// uniform shuffle of arrival order, and that later joiners queue FIFO behind it.
func TestPreQueueShuffled(t *testing.T) { onJoinPaths(t, testPreQueueShuffled) }

func testPreQueueShuffled(t *testing.T, join joinFunc) {
	const n = 2000
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive = 10 * n
	set.SalesOpenAt = time.Now().Add(time.Hour)
	join(t, st, set, "p", n)
	set.SalesOpenAt = time.Now().Add(-time.Second)
	join(t, st, set, "z", 20)
	epoch, _ := st.takeEpoch(context.Background())
	if _, err := st.tick(context.Background(), epoch, set, n+20); err != nil {
		t.Fatal(err)
	}
	customers, arrival, qseq := parseLog(t, admitLog(t, rdb), n)
	if len(customers) != n+20 {
		t.Fatalf("admitted %d, want %d", len(customers), n+20)
	}
	for i := range 20 {
		if c := customers[n+i]; c != fmt.Sprintf("z%05d", i) {
			t.Fatalf("post-opening admission %d is %s: not FIFO behind the pre-queue", i, c)
		}
	}
	// Spearman correlation of arrival and admission rank: ~0 for a shuffle
	// (sd 1/sqrt(n-1) ≈ 0.022); FIFO would be 1.
	var d2 float64
	for i := range n {
		if qseq[i] != int64(i+1) {
			t.Fatalf("pre-queue admission %d has queueSeq %d, want its shuffled rank %d", i, qseq[i], i+1)
		}
		d := float64(arrival[i] - int64(i+1))
		d2 += d * d
	}
	rho := 1 - 6*d2/(float64(n)*(float64(n)*float64(n)-1))
	if math.Abs(rho) > 0.1 {
		t.Fatalf("Spearman correlation of arrival and admission order %.3f: not shuffled", rho)
	}
	// Uniformity: arrival decile x admission decile is flat (chi-squared,
	// 81 degrees of freedom; 135 is p ≈ 1e-4).
	var table [10][10]float64
	for i := range n {
		table[(arrival[i]-1)*10/n][i*10/n]++
	}
	var chi2 float64
	exp := float64(n) / 100
	for _, row := range table {
		for _, o := range row {
			chi2 += (o - exp) * (o - exp) / exp
		}
	}
	if chi2 > 135 {
		t.Fatalf("chi-squared %.1f over 81 dof: admission ranks are not uniform over arrival deciles", chi2)
	}
	t.Logf("pre-queue of %d: Spearman %.4f, chi-squared %.1f (81 dof)", n, rho, chi2)
}

// TestTwoAdmittersNeverExceedMaxActive races two admitters (same epoch,
// as if fencing failed) with releases and expiries for thousands of ticks.
func TestTwoAdmittersNeverExceedMaxActive(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive = 25
	set.ClaimTimeout = 30 * time.Millisecond
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for i := range 20000 {
		c := fmt.Sprintf("c%05d", i)
		pipe.ZAdd(ctx, st.k.queue, redisZ(float64(postOpenBase+i+1), c))
		pipe.HSet(ctx, st.k.customers, c, fmt.Sprintf("w|%d|%d|", i+1, postOpenBase+i+1))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	epoch, _ := st.takeEpoch(ctx)
	const ticks = 2000
	var admitted, maxSeen atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range ticks {
				r, err := st.tick(ctx, epoch, set, 7)
				if err != nil {
					t.Error(err)
					return
				}
				admitted.Add(r.Admitted)
				for {
					m := maxSeen.Load()
					if r.Active <= m || maxSeen.CompareAndSwap(m, r.Active) {
						break
					}
				}
			}
		})
	}
	stop := make(chan struct{})
	var checks atomic.Int64
	var cwg sync.WaitGroup
	cwg.Go(func() { // releases sessions, as the booking service does
		for {
			select {
			case <-stop:
				return
			default:
			}
			ids, _ := rdb.ZRandMember(ctx, st.k.active, 3).Result()
			for _, id := range ids {
				_ = zone.ReleaseSession(ctx, rdb, testEvent, id)
			}
		}
	})
	cwg.Go(func() { // counts live sessions independently
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := liveCount(t, rdb); n > int64(set.MaxActive) {
				t.Errorf("%d live sessions, MaxActive %d", n, set.MaxActive)
			}
			checks.Add(1)
		}
	})
	wg.Wait()
	close(stop)
	cwg.Wait()
	if m := maxSeen.Load(); m > int64(set.MaxActive) || m == 0 {
		t.Fatalf("active peaked at %d, MaxActive %d", m, set.MaxActive)
	}
	n := admitted.Load()
	if log := int64(len(admitLog(t, rdb))); log != n || n < int64(set.MaxActive) {
		t.Fatalf("admitted %d, admit log %d", n, log)
	}
	t.Logf("%d ticks x 2 admitters: %d admitted, %d independent checks, active peak %d", ticks, n, checks.Load(), maxSeen.Load())
}

func TestDeposedAdmitterAdmitsNobody(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	joinMany(t, st, set, "c", 10)
	ctx := context.Background()
	old, _ := st.takeEpoch(ctx)
	cur, _ := st.takeEpoch(ctx) // a new leader took over
	r, err := st.tick(ctx, old, set, 5)
	if err != nil || !r.Fenced || r.Admitted != 0 {
		t.Fatalf("deposed tick: %+v %v", r, err)
	}
	if n := len(admitLog(t, rdb)); n != 0 {
		t.Fatalf("deposed tick admitted %d", n)
	}
	if r, err := st.tick(ctx, cur, set, 5); err != nil || r.Admitted != 5 {
		t.Fatalf("current leader's tick: %+v %v", r, err)
	}
}

func TestClaimWindowFreesSlots(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive, set.ClaimTimeout = 2, 300*time.Millisecond
	joinMany(t, st, set, "c", 4)
	ctx := context.Background()
	epoch, _ := st.takeEpoch(ctx)
	if r, _ := st.tick(ctx, epoch, set, 10); r.Admitted != 2 {
		t.Fatalf("first tick admitted %d, want 2", r.Admitted)
	}
	if r, _ := st.tick(ctx, epoch, set, 10); r.Admitted != 0 {
		t.Fatalf("full zone admitted %d", r.Admitted)
	}
	// c00000 claims its token; c00001 never does.
	c, err := st.claim(ctx, "c00000", postOpenBase+1, set.TokenTTL)
	if err != nil || c.Status != "admitted" || c.SessionID == "" {
		t.Fatalf("claim: %+v %v", c, err)
	}
	time.Sleep(400 * time.Millisecond)
	if r, _ := st.tick(ctx, epoch, set, 10); r.Admitted != 1 || r.Active != 2 {
		t.Fatalf("after the claim window: %+v, want 1 admitted (the unclaimed slot), 2 active", r)
	}
	if c, _ := st.claim(ctx, "c00001", postOpenBase+2, set.TokenTTL); c.Status != "expired" {
		t.Fatalf("unclaimed customer after the window: %s, want expired", c.Status)
	}
	if ok, _ := zone.SessionActive(ctx, rdb, testEvent, c.SessionID); !ok {
		t.Fatal("claimed session not active for the booking service")
	}
	// Leaving frees the slot at once.
	if ok, err := st.leave(ctx, "c00000", postOpenBase+1); !ok || err != nil {
		t.Fatalf("leave: %v %v", ok, err)
	}
	if r, _ := st.tick(ctx, epoch, set, 10); r.Admitted != 1 {
		t.Fatalf("after leave admitted %d, want 1", r.Admitted)
	}
}

func TestPauseAndSoldOut(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	joinMany(t, st, set, "c", 10)
	ctx := context.Background()
	epoch, _ := st.takeEpoch(ctx)
	set.Paused = true
	if r, _ := st.tick(ctx, epoch, set, 5); r.Admitted != 0 || r.Reason != "paused" {
		t.Fatalf("paused tick: %+v", r)
	}
	set.Paused = false
	if err := zone.PublishInventory(ctx, rdb, testEvent, zone.Inventory{Sold: 10}); err != nil {
		t.Fatal(err)
	}
	if r, _ := st.tick(ctx, epoch, set, 5); r.Admitted != 0 || r.Reason != "sold_out" {
		t.Fatalf("sold-out tick: %+v", r)
	}
	_ = zone.PublishInventory(ctx, rdb, testEvent, zone.Inventory{Available: 30, Sold: 7})
	if r, _ := st.tick(ctx, epoch, set, 5); r.Admitted != 5 {
		t.Fatalf("tick with inventory back: %+v", r)
	}
}

// publishInventory publishes inv as booking does after each sweep.
func publishInventory(t testing.TB, rdb *redis.Client, inv zone.Inventory) {
	t.Helper()
	if err := zone.PublishInventory(context.Background(), rdb, testEvent, inv); err != nil {
		t.Fatal(err)
	}
}

// TestAdmissionFollowsFreeSeats: the admitter lets in no more people than
// the free seats can serve, counting the active sessions without a hold as
// people still choosing, and at least one a tick while a seat is free.
func TestAdmissionFollowsFreeSeats(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive = 100
	joinMany(t, st, set, "c", 30)
	ctx := context.Background()
	epoch, _ := st.takeEpoch(ctx)
	tick := func(wantAdmitted, wantActive int64, wantReason string) {
		t.Helper()
		r, err := st.tick(ctx, epoch, set, 10)
		if err != nil || r.Admitted != wantAdmitted || r.Active != wantActive || r.Reason != wantReason {
			t.Fatalf("tick: %+v %v, want %d admitted, %d active, reason %q", r, err, wantAdmitted, wantActive, wantReason)
		}
	}
	// Every unsold seat is held: nobody is let in to find none.
	publishInventory(t, rdb, zone.Inventory{Held: 5, Sold: 5, Holds: 2})
	tick(0, 0, "all_held")
	// Three seats come back: three people, not the batch of ten.
	publishInventory(t, rdb, zone.Inventory{Available: 3, Held: 5, Sold: 2, Holds: 2})
	tick(3, 3, "")
	// Three active, two of them holding (as booking counts): one chooses,
	// so two more seats are there for two more people.
	tick(2, 5, "")
	// Three choose for three free seats: one a tick still goes in, so
	// sessions of people who left silently cannot stall the sale.
	tick(1, 6, "")
	// An inventory without the holds count (a booking before it) does
	// not limit admission.
	if err := rdb.HDel(ctx, zone.InventoryKey(testEvent), "holds").Err(); err != nil {
		t.Fatal(err)
	}
	tick(10, 16, "")
}

// TestAdmissionCountsRecentChoosers: a session that picked up its token
// longer ago than the selection window and holds nothing no longer counts
// as choosing, so people who walked away silently do not hold the last
// seats to one admission a tick; holds still count whoever made them.
func TestAdmissionCountsRecentChoosers(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.ClaimTimeout, set.SelectionWindow = 5*time.Second, 300*time.Millisecond
	joinMany(t, st, set, "c", 30)
	ctx := context.Background()
	epoch, _ := st.takeEpoch(ctx)
	tick := func(wantAdmitted, wantActive, wantChoosing int64) {
		t.Helper()
		r, err := st.tick(ctx, epoch, set, 10)
		if err != nil || r.Admitted != wantAdmitted || r.Active != wantActive || r.Reason != "" || r.Choosing != wantChoosing {
			t.Fatalf("tick: %+v %v, want %d admitted, %d active, %d choosing", r, err, wantAdmitted, wantActive, wantChoosing)
		}
	}
	claim := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			c, err := st.claim(ctx, fmt.Sprintf("c%05d", i), postOpenBase+int64(i)+1, set.TokenTTL)
			if err != nil || c.Status != "admitted" {
				t.Fatalf("claim c%05d: %+v %v", i, c, err)
			}
		}
	}
	publishInventory(t, rdb, zone.Inventory{Available: 3})
	tick(3, 3, 0)
	claim(0, 3)
	// Three chose a moment ago for the three free seats: one a tick.
	tick(1, 4, 3)
	// Past the selection window, the three who claimed and hold nothing
	// have gone; the one still in its claim window chooses: two more.
	time.Sleep(400 * time.Millisecond)
	tick(2, 6, 1)
	// The two admitted last claim, and five seats are held by them and the
	// first three (booking cannot say whose): of the six active, one at
	// most still chooses (six less five holds), though three are recent.
	claim(4, 6)
	publishInventory(t, rdb, zone.Inventory{Available: 4, Held: 5, Holds: 5})
	tick(3, 9, 1)
	// Four of the nine are in their claim window and one holds: four
	// choose for six free seats, so two go in. With a window as long as
	// the token's life every session counts, as before the window: ten
	// choose, and one a tick still goes in.
	time.Sleep(400 * time.Millisecond)
	publishInventory(t, rdb, zone.Inventory{Available: 6, Held: 1, Holds: 1})
	tick(2, 11, 4)
	set.SelectionWindow = set.TokenTTL
	tick(1, 12, 10)
	// The admitter exports what its last admitting tick counted.
	set.RatePerSecond = 1000 // a batch of 10 a tick of 10 ms
	a := &admitter{st: st, live: newLiveSettings(set), m: newMetrics()}
	if r, err := a.tickOnce(ctx, epoch, set); err != nil || r.Admitted != 1 || r.Choosing != 11 {
		t.Fatalf("admitter tick: %+v %v, want 1 admitted, 11 choosing", r, err)
	}
	mfs, err := a.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == "ticketfair_queue_choosing_sessions" })
	if i < 0 {
		t.Fatal("ticketfair_queue_choosing_sessions is not exported")
	}
	if v := scrape.Sum(mfs[i], ""); v != 11 {
		t.Fatalf("ticketfair_queue_choosing_sessions = %v, want 11", v)
	}
}

// TestLiveSettingsReachAdmitter changes MaxActive and pause while the
// admitter loop runs.
func TestLiveSettingsReachAdmitter(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive = 3
	joinMany(t, st, set, "c", 50)
	live := newLiveSettings(set)
	a := &admitter{st: st, live: live, m: newMetrics()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.run(ctx, 0); close(done) }()
	defer func() { cancel(); <-done }()
	testenv.WaitFor(t, 5*time.Second, "3 active", func() bool { return liveCount(t, rdb) == 3 })
	set.MaxActive = 8
	live.Store(set)
	testenv.WaitFor(t, 5*time.Second, "8 active after raising MaxActive", func() bool { return liveCount(t, rdb) == 8 })
	set.Paused, set.MaxActive = true, 20
	live.Store(set)
	time.Sleep(100 * time.Millisecond)
	if n := liveCount(t, rdb); n != 8 {
		t.Fatalf("paused admitter admitted: %d active", n)
	}
}

// TestFencingSurvivesLostEpoch: a Redis failover loses the latest write of
// the epoch key. With a counter in Redis (INCR) the next admitter is handed
// the number the deposed one still holds, and both are admitted side by
// side; with the Lease's fencing number the newer admitter's next tick
// fences the older off again.
func TestFencingSurvivesLostEpoch(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive = 1000
	joinMany(t, st, set, "c", 100)
	ctx := context.Background()
	lose := func(before string) { // the new master never saw the writes after "before"
		t.Helper()
		if err := rdb.Set(ctx, st.k.epoch, before, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	tick := func(epoch int64) tickResult {
		t.Helper()
		r, err := st.tick(ctx, epoch, set, 1)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	// The counter: a takes 1, the failover loses it, b takes 1 as well.
	a, _ := st.takeEpoch(ctx)
	lose("0")
	b, _ := st.takeEpoch(ctx)
	if a != b || tick(a).Fenced || tick(b).Fenced || tick(a).Fenced {
		t.Fatalf("INCR epochs a=%d b=%d: expected the collision this test guards against", a, b)
	}

	// The Lease: a acquired it at its 3rd transition, b at its 4th.
	created := metav1.NewTime(time.Unix(1_800_000_000, 0))
	lease := func(transitions int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created},
			Spec: coordinationv1.LeaseSpec{LeaseTransitions: &transitions}}
	}
	fa, fb := leaseFencing(lease(3)), leaseFencing(lease(4))
	if r := tick(fa); r.Fenced {
		t.Fatal("a's first tick was fenced")
	}
	if r := tick(fb); r.Fenced {
		t.Fatal("b's first tick was fenced")
	}
	lose(strconv.FormatInt(fa, 10)) // b's write is lost: the key says a again
	if r := tick(fb); r.Fenced {
		t.Fatal("b was fenced after the failover")
	}
	for range 3 {
		if r := tick(fa); !r.Fenced || r.Admitted != 0 {
			t.Fatalf("deposed a ticked after b's number came back: %+v", r)
		}
		if r := tick(fb); r.Fenced {
			t.Fatal("b fenced")
		}
	}
	// A Lease deleted and created again starts its transitions at 0, and
	// still outnumbers every term of the old one.
	recreated := lease(0)
	recreated.CreationTimestamp = metav1.NewTime(created.Add(time.Second))
	if f := leaseFencing(recreated); f <= leaseFencing(lease(100_000)) {
		t.Fatalf("recreated Lease's number %d is not above the old one's", f)
	}
	if got, _ := rdb.Get(ctx, st.k.epoch).Int64(); got != fb {
		t.Fatalf("epoch key %d, want b's %d", got, fb)
	}
}

// Redis restarted without its data takes the fencing epoch with it: the
// admitter was deposed by nobody, so it takes a new epoch at once and goes
// on admitting, instead of stopping (and, without election, idling 5 s).
func TestAdmitterSurvivesLostEpoch(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	joinMany(t, st, set, "c", 5)
	a := &admitter{st: st, live: newLiveSettings(set), m: newMetrics()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.run(ctx, 0); close(done) }()
	defer func() { cancel(); <-done }()
	testenv.WaitFor(t, 5*time.Second, "5 admitted", func() bool { return liveCount(t, rdb) == 5 })
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	joinMany(t, st, set, "d", 5)
	testenv.WaitFor(t, 2*time.Second, "the new joins admitted", func() bool { return liveCount(t, rdb) == 5 })
	select {
	case <-done:
		t.Fatal("the admitter stopped")
	default:
	}
}

// TestAdmissionSpreadOverSteps: with an admission step, a tick's
// admissions arrive spread over it, never ahead of the rate (at t after
// the start, at most rate·t plus one step's share); without one they
// arrive all at once, at the tick.
func TestAdmissionSpreadOverSteps(t *testing.T) {
	const rate = 100
	run := func(step time.Duration) (firstSeen int64, ahead []string) {
		t.Helper()
		rdb := testenv.Redis(t)
		st := newStore(rdb, testEvent)
		set := testSettings()
		set.MaxActive, set.RatePerSecond, set.TickInterval = 10_000, rate, time.Second
		joinMany(t, st, set, "c", 500)
		a := &admitter{st: st, live: newLiveSettings(set), m: newMetrics(), step: step}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		start := time.Now()
		go func() { _ = a.run(ctx, 0); close(done) }()
		defer func() { cancel(); <-done }()
		perStep := float64(rate) * a.stepOf(set).Seconds()
		for time.Since(start) < 900*time.Millisecond {
			n := liveCount(t, rdb)
			// Read after the count, so the bound is never too tight.
			if limit := float64(rate)*time.Since(start).Seconds() + perStep + 1; float64(n) > limit {
				ahead = append(ahead, fmt.Sprintf("%d admitted %s after the start (at most %.0f)", n, time.Since(start).Round(time.Millisecond), limit))
			}
			if firstSeen == 0 && n > 0 {
				firstSeen = n
			}
			time.Sleep(5 * time.Millisecond)
		}
		return firstSeen, ahead
	}
	if _, ahead := run(50 * time.Millisecond); len(ahead) > 0 {
		t.Errorf("with 50ms steps, ahead of the rate: %v", ahead)
	}
	if first, _ := run(0); first != rate {
		t.Errorf("without steps: first seen %d admitted, want the whole tick's %d at once", first, rate)
	}
}
