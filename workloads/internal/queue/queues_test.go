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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// phasedSettings is testSettings with phases: a members' presale opening
// at presale, then the general sale at general with members 3 : general 1,
// and a code queue in the presale.
func phasedSettings(t testing.TB, presale, general time.Time) Settings {
	t.Helper()
	s := testSettings()
	s.Phases = []config.Phase{
		{Name: "presale", OpensAt: presale, Queues: []config.PhaseQueue{
			{Name: "members", Weight: 1, Tiers: []string{"member"}},
			{Name: "invited", Weight: 1, AccessCode: true},
		}},
		{Name: "sale", OpensAt: general, Queues: []config.PhaseQueue{
			{Name: "members", Weight: 3, Tiers: []string{"member"}},
			{Name: general0, Weight: 1},
		}},
	}
	s, err := s.validate()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const general0 = DefaultQueue

// admitAll ticks until the queues are empty or max admissions were made,
// batch places a tick, and returns the admission log.
func tickN(t testing.TB, st *store, set Settings, batch int64, ticks int) {
	t.Helper()
	ctx := context.Background()
	epoch, err := st.takeEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set.MaxActive = 1 << 30
	for range ticks {
		if _, err := st.tick(ctx, epoch, set, batch); err != nil {
			t.Fatal(err)
		}
	}
}

type logEntry struct {
	customer string
	arrival  int64
	queueSeq int64
	cohort   string
	queue    string
}

func parseQueueLog(t testing.TB, entries []string) []logEntry {
	t.Helper()
	out := make([]logEntry, 0, len(entries))
	for _, e := range entries {
		f := strings.Split(e, "|")
		if len(f) != 4 && len(f) != 5 {
			t.Fatalf("log entry %q", e)
		}
		a, _ := strconv.ParseInt(f[1], 10, 64)
		q, _ := strconv.ParseInt(f[2], 10, 64)
		le := logEntry{customer: f[0], arrival: a, queueSeq: q, cohort: f[3], queue: DefaultQueue}
		if len(f) == 5 {
			le.queue = f[4]
		}
		out = append(out, le)
	}
	return out
}

// TestQueuesWeighted: with two queues waiting, members 3 : general 1, the
// admitter admits by weight (within 5% at every tick while both wait, and
// exactly over whole rounds), in exact FIFO within each queue, and then
// drains the rest; one customer holds one place across queues.
func TestQueuesWeighted(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	past := time.Now().Add(-time.Hour)
	set := phasedSettings(t, past.Add(-time.Minute), past)
	const n = 600
	var reqs []JoinRequest
	for i := range n {
		reqs = append(reqs, JoinRequest{Customer: fmt.Sprintf("m%04d", i), Queue: "members"},
			JoinRequest{Customer: fmt.Sprintf("g%04d", i), Queue: DefaultQueue})
	}
	for i := 0; i < len(reqs); i += 50 {
		ps, err := st.joinRequests(ctx, reqs[i:i+50], set)
		if err != nil {
			t.Fatal(err)
		}
		for k, p := range ps {
			if !p.Created || p.State != "w" || p.Queue != reqs[i+k].Queue || p.Score <= postOpenBase {
				t.Fatalf("%+v: %+v", reqs[i+k], p)
			}
		}
	}
	// One place per customer, whatever the queue asked for.
	again, err := st.joinRequests(ctx, []JoinRequest{{Customer: "m0000", Queue: DefaultQueue}, {Customer: "g0000", Queue: "members"}}, set)
	if err != nil || again[0].Created || again[0].Queue != "members" || again[1].Created || again[1].Queue != DefaultQueue {
		t.Fatalf("joining another queue: %+v %v, want the places held", again, err)
	}
	if got := rdb.ZCard(ctx, st.k.queueKey("members")).Val() + rdb.ZCard(ctx, st.k.queue).Val(); got != 2*n {
		t.Fatalf("%d places, want %d", got, 2*n)
	}
	// 40 a tick: while both wait, members get 30, general 10.
	epoch, _ := st.takeEpoch(ctx)
	set.MaxActive = 1 << 30
	total := map[string]int{}
	bothMembers, bothTotal := 0, 0
	for tick := 0; ; tick++ {
		r, err := st.tick(ctx, epoch, set, 40)
		if err != nil {
			t.Fatal(err)
		}
		if r.Admitted == 0 {
			break
		}
		log := parseQueueLog(t, admitLog(t, rdb))
		for _, e := range log[len(log)-int(r.Admitted):] {
			total[e.queue]++
		}
		if total["members"] < n && total[DefaultQueue] < n {
			bothMembers, bothTotal = total["members"], total["members"]+total[DefaultQueue]
			share := float64(total["members"]) / float64(total["members"]+total[DefaultQueue])
			if math.Abs(share-0.75) > 0.05 {
				t.Fatalf("tick %d: members' share %.3f, want 0.75±0.05 (%v)", tick, share, total)
			}
		}
	}
	t.Logf("members 3 : general 1, 40 places a tick: members' share %.3f of the first %d admissions (while both waited)", float64(bothMembers)/float64(bothTotal), bothTotal)
	if total["members"] != n || total[DefaultQueue] != n {
		t.Fatalf("admitted %v, want %d each", total, n)
	}
	// Exact FIFO within each queue: arrival numbers rise.
	last := map[string]int64{}
	seen := map[string]bool{}
	for _, e := range parseQueueLog(t, admitLog(t, rdb)) {
		if e.arrival <= last[e.queue] || seen[e.customer] || e.queue != map[byte]string{'m': "members", 'g': DefaultQueue}[e.customer[0]] {
			t.Fatalf("%+v after arrival %d (queue %s)", e, last[e.queue], e.queue)
		}
		last[e.queue], seen[e.customer] = e.arrival, true
	}
	if got := rdb.HGet(ctx, st.k.admittedQ, "members").Val(); got != strconv.Itoa(n) {
		t.Fatalf("members admitted counter %q", got)
	}
	if got := rdb.Get(ctx, st.k.admitted).Val(); got != strconv.Itoa(2*n) {
		t.Fatalf("admitted counter %q", got)
	}
}

// TestQueuesNoStarvation: a queue of weight 1 next to one of weight 50
// still gets a place in every round of 51, also one place a tick.
func TestQueuesNoStarvation(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	set := phasedSettings(t, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour))
	set.Phases[1].Queues[0].Weight = 50
	var reqs []JoinRequest
	for i := range 300 {
		reqs = append(reqs, JoinRequest{Customer: fmt.Sprintf("m%04d", i), Queue: "members"})
	}
	for i := range 20 {
		reqs = append(reqs, JoinRequest{Customer: fmt.Sprintf("g%04d", i)})
	}
	if _, err := st.joinRequests(ctx, reqs, set); err != nil {
		t.Fatal(err)
	}
	tickN(t, st, set, 1, 153)
	general := 0
	for _, e := range parseQueueLog(t, admitLog(t, rdb)) {
		if e.queue == DefaultQueue {
			general++
		}
	}
	if general != 3 {
		t.Fatalf("general admitted %d in 153 single admissions, want 3 (one per 51)", general)
	}
}

// TestQueuesPhaseOpening: a queue is not admitted before its phase opens,
// and its places taken before then are the shuffled pre-queue's.
func TestQueuesPhaseOpening(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	set := phasedSettings(t, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	var reqs []JoinRequest
	for i := range 50 {
		reqs = append(reqs, JoinRequest{Customer: fmt.Sprintf("m%04d", i), Queue: "members"},
			JoinRequest{Customer: fmt.Sprintf("g%04d", i)})
	}
	ps, err := st.joinRequests(ctx, reqs, set)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if pre := p.Score < postOpenBase; pre != (reqs[i].Queue == "") {
			t.Fatalf("%+v: score %d; want pre-queue places for the general queue only", reqs[i], p.Score)
		}
	}
	tickN(t, st, set, 20, 5)
	for _, e := range parseQueueLog(t, admitLog(t, rdb)) {
		if e.queue != "members" {
			t.Fatalf("%+v admitted before its phase opened", e)
		}
	}
	if n := len(admitLog(t, rdb)); n != 50 {
		t.Fatalf("%d admitted, want the 50 members", n)
	}
	if n := rdb.ZCard(ctx, st.k.queue).Val(); n != 50 {
		t.Fatalf("general queue holds %d, want 50", n)
	}
}

// TestCodeRace: 1,000 customers redeem one code at once, through the
// coalesced joins (many batches): exactly one gets a place; the winner
// joining again with it keeps their place; the others are refused
// code_used and hold no place.
func TestCodeRace(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := phasedSettings(t, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	live := newLiveSettings(set)
	b := newJoinBatcher(st, live, 64, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx)
	key := []byte("0123456789abcdef0123456789abcdef")
	c, err := accesscode.Check(key, testEvent, accesscode.Issue(key, testEvent, "presale", 1))
	if err != nil {
		t.Fatal(err)
	}
	hash := accesscode.Hash(c)
	const n = 1000
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []string
	used := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cust := fmt.Sprintf("c%04d", i)
			p, err := b.Do(context.Background(), JoinRequest{Customer: cust, Queue: "invited", CodeHash: hash})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case p.Refused == "code_used":
				used++
			case p.Created && p.Queue == "invited":
				winners = append(winners, cust)
			default:
				t.Errorf("%s: %+v", cust, p)
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 || used != n-1 {
		t.Fatalf("%d winners %v, %d refused code_used; want 1 and %d", len(winners), winners, used, n-1)
	}
	if got := rdb.ZCard(context.Background(), st.k.queueKey("invited")).Val(); got != 1 {
		t.Fatalf("the code queue holds %d places, want 1", got)
	}
	if owner := rdb.HGet(context.Background(), st.k.codes, hash).Val(); owner != winners[0] {
		t.Fatalf("code bound to %q, want %q", owner, winners[0])
	}
	p, err := b.Do(context.Background(), JoinRequest{Customer: winners[0], Queue: "invited", CodeHash: hash})
	if err != nil || p.Created || p.Refused != "" || p.Queue != "invited" {
		t.Fatalf("the winner again: %+v %v, want their place", p, err)
	}
}

// TestChallengeSpentOnce: a challenge id is spent by its first join; a
// second join with it, even by the same customer, is refused.
func TestChallengeSpentOnce(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	set := testSettings()
	exp := time.Now().Add(time.Minute)
	ps, err := st.joinRequests(ctx, []JoinRequest{
		{Customer: "a", ChallengeID: "ch1", ChallengeExpiry: exp},
		{Customer: "b", ChallengeID: "ch1", ChallengeExpiry: exp},
		{Customer: "a", ChallengeID: "ch2", ChallengeExpiry: exp},
	}, set)
	if err != nil {
		t.Fatal(err)
	}
	if !ps[0].Created || ps[1].Refused != "challenge_used" || ps[2].Created || ps[2].Refused != "" || ps[2].Score != ps[0].Score {
		t.Fatalf("%+v", ps)
	}
	if ttl := rdb.PTTL(ctx, st.k.challengePrefix()+"ch1").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("spent challenge kept %v", ttl)
	}
	if _, err := st.joinOne(ctx, JoinRequest{Customer: "c", ChallengeID: "ch2", ChallengeExpiry: exp}, set); err != nil {
		t.Fatal(err)
	}
}

// TestChoose: the queue of a join by phase, tier and code.
func TestChoose(t *testing.T) {
	now := time.Now()
	before := phasedSettings(t, now.Add(time.Hour), now.Add(2*time.Hour))
	presale := phasedSettings(t, now.Add(-time.Hour), now.Add(time.Hour))
	sale := phasedSettings(t, now.Add(-2*time.Hour), now.Add(-time.Hour))
	for _, tc := range []struct {
		name       string
		set        Settings
		tier, code string
		want       string // queue, or error code
	}{
		{"member before the presale: its pre-queue", before, "member", "", "members"},
		{"anyone before the presale", before, "", "", "phase_not_open"},
		{"code before the presale", before, "", "presale", "invited"},
		{"member in the presale", presale, "member", "", "members"},
		{"anyone in the presale: the sale's pre-queue", presale, "", "", DefaultQueue},
		{"code in the sale", sale, "", "presale", "invited"},
		{"anyone in the sale", sale, "gold", "", DefaultQueue},
		{"code of an unknown phase", sale, "", "nope", "code_invalid"},
		{"code of a phase without a code queue", sale, "", "sale", "not_eligible"},
		{"no phases", testSettings(), "member", "", DefaultQueue},
		{"no phases, a code", testSettings(), "", "presale", "code_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := tc.set.choose(now, tc.tier, tc.code)
			got := q
			if he, ok := err.(*httpapi.Error); ok {
				got = he.Code
			} else if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestQueuesValidate: phases out of order, without queues, with a weight
// below 1 or an odd name are refused, naming the field.
func TestQueuesValidate(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		mod  func(ps []config.Phase)
		want string
	}{
		{func(ps []config.Phase) { ps[1].OpensAt = ps[0].OpensAt }, "phases[1].opensAt"},
		{func(ps []config.Phase) { ps[0].Queues = nil }, "phases[0].queues"},
		{func(ps []config.Phase) { ps[1].Queues[1].Weight = 0 }, "phases[1].queues[1].weight"},
		{func(ps []config.Phase) { ps[0].Queues[0].Name = "Members!" }, "phases[0].queues[0].name"},
		{func(ps []config.Phase) { ps[1].Name = "presale" }, "phases[1].name"},
	} {
		s := phasedSettings(t, now, now.Add(time.Hour))
		s.Phases = append([]config.Phase(nil), s.Phases...)
		for i := range s.Phases {
			s.Phases[i].Queues = append([]config.PhaseQueue(nil), s.Phases[i].Queues...)
		}
		tc.mod(s.Phases)
		if _, err := s.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want an error naming %s", err, tc.want)
		}
	}
}

// TestJoinCommandCost measures the Redis commands of a join (the script
// call and the commands inside it, from INFO commandstats) one by one and
// coalesced 100 to a call: an event without phases (joinManyScript, as
// before), with phases (joinQueuesScript), and with an access code each.
// Each call stays one round trip; a code costs its HSETNX.
func TestJoinCommandCost(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	past := time.Now().Add(-time.Hour)
	plain := testSettings()
	phased := phasedSettings(t, past.Add(-time.Minute), past)
	cost := func(name string, set Settings, batch int, req func(i int) JoinRequest) (perJoin, calls float64) {
		t.Helper()
		st := newStore(rdb, testEvent)
		if err := rdb.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		// Warm the scripts' cache, so EVALSHA's NOSCRIPT retry is not counted.
		if _, err := st.joinRequests(ctx, []JoinRequest{req(-1)}, set); err != nil {
			t.Fatal(err)
		}
		if _, err := st.joinOne(ctx, req(-2), set); err != nil {
			t.Fatal(err)
		}
		const n = 400
		before, scripts := roundTrips(t, rdb, allButInfo), roundTrips(t, rdb, scriptsOnly)
		for i := 0; i < n; i += batch {
			reqs := make([]JoinRequest, 0, batch)
			for k := i; k < i+batch; k++ {
				reqs = append(reqs, req(k))
			}
			var err error
			if batch == 1 {
				_, err = st.joinOne(ctx, reqs[0], set)
			} else {
				_, err = st.joinRequests(ctx, reqs, set)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		perJoin = float64(roundTrips(t, rdb, allButInfo)-before-1) / n // less the second INFO
		calls = float64(roundTrips(t, rdb, scriptsOnly)-scripts) / n
		t.Logf("%-40s batch %3d: %.2f Redis commands per join, %.2f script calls per join", name, batch, perJoin, calls)
		return perJoin, calls
	}
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, batch := range []int{1, 100} {
		p, pc := cost("no phases (joinManyScript)", plain, batch, func(i int) JoinRequest {
			return JoinRequest{Customer: fmt.Sprintf("c%d", i)}
		})
		q, qc := cost("phases, queue members (joinQueuesScript)", phased, batch, func(i int) JoinRequest {
			return JoinRequest{Customer: fmt.Sprintf("c%d", i), Queue: "members"}
		})
		c, cc := cost("phases, with an access code", phased, batch, func(i int) JoinRequest {
			code, _ := accesscode.Check(key, testEvent, accesscode.Issue(key, testEvent, "presale", int64(i+10)))
			return JoinRequest{Customer: fmt.Sprintf("c%d", i), Queue: "invited", CodeHash: accesscode.Hash(code)}
		})
		if want := 1 / float64(batch); pc != want || qc != want || cc != want {
			t.Errorf("batch %d: script calls per join %.3f %.3f %.3f, want %.3f: one round trip per call", batch, pc, qc, cc, want)
		}
		// A code adds its HSETNX per join; the queues add at most one
		// command per call (ZMSCORE) and the records of their places.
		if c-q < 0.99 || c-q > 1.01 {
			t.Errorf("batch %d: a code costs %.2f commands per join, want 1 (HSETNX)", batch, c-q)
		}
		if batch > 1 && q-p > 1.1 {
			t.Errorf("batch %d: phases cost %.2f more commands per join than none", batch, q-p)
		}
	}
}

// TestQueuesLiveWeights: spec.phases reach the settings the admitter reads
// on every tick (settingsFromTicketEvent, as the TicketEvent watch applies
// them), and a new weight changes the shares from the next tick on.
func TestQueuesLiveWeights(t *testing.T) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	te := &v1alpha1.TicketEvent{Spec: v1alpha1.TicketEventSpec{SalesOpenAt: metav1.NewTime(at.Add(time.Minute)), Phases: []v1alpha1.SalePhase{
		{Name: "sale", OpensAt: metav1.NewTime(at), Queues: []v1alpha1.PhaseQueue{
			{Name: "members", Weight: 3, Tiers: []string{"member"}}, {Name: "general", Weight: 1}}}}}}
	set, err := settingsFromTicketEvent(config.Queue{Admission: testSettings().Admission}, te)
	if err != nil || !set.SalesOpenAt.Equal(at) || len(set.Phases) != 1 || set.Phases[0].Queues[0].Weight != 3 {
		t.Fatalf("settings %+v %v", set, err)
	}
	var reqs []JoinRequest
	for i := range 200 {
		reqs = append(reqs, JoinRequest{Customer: fmt.Sprintf("m%04d", i), Queue: "members"}, JoinRequest{Customer: fmt.Sprintf("g%04d", i)})
	}
	if _, err := st.joinRequests(ctx, reqs, set); err != nil {
		t.Fatal(err)
	}
	shares := func(set Settings) (members, general int) {
		before := len(admitLog(t, rdb))
		tickN(t, st, set, 40, 1)
		for _, e := range parseQueueLog(t, admitLog(t, rdb)[before:]) {
			if e.queue == "members" {
				members++
			} else {
				general++
			}
		}
		return members, general
	}
	if m, g := shares(set); m != 30 || g != 10 {
		t.Fatalf("3 : 1 admitted %d : %d", m, g)
	}
	te.Spec.Phases[0].Queues[0].Weight = 1
	if set, err = settingsFromTicketEvent(config.Queue{Admission: testSettings().Admission}, te); err != nil {
		t.Fatal(err)
	}
	if m, g := shares(set); m != 20 || g != 20 {
		t.Fatalf("after the change to 1 : 1 admitted %d : %d", m, g)
	}
}

// TestQueueIDNamesQueue: a place in a named queue carries its queue
// (version 3), bound to the customer like any queueId; a general place
// keeps version 2, which decodeIn reads as the general queue.
func TestQueueIDNamesQueue(t *testing.T) {
	c, err := newQueueIDCodec(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	id := c.encodeIn(testEvent, "alice", postOpenBase+5, 9, "members")
	s, g, q, err := c.decodeIn(id, testEvent, "alice")
	if err != nil || s != postOpenBase+5 || g != 9 || q != "members" {
		t.Fatalf("decodeIn = %d %d %q %v", s, g, q, err)
	}
	if _, _, _, err := c.decodeIn(id, testEvent, "bob"); err == nil {
		t.Fatal("another customer's queueId was accepted")
	}
	if _, _, _, err := c.decodeIn(id, testEvent+1, "alice"); err == nil {
		t.Fatal("another event's queueId was accepted")
	}
	b := []byte(id)
	b[len(b)-20] ^= 1
	if _, _, _, err := c.decodeIn(string(b), testEvent, "alice"); err == nil {
		t.Fatal("a tampered queueId was accepted")
	}
	gen := c.encodeIn(testEvent, "alice", postOpenBase+6, 9, DefaultQueue)
	if gen != c.encode(testEvent, "alice", postOpenBase+6, 9) {
		t.Fatal("a general place's queueId changed")
	}
	if _, _, q, err := c.decodeIn(gen, testEvent, "alice"); err != nil || q != DefaultQueue {
		t.Fatalf("general place: %q %v", q, err)
	}
}
