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

package loadtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestSpearman(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	if got := Spearman(x, []float64{10, 20, 30, 40, 50}); math.Abs(got-1) > 1e-9 {
		t.Fatalf("same order: %v", got)
	}
	if got := Spearman(x, []float64{5, 4, 3, 2, 1}); math.Abs(got+1) > 1e-9 {
		t.Fatalf("reversed: %v", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	n := 5000
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = float64(i)
		b[i] = r.Float64()
	}
	if got := Spearman(a, b); math.Abs(got) > 0.05 {
		t.Fatalf("independent samples correlate: %v", got)
	}
}

func TestComputeFairness(t *testing.T) {
	var log []Admission
	// Pre-queue of 1000 admitted in a random order, then 500 FIFO.
	perm := rand.New(rand.NewPCG(3, 4)).Perm(1000)
	for i, p := range perm {
		log = append(log, Admission{Customer: fmt.Sprint("p", p), ArrivalSeq: int64(p + 1), QueueSeq: int64(i + 1)})
	}
	for i := 0; i < 500; i++ {
		log = append(log, Admission{Customer: fmt.Sprint("f", i), ArrivalSeq: int64(1001 + i), QueueSeq: int64(1001 + i)})
	}
	f := ComputeFairness(log, 1000)
	if f.Admitted != 1500 || f.AdmittedTwice != 0 || f.PostOpenAdmitted != 500 || f.PostOpenInversions != 0 || f.PreQueueAdmitted != 1000 {
		t.Fatalf("unexpected: %+v", f)
	}
	if math.Abs(f.PreQueueSpearman) > 0.1 || !f.PreQueueSpearmanSet {
		t.Fatalf("shuffled pre-queue spearman %v", f.PreQueueSpearman)
	}
	// The queue's own cohorts split the log, whatever the count given: a
	// crowd counts a join whose answer came after opening as after, though
	// the queue placed it before (the pre-queue's shuffle would then look
	// like FIFO inversions).
	marked := append([]Admission(nil), log...)
	for i := range marked {
		marked[i].Cohort = "pf"[min(i/1000, 1)]
	}
	if f := ComputeFairness(marked, 900); f.PostOpenAdmitted != 500 || f.PostOpenInversions != 0 || f.PreQueueAdmitted != 1000 {
		t.Fatalf("split by the cohorts: %+v", f)
	}
	if f := ComputeFairness(log, 900); f.PostOpenInversions == 0 {
		t.Fatalf("split at an undercount without cohorts: no inversions: %+v", f)
	}
	// An out-of-order admission and a repeated customer are caught.
	log[1100], log[1101] = log[1101], log[1100]
	log = append(log, Admission{Customer: "f3", ArrivalSeq: 9999})
	f = ComputeFairness(log, 1000)
	if f.PostOpenInversions != 1 || f.AdmittedTwice != 1 {
		t.Fatalf("defects not counted: %+v", f)
	}
}

func TestParseAdmissionLog(t *testing.T) {
	got, err := ParseAdmissionLog([]string{"cust-1|5|2"})
	if err != nil || len(got) != 1 || got[0].Customer != "cust-1" || got[0].ArrivalSeq != 5 || got[0].QueueSeq != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	got, err = ParseAdmissionLog([]string{"cust|with|bars|7|3|p", "c2|8|1|f"})
	if err != nil || len(got) != 2 || got[0].Customer != "cust|with|bars" || got[0].ArrivalSeq != 7 || got[0].QueueSeq != 3 || got[0].Cohort != 'p' || got[1].Cohort != 'f' {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"a|b|c", "a|1", "", "a|1|p"} {
		if _, err := ParseAdmissionLog([]string{bad}); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// Every scheduled customer runs its steps exactly once each, even when
// steps reschedule themselves at "now" from many workers.
func TestSchedulerRunsEachTaskOnce(t *testing.T) {
	s := newScheduler()
	const n = 2000
	var mu sync.Mutex
	runs := map[int32]int{}
	start := time.Now()
	for i := 0; i < n; i++ {
		s.add(&customer{id: int32(i), next: step(i%2) * stepChoose}, start.Add(time.Duration(i%50)*time.Millisecond))
	}
	s.run(context.Background(), 16, func(ctx context.Context, c *customer) {
		mu.Lock()
		runs[c.id]++
		k := runs[c.id]
		mu.Unlock()
		if k < 3 {
			s.at(c, time.Now().Add(time.Millisecond))
			return
		}
		s.done()
	})
	for id, k := range runs {
		if k != 3 {
			t.Fatalf("customer %d ran %d steps, want 3", id, k)
		}
	}
	if len(runs) != n {
		t.Fatalf("%d customers ran, want %d", len(runs), n)
	}
}
