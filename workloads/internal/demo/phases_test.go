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

package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
)

var testOpen = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

// timeline is a sale with salePhases read once a second: a presale of
// members and codes dealt 3 to 1 for 10 s, then the general sale dealing
// members and general by the pattern per second (codes ran out in the
// presale) while both wait, then general alone once members ran out.
func timeline(perSecond map[string]int) []loadtest.QueueSample {
	admitted := map[string]int64{}
	var out []loadtest.QueueSample
	at := testOpen
	read := func(phase string, waiting map[string]int64) {
		s := loadtest.QueueSample{At: at, Phase: phase}
		for _, n := range []string{membersQueue, codesQueue, "general"} {
			open := n != "general" || phase == generalPhase
			s.Queues = append(s.Queues, loadtest.QueueSampleRow{Name: n, Open: open, Weight: 1, Waiting: waiting[n], Admitted: admitted[n]})
		}
		out = append(out, s)
		at = at.Add(time.Second)
	}
	read(presalePhase, map[string]int64{membersQueue: 500, codesQueue: 100, "general": 300})
	for i := 0; i < 10; i++ {
		admitted[membersQueue] += 30
		admitted[codesQueue] += 10
		read(presalePhase, map[string]int64{membersQueue: 500, codesQueue: 100, "general": 300})
	}
	// Codes ran out at the end of the presale; the general sale opens.
	read(generalPhase, map[string]int64{membersQueue: 400, "general": 900})
	for i := 0; i < 20; i++ {
		for q, n := range perSecond {
			admitted[q] += int64(n)
		}
		read(generalPhase, map[string]int64{membersQueue: 400, "general": 900})
	}
	// Members ran low, and out: their last 5 went in a second that dealt
	// general 60, then general alone; in no group of two.
	read(generalPhase, map[string]int64{membersQueue: 5, "general": 900})
	admitted[membersQueue] += 5
	admitted["general"] += 60
	read(generalPhase, map[string]int64{"general": 840})
	admitted["general"] += 300
	read(generalPhase, map[string]int64{"general": 540})
	return out
}

// TestWeightedSharesCheck: admissions dealt 3 to 1 while members and
// general waited pass; dealt 1 to 1 they fail, by the share each got.
func TestWeightedSharesCheck(t *testing.T) {
	phases := salePhases(testOpen, 10*time.Second)
	good := weightedShares(timeline(map[string]int{membersQueue: 30, "general": 10}), phases)
	if p := shareProblems(good); len(p) != 0 {
		t.Fatalf("a fair deal failed: %v (groups %+v)", p, good)
	}
	// The phases' weights, not the state's (1 for all in the timeline).
	if len(good) != 2 || !good[0].Checked || good[0].Phase != presalePhase || good[0].Admitted[membersQueue] != 300 || good[0].Admitted[codesQueue] != 100 ||
		!good[1].Checked || good[1].Phase != generalPhase || good[1].Admissions != 800 || good[1].Weights[membersQueue] != 3 || good[1].Weights["general"] != 1 {
		t.Fatalf("groups %+v", good)
	}
	// A queue that ran dry between two reads (codes: 3 waiting, 3 let in)
	// is left out, and the others still count in their ratio.
	dry := []loadtest.QueueSample{
		{Phase: generalPhase, Queues: []loadtest.QueueSampleRow{{Name: membersQueue, Open: true, Waiting: 900}, {Name: codesQueue, Open: true, Waiting: 3}, {Name: "general", Open: true, Waiting: 900}}},
		{Phase: generalPhase, Queues: []loadtest.QueueSampleRow{{Name: membersQueue, Open: true, Waiting: 800, Admitted: 300}, {Name: codesQueue, Open: true, Waiting: 2, Admitted: 3}, {Name: "general", Open: true, Waiting: 800, Admitted: 100}}},
	}
	if g := weightedShares(dry, phases); len(g) != 1 || strings.Join(g[0].Queues, "+") != "general+members" || g[0].Admissions != 400 || len(shareProblems(g)) != 0 {
		t.Fatalf("codes ran dry: %+v", g)
	}
	bad := weightedShares(timeline(map[string]int{membersQueue: 20, "general": 20}), phases)
	p := shareProblems(bad)
	if len(p) != 2 || !strings.Contains(p[0], "queue general got 50.0% of 800 admissions, its weight 25.0%") || !strings.Contains(p[1], "queue members got 50.0% of 800 admissions, its weight 75.0%") {
		t.Fatalf("a 1:1 deal of weights 3:1: problems %q", p)
	}
	// The report's rows carry the largest checked group's shares.
	rows := queueRows(phases, loadtest.Fairness{Queues: map[string]int{membersQueue: 900, codesQueue: 100, "": 500}},
		&loadtest.Result{Queues: map[string]loadtest.QueueCounts{"general": {Joined: 2000, SeatsPaidFor: 700}}}, good)
	if len(rows) != 3 || rows[0].Name != membersQueue || rows[0].Share != 0.75 || rows[0].WeightShare != 0.75 ||
		rows[1].Name != codesQueue || rows[1].Share != 0.25 ||
		rows[2].Name != "general" || rows[2].Admitted != 500 || rows[2].Joined != 2000 || rows[2].SeatsPaidFor != 700 || rows[2].Share != 0.25 {
		t.Fatalf("rows %+v", rows)
	}
}

// TestCodeChecks: each way a code can be misused fails the audit.
func TestCodeChecks(t *testing.T) {
	phases := salePhases(testOpen, 10*time.Second)
	log := []loadtest.Admission{{Customer: "cust-1", Queue: codesQueue, Cohort: 'f'}, {Customer: "cust-2", Queue: membersQueue, Cohort: 'f'}}
	res := &loadtest.Result{
		CodeJoins:  []loadtest.CodeJoin{{CodeHash: "h1", Customer: "cust-1", Placed: true}, {CodeHash: "h2", Customer: "cust-3", Refusal: "code_used"}},
		Admissions: []loadtest.AdmissionSeen{{Customer: "cust-1", Queue: codesQueue, CodeHash: "h1", AdmittedAt: testOpen}},
	}
	var ok PhaseChecks
	codeChecks(&ok, map[string]string{"h1": "cust-1", "h2": "cust-4"}, res, log, phases)
	if p := ok.problems(); len(p) != 0 || ok.CodesRedeemed != 2 || ok.CodeRefusals["code_used"] != 1 {
		t.Fatalf("a clean sale: %v %+v", p, ok)
	}
	for name, c := range map[string]struct {
		redeemed map[string]string
		joins    []loadtest.CodeJoin
		want     string
	}{
		"a code placed two people": {map[string]string{"h1": "cust-1"},
			[]loadtest.CodeJoin{{CodeHash: "h1", Customer: "cust-1", Placed: true}, {CodeHash: "h1", Customer: "cust-5", Placed: true}}, "gave two people a place"},
		"a person with two codes": {map[string]string{"h1": "cust-1", "h3": "cust-1"}, res.CodeJoins, "redeemed two access codes"},
		"a code bound to another": {map[string]string{"h1": "cust-9"}, res.CodeJoins, "bound to someone else"},
	} {
		r := *res
		r.CodeJoins = c.joins
		var pc PhaseChecks
		codeChecks(&pc, c.redeemed, &r, log, phases)
		if p := strings.Join(pc.problems(), "; "); !strings.Contains(p, c.want) {
			t.Errorf("%s: problems %q, want %q", name, p, c.want)
		}
	}
	// Someone admitted from the codes queue who redeemed no code.
	var pc PhaseChecks
	codeChecks(&pc, map[string]string{}, &loadtest.Result{}, log, phases)
	if pc.CodeQueueWithoutCode != 1 || !strings.Contains(strings.Join(pc.problems(), ";"), "redeemed none") {
		t.Fatalf("an admission from codes without a code: %+v", pc)
	}
}

// TestOpeningChecks: an admission the crowd saw before its queue opened,
// or a public state showing one, fails the audit.
func TestOpeningChecks(t *testing.T) {
	phases := salePhases(testOpen, 10*time.Second)
	general := testOpen.Add(10 * time.Second)
	var ok PhaseChecks
	openingChecks(&ok, &loadtest.Result{Admissions: []loadtest.AdmissionSeen{
		{Customer: "a", Queue: membersQueue, AdmittedAt: testOpen}, {Customer: "b", Queue: "general", AdmittedAt: general.Add(time.Millisecond)},
	}}, phases)
	if p := ok.problems(); len(p) != 0 {
		t.Fatalf("admissions after their openings: %v", p)
	}
	var early PhaseChecks
	openingChecks(&early, &loadtest.Result{Admissions: []loadtest.AdmissionSeen{
		{Customer: "b", Queue: "general", AdmittedAt: general.Add(-time.Second)}, // in the presale
	}}, phases)
	var seen PhaseChecks
	openingChecks(&seen, &loadtest.Result{EarlyAdmissions: []loadtest.EarlyAdmission{{Queue: "general", OpensAt: general, Admitted: 3, SeenAt: general.Add(-time.Second)}}}, phases)
	if early.AdmittedBeforeOpening != 1 || seen.AdmittedBeforeOpening != 3 || !strings.Contains(strings.Join(seen.problems(), ";"), "before their queue's phase opened") {
		t.Fatalf("early admissions: %+v, %+v", early, seen)
	}
}

// TestShuffleChecks: a queue's pre-queue admitted in arrival order fails;
// a shuffled one, and one too small to tell, pass.
func TestShuffleChecks(t *testing.T) {
	var log []loadtest.Admission
	r := rand.New(rand.NewPCG(1, 2))
	shuffled := r.Perm(300)
	for i := 0; i < 300; i++ {
		log = append(log, loadtest.Admission{Customer: fmt.Sprint("m", i), ArrivalSeq: int64(i), Cohort: 'p', Queue: membersQueue})
		log = append(log, loadtest.Admission{Customer: fmt.Sprint("g", i), ArrivalSeq: int64(1000 + shuffled[i]), Cohort: 'p'})
	}
	for i := 0; i < 50; i++ {
		log = append(log, loadtest.Admission{Customer: fmt.Sprint("c", i), ArrivalSeq: int64(2000 + i), Cohort: 'p', Queue: codesQueue})
	}
	var pc PhaseChecks
	shuffleChecks(&pc, loadtest.ComputeFairness(log, 0))
	if len(pc.NotShuffled) != 1 || pc.NotShuffled[0] != membersQueue || !strings.Contains(strings.Join(pc.problems(), ";"), "not shuffled") {
		t.Fatalf("members in arrival order, general shuffled, codes too few: %+v", pc)
	}
}

// TestSalePhases: the demo's phases are valid ones for the queue (in
// order, general later, the default queue's name) and weight members 3.
func TestSalePhases(t *testing.T) {
	ps := salePhases(testOpen, 7*time.Second)
	if len(ps) != 2 || !ps[1].OpensAt.Equal(testOpen.Add(7*time.Second)) || ps[1].Queues[2].Name != "general" {
		t.Fatalf("%+v", ps)
	}
	w := weightsAt(ps, 1)
	if w[membersQueue] != 3 || w["general"] != 1 || w[codesQueue] != 1 || !openings(ps)[codesQueue].code {
		t.Fatalf("weights %v", w)
	}
	// Each queue opens with the first phase listing it.
	if o := openings(ps); o["general"].phase != 1 || o[membersQueue].phase != 0 || !o[membersQueue].opensAt.Equal(testOpen) {
		t.Fatalf("openings %+v", o)
	}
}
