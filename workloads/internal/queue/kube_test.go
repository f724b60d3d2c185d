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
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// TestKubernetes runs against one real kube-apiserver (envtest): leader
// election over a Lease and live settings from the TicketEvent.
func TestKubernetes(t *testing.T) {
	_, kube := testenv.Kube(t)
	t.Run("LeaderElection", func(t *testing.T) { testLeaderElection(t, kube) })
	t.Run("LiveTicketEvent", func(t *testing.T) { testLiveTicketEvent(t, kube) })
	t.Run("Service", func(t *testing.T) { testServiceInCluster(t, kube) })
}

// testServiceInCluster runs the whole service as in a pod: elected
// admitter, settings from the TicketEvent "live" (created above, paused).
func testServiceInCluster(t *testing.T, kube *rest.Config) {
	cfg := testConfig(t, testenv.RedisURL(t))
	cfg.Admitter, cfg.LeaderElection = true, true
	cfg.Namespace, cfg.PodName, cfg.LeaseName, cfg.TicketEventName = "default", "pod-0", "service-test", "live"
	cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod = 2*time.Second, time.Second, 250*time.Millisecond
	base := startService(t, cfg, kube)
	tok := idToken(t, "alice")
	r := do(t, "POST", queueURL(base), tok, nil)
	if r.Status != 201 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	qid := r.view(t).QueueID
	// The TicketEvent says paused: joins are accepted, nobody is admitted.
	time.Sleep(500 * time.Millisecond)
	if v := do(t, "GET", queueURL(base)+"/"+qid, tok, nil).view(t); v.Status != "paused" {
		t.Fatalf("status %q while the TicketEvent is paused", v.Status)
	}
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(kube, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var te v1alpha1.TicketEvent
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "live"}, &te); err != nil {
		t.Fatal(err)
	}
	te.Spec.Admission.Paused = false
	if err := c.Update(context.Background(), &te); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "admission after unpausing", func() bool {
		return do(t, "GET", queueURL(base)+"/"+qid, tok, nil).view(t).Status == "admitted"
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// instance is one admitter contending for the Lease with its own client.
type instance struct {
	name    string
	cancel  context.CancelFunc
	dead    atomic.Bool // its apiserver connection is cut (a crashed pod)
	leading atomic.Bool
	done    chan struct{}
}

func testLeaderElection(t *testing.T, kube *rest.Config) {
	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	set := testSettings()
	set.MaxActive, set.ClaimTimeout = 1_000_000, time.Hour
	joinMany(t, st, set, "c", 200)
	live := newLiveSettings(set)

	var concurrent, peak atomic.Int32
	var fmu sync.Mutex
	var fencings []int64 // of each term, in order
	el := election{Namespace: "default", LeaseName: "admitter-test", LeaseDuration: 2 * time.Second,
		RenewDeadline: time.Second, RetryPeriod: 250 * time.Millisecond}
	start := func(name string) *instance {
		in := &instance{name: name, done: make(chan struct{})}
		cfg := rest.CopyConfig(kube)
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if in.dead.Load() {
					return nil, errors.New("connection cut")
				}
				return rt.RoundTrip(r)
			})
		}
		e := el
		e.Kube, e.Identity = cfg, name
		ctx, cancel := context.WithCancel(context.Background())
		in.cancel = cancel
		go func() {
			defer close(in.done)
			_ = runElected(ctx, e, func(ctx context.Context, fencing int64) {
				fmu.Lock()
				fencings = append(fencings, fencing)
				fmu.Unlock()
				n := concurrent.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				in.leading.Store(true)
				a := &admitter{st: st, live: live, m: newMetrics()}
				_ = a.run(ctx, fencing)
				in.leading.Store(false)
				concurrent.Add(-1)
			})
		}()
		return in
	}
	ins := []*instance{start("a"), start("b"), start("c")}
	defer func() {
		for _, in := range ins {
			in.cancel()
			<-in.done
		}
	}()
	leader := func(except *instance) *instance {
		for _, in := range ins {
			if in != except && in.leading.Load() {
				return in
			}
		}
		return nil
	}
	waitLeader := func(except *instance, within time.Duration) (*instance, time.Duration) {
		t.Helper()
		start := time.Now()
		for time.Since(start) < within {
			if l := leader(except); l != nil {
				return l, time.Since(start)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no new leader within %v", within)
		return nil, 0
	}
	first, _ := waitLeader(nil, 10*time.Second)
	time.Sleep(time.Second)
	if n := concurrent.Load(); n != 1 {
		t.Fatalf("%d admitters running, want exactly 1", n)
	}

	// Kill the leader: it can neither renew nor release the Lease. And let
	// Redis fail over to a replica that missed every fencing write: the
	// next leader's number must still be higher than every earlier one.
	first.dead.Store(true)
	if err := rdb.Del(context.Background(), st.k.epoch).Err(); err != nil {
		t.Fatal(err)
	}
	second, took := waitLeader(first, 6*time.Second)
	if limit := el.LeaseDuration + el.RetryPeriod + 1500*time.Millisecond; took > limit {
		t.Fatalf("after killing the leader a new one led after %v (LeaseDuration + RetryPeriod = %v)", took, el.LeaseDuration+el.RetryPeriod)
	}
	t.Logf("leader %s killed: %s leads after %v", first.name, second.name, took)
	// The dead leader stops admitting once it cannot renew; its late ticks
	// are fenced off in any case.
	testenv.WaitFor(t, 5*time.Second, "the dead leader to stop", func() bool { return !first.leading.Load() })

	// SIGTERM: the leader stops ticking, releases the Lease, another takes over.
	second.cancel()
	third, took := waitLeader(second, 4*time.Second)
	if took > 2500*time.Millisecond {
		t.Fatalf("handover on SIGTERM took %v", took)
	}
	t.Logf("leader %s terminated: %s leads after %v", second.name, third.name, took)
	if third == first {
		t.Fatal("the dead instance took the Lease")
	}
	if p := peak.Load(); p != 1 {
		t.Fatalf("up to %d admitters ran at once, want 1", p)
	}
	// Admission went on under the leaders.
	testenv.WaitFor(t, 5*time.Second, "admissions", func() bool { return len(admitLog(t, rdb)) == 200 })
	fmu.Lock()
	terms := slices.Clone(fencings)
	fmu.Unlock()
	if len(terms) < 3 {
		t.Fatalf("fencing numbers of %d terms, want 3", len(terms))
	}
	for i := 1; i < len(terms); i++ {
		if terms[i] <= terms[i-1] {
			t.Fatalf("fencing numbers %v do not increase from term to term", terms)
		}
	}
	// The last leader writes its number with its first tick, which may come
	// after the earlier leaders made every admission.
	last := terms[len(terms)-1]
	testenv.WaitFor(t, 5*time.Second, "the epoch key to hold the last term's number", func() bool {
		e, err := rdb.Get(context.Background(), st.k.epoch).Int64()
		return err == nil && e == last
	})
}

func testLiveTicketEvent(t *testing.T, kube *rest.Config) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(kube, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	te := &v1alpha1.TicketEvent{
		ObjectMeta: metav1.ObjectMeta{Name: "live", Namespace: "default"},
		Spec: v1alpha1.TicketEventSpec{EventID: testEvent, DisplayName: "Live", SalesOpenAt: metav1.NewTime(time.Now().Add(-time.Minute)),
			Seating:   v1alpha1.Seating{Sections: []v1alpha1.Section{{Name: "A", Price: "10.00", Rows: 1, SeatsPerRow: 10}}},
			Admission: v1alpha1.Admission{MaxActive: 3, RatePerSecond: 100, TickInterval: &metav1.Duration{Duration: 100 * time.Millisecond}},
		},
	}
	if err := c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	// Another TicketEvent in the namespace must not be followed.
	other := te.DeepCopy()
	other.Name, other.ResourceVersion, other.Spec.Admission.MaxActive = "other", "", 999
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}

	rdb := testenv.Redis(t)
	st := newStore(rdb, testEvent)
	base := testSettings()
	base.MaxActive = 1
	joinMany(t, st, base, "c", 100)
	live := newLiveSettings(base)
	if err := watchTicketEvent(ctx, kube, "default", "live", config.Queue{Admission: base.Admission}, live); err != nil {
		t.Fatal(err)
	}
	if s := live.Load(); s.MaxActive != 3 || s.TickInterval != 100*time.Millisecond {
		t.Fatalf("settings after sync: %+v", s)
	}
	a := &admitter{st: st, live: live, m: newMetrics()}
	done := make(chan struct{})
	go func() { _ = a.run(ctx, 0); close(done) }()
	defer func() { cancel(); <-done }()
	testenv.WaitFor(t, 5*time.Second, "3 active", func() bool { return liveCount(t, rdb) == 3 })

	update := func(mut func(*v1alpha1.Admission)) time.Time {
		t.Helper()
		var cur v1alpha1.TicketEvent
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "live"}, &cur); err != nil {
			t.Fatal(err)
		}
		mut(&cur.Spec.Admission)
		if err := c.Update(ctx, &cur); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	at := update(func(a *v1alpha1.Admission) { a.MaxActive = 7 })
	testenv.WaitFor(t, 5*time.Second, "7 active after the TicketEvent changed", func() bool { return liveCount(t, rdb) == 7 })
	t.Logf("maxActive 3 -> 7 applied by the admitter after %v", time.Since(at))
	if time.Since(at) > 5*time.Second {
		t.Fatalf("live change took %v", time.Since(at))
	}
	update(func(a *v1alpha1.Admission) { a.Paused, a.MaxActive = true, 50 })
	testenv.WaitFor(t, 5*time.Second, "paused", func() bool { return live.Load().Paused })
	time.Sleep(300 * time.Millisecond)
	if n := liveCount(t, rdb); n != 7 {
		t.Fatalf("paused by the TicketEvent, yet %d active", n)
	}
	update(func(a *v1alpha1.Admission) { a.SelectionWindow = &metav1.Duration{Duration: 45 * time.Second} })
	testenv.WaitFor(t, 5*time.Second, "the selection window", func() bool { return live.Load().SelectionWindow == 45*time.Second })
}
