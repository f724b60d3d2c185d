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
	// Places after opening are postOpenBase plus the FIFO number, exactly
	// (above 2^52 a float format would lose the last digits), in the reply,
	// the queue and the records alike.
	for i, c := range []string{"z", "a", "b", "c"} {
		want := int64(postOpenBase + i + 1)
		if scores[i] != want || rdb.ZScore(ctx, st.k.queue, c).Val() != float64(want) || recordOf(t, st, c)[2] != strconv.FormatInt(want, 10) {
			t.Fatalf("%s: place %d, queue %v, record %q; want %d", c, scores[i], rdb.ZScore(ctx, st.k.queue, c).Val(), recordOf(t, st, c), want)
		}
	}
	// Arrival numbers follow the batch order too.
	arrival := func(c string) int64 { n, _ := strconv.ParseInt(recordOf(t, st, c)[1], 10, 64); return n }
	if !(arrival("z") < arrival("a") && arrival("a") < arrival("b") && arrival("b") < arrival("c")) {
		t.Fatalf("arrivals not in batch order: z %d, a %d, b %d, c %d", arrival("z"), arrival("a"), arrival("b"), arrival("c"))
	}
	arrivalB := arrival("b")
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

// TestGatherLingersUntilEnough: a batch lingers only while it holds fewer
// joins than enough (the last call's size), and goes as soon as it has
// them. The linger is two seconds, so the bounds hold on a loaded machine.
func TestGatherLingersUntilEnough(t *testing.T) {
	const linger = 2 * time.Second
	b := newJoinBatcher(nil, nil, 256, linger)
	queued := func(n int) {
		for range n {
			b.reqs <- &joinReq{done: make(chan joinRes, 1)}
		}
	}
	gather := func(enough int) (int, time.Duration) {
		batch := []*joinReq{}
		start := time.Now()
		b.gather(&batch, enough)
		return len(batch), time.Since(start)
	}

	queued(5)
	if n, took := gather(5); n != 5 || took >= linger/2 {
		t.Fatalf("enough waiting: gathered %d in %v, want 5 at once", n, took)
	}
	queued(3)
	if n, took := gather(0); n != 3 || took >= linger/2 {
		t.Fatalf("no linger asked: gathered %d in %v, want the 3 waiting at once", n, took)
	}
	queued(3)
	if n, took := gather(5); n != 3 || took < linger {
		t.Fatalf("too few and none arriving: gathered %d in %v, want 3 after the whole linger", n, took)
	}
	queued(3)
	go func() { time.Sleep(50 * time.Millisecond); queued(2) }()
	if n, took := gather(5); n != 5 || took >= linger/2 {
		t.Fatalf("the missing two arrive: gathered %d in %v, want 5 as soon as they came", n, took)
	}
	queued(300)
	if n, _ := gather(1000); n != 256 {
		t.Fatalf("gathered %d, want at most the batch's maximum 256", n)
	}
}
