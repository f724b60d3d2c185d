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
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
	"github.com/ticketfair/ticketfair/workloads/internal/queue"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// ShareTolerance is how far, in parts of one, a queue's share of the
// admissions made while every queue of the group had people waiting may
// stray from its weight's share.
const ShareTolerance = 0.05

// minShareAdmissions is the fewest admissions a group of waiting queues
// must have for its shares to be checked: fewer are a round or two of the
// weights, whose order within a round is the admitter's, not a share.
const minShareAdmissions = 100

// QueueRow is one queue of a sale with phases in the report.
type QueueRow struct {
	Name   string `json:"name"`
	Phase  string `json:"phase"` // the phase that opens it
	Weight int    `json:"weight"`
	// OpensAt is its phase's opening.
	OpensAt time.Time `json:"opensAt"`
	// Joined and SeatsPaidFor are the crowd's; Admitted the admit log's.
	Joined       int64 `json:"joined"`
	Admitted     int   `json:"admitted"`
	SeatsPaidFor int64 `json:"seatsPaidFor"`
	// Share is its part of the admissions of the largest checked group of
	// queues it was waiting in (see ShareGroup), WeightShare its weight's
	// part there; both 0 when it was in no checked group.
	Share       float64 `json:"share"`
	WeightShare float64 `json:"weightShare"`
}

// ShareGroup is the admissions made while the same queues, under the same
// phase's weights, had people waiting.
type ShareGroup struct {
	Phase      string         `json:"phase"`
	Queues     []string       `json:"queues"`
	Weights    map[string]int `json:"weights"`
	Admissions int            `json:"admissions"`
	Admitted   map[string]int `json:"admitted"`
	// Checked: enough admissions to compare (minShareAdmissions).
	Checked bool `json:"checked"`
}

// PhaseChecks are the audit's checks of a sale with phases.
type PhaseChecks struct {
	Shares []ShareGroup `json:"shares"`
	// CodesRedeemed are the codes the queue's Redis records as redeemed.
	CodesRedeemed int `json:"codesRedeemed"`
	// CodesPlacedTwice: codes with which two people got a place (the
	// crowd's record). SubjectsWithTwoCodes: people who redeemed two codes
	// (Redis). CodeNotTheirs: admissions with a code Redis binds to someone
	// else. CodeQueueWithoutCode: admissions from a queue that needs a
	// code, of someone who redeemed none. All must be 0.
	CodesPlacedTwice     int `json:"codesPlacedTwice"`
	SubjectsWithTwoCodes int `json:"subjectsWithTwoCodes"`
	CodeNotTheirs        int `json:"codeNotTheirs"`
	CodeQueueWithoutCode int `json:"codeQueueWithoutCode"`
	// RedisLostCodes: the queue's Redis lost its data during the sale, and
	// the redeemed codes with it; only CodesPlacedTwice was checked.
	RedisLostCodes bool `json:"redisLostCodes,omitempty"`
	// CodeRefusals counts code holders' joins refused, by reason.
	CodeRefusals map[string]int `json:"codeRefusals,omitempty"`
	// AdmittedBeforeOpening: admissions the crowd learned of before their
	// queue's opening, or public-state reads before it that showed some.
	// Must be 0.
	AdmittedBeforeOpening int `json:"admittedBeforeOpening"`
	// NotShuffled are the queues whose pre-queue (minShuffleAdmissions or
	// more admitted) was admitted in an order correlated with arrival
	// beyond maxShuffleSpearman: must be none.
	NotShuffled []string `json:"notShuffled,omitempty"`
}

// A shuffled pre-queue of n people has a rank correlation with arrival of
// about 0 ± 1/sqrt(n-1): 0.07 at 200, so beyond 0.3 it was no shuffle.
const (
	minShuffleAdmissions = 200
	maxShuffleSpearman   = 0.3
)

// shuffleChecks notes the queues whose pre-queue was not shuffled.
func shuffleChecks(pc *PhaseChecks, f loadtest.Fairness) {
	for q, s := range f.PreQueues {
		if s.Admitted >= minShuffleAdmissions && math.Abs(s.Spearman) > maxShuffleSpearman {
			pc.NotShuffled = append(pc.NotShuffled, logQueue(loadtest.Admission{Queue: q}))
		}
	}
	sort.Strings(pc.NotShuffled)
}

// queueOpening is, per queue of phases, the phase that opens it and when.
type queueOpening struct {
	phase   int
	opensAt time.Time
	code    bool
}

func openings(phases []config.Phase) map[string]queueOpening {
	out := map[string]queueOpening{}
	for i, p := range phases {
		for _, q := range p.Queues {
			if _, ok := out[q.Name]; !ok {
				out[q.Name] = queueOpening{phase: i, opensAt: p.OpensAt, code: q.AccessCode}
			}
		}
	}
	return out
}

// weightsAt are the queues' weights once phase k has opened: each queue's
// in the latest phase up to k that lists it.
func weightsAt(phases []config.Phase, k int) map[string]int {
	w := map[string]int{}
	for i := 0; i <= k && i < len(phases); i++ {
		for _, q := range phases[i].Queues {
			w[q.Name] = q.Weight
		}
	}
	return w
}

// logQueue is the queue an admit log entry names (the default queue's
// entries name none).
func logQueue(a loadtest.Admission) string {
	if a.Queue == "" {
		return queue.DefaultQueue
	}
	return a.Queue
}

// weightedShares sums, per phase and set of queues, the admissions made
// between consecutive reads of the public state (timeline) while those
// queues were open with more people waiting at the first read than they
// admitted until the second: so each had people left at every tick
// between, and the admitter dealt them places in the ratio of their
// weights. A queue that ran dry meanwhile got less than its share and is
// left out (the admitter deals its places to the others, still in their
// ratio). The weights are the phases' (the state's when a phase is not
// among them). Pairs of reads across a phase's opening, or whose counts
// went back (a queue's Redis lost its data), count in no group.
func weightedShares(timeline []loadtest.QueueSample, phases []config.Phase) []ShareGroup {
	groups := map[string]*ShareGroup{}
	var order []string
	for k := 1; k < len(timeline); k++ {
		a, b := timeline[k-1], timeline[k]
		if a.Phase != b.Phase || b.Phase == "" {
			continue
		}
		before := map[string]loadtest.QueueSampleRow{}
		for _, q := range a.Queues {
			before[q.Name] = q
		}
		var waiting []string
		delta, weights := map[string]int{}, map[string]int{}
		ok := true
		for _, q := range b.Queues {
			p, seen := before[q.Name]
			d := q.Admitted - p.Admitted
			if !seen || d < 0 {
				ok = false
				break
			}
			if p.Open && q.Open && p.Waiting > d {
				waiting = append(waiting, q.Name)
				delta[q.Name], weights[q.Name] = int(d), q.Weight
			}
		}
		if !ok || len(waiting) < 2 {
			continue
		}
		sort.Strings(waiting)
		if i := slices.IndexFunc(phases, func(p config.Phase) bool { return p.Name == b.Phase }); i >= 0 {
			w := weightsAt(phases, i)
			for _, n := range waiting {
				weights[n] = w[n]
			}
		}
		key := b.Phase + " " + strings.Join(waiting, "+")
		g := groups[key]
		if g == nil {
			g = &ShareGroup{Phase: b.Phase, Queues: waiting, Weights: weights, Admitted: map[string]int{}}
			groups[key] = g
			order = append(order, key)
		}
		for n, d := range delta {
			g.Admitted[n] += d
			g.Admissions += d
		}
	}
	out := make([]ShareGroup, 0, len(order))
	for _, k := range order {
		g := groups[k]
		g.Checked = g.Admissions >= minShareAdmissions
		out = append(out, *g)
	}
	return out
}

// shareProblems are the checked groups whose shares stray from the weights.
func shareProblems(groups []ShareGroup) []string {
	var out []string
	for _, g := range groups {
		if !g.Checked {
			continue
		}
		total := 0
		for _, w := range g.Weights {
			total += w
		}
		for _, n := range g.Queues {
			share, want := float64(g.Admitted[n])/float64(g.Admissions), float64(g.Weights[n])/float64(max(total, 1))
			if math.Abs(share-want) > ShareTolerance {
				out = append(out, fmt.Sprintf("phase %s, queues %s waiting: queue %s got %.1f%% of %d admissions, its weight %.1f%% (tolerance ±%.0f%%)",
					g.Phase, strings.Join(g.Queues, "+"), n, 100*share, g.Admissions, 100*want, 100*ShareTolerance))
			}
		}
	}
	return out
}

// codeChecks checks the access codes: redeemed maps each redeemed code's
// hash to its subject (the queue's Redis), log is the admit log.
func codeChecks(pc *PhaseChecks, redeemed map[string]string, res *loadtest.Result, log []loadtest.Admission, phases []config.Phase) {
	pc.CodesRedeemed = len(redeemed)
	perSubject := map[string]int{}
	for _, subject := range redeemed {
		perSubject[subject]++
	}
	for _, n := range perSubject {
		if n > 1 {
			pc.SubjectsWithTwoCodes++
		}
	}
	placed := map[string]map[string]bool{}
	for _, j := range res.CodeJoins {
		if !j.Placed {
			if pc.CodeRefusals == nil {
				pc.CodeRefusals = map[string]int{}
			}
			pc.CodeRefusals[j.Refusal]++
			continue
		}
		if placed[j.CodeHash] == nil {
			placed[j.CodeHash] = map[string]bool{}
		}
		placed[j.CodeHash][j.Customer] = true
	}
	for _, who := range placed {
		if len(who) > 1 {
			pc.CodesPlacedTwice++
		}
	}
	for _, a := range res.Admissions {
		if a.CodeHash != "" && redeemed[a.CodeHash] != a.Customer {
			pc.CodeNotTheirs++
		}
	}
	open := openings(phases)
	for _, a := range log {
		if open[logQueue(a)].code && perSubject[a.Customer] == 0 {
			pc.CodeQueueWithoutCode++
		}
	}
}

// openingChecks counts admissions before their queue's opening: the crowd
// learns of an admission after it is made, and reads the public state after
// the queue wrote it, so each one counted happened before the opening.
func openingChecks(pc *PhaseChecks, res *loadtest.Result, phases []config.Phase) {
	open := openings(phases)
	for _, a := range res.Admissions {
		if o, ok := open[a.Queue]; ok && a.AdmittedAt.Before(o.opensAt) {
			pc.AdmittedBeforeOpening++
		}
	}
	for _, e := range res.EarlyAdmissions {
		pc.AdmittedBeforeOpening += int(e.Admitted)
	}
}

// problems are PhaseChecks' violations.
func (pc *PhaseChecks) problems() []string {
	out := shareProblems(pc.Shares)
	if len(pc.NotShuffled) > 0 {
		out = append(out, fmt.Sprintf("pre-queue not shuffled (rank correlation with arrival beyond %.1f) in queues %s", maxShuffleSpearman, strings.Join(pc.NotShuffled, ", ")))
	}
	for _, c := range []struct {
		n    int
		what string
	}{
		{pc.CodesPlacedTwice, "access codes gave two people a place"},
		{pc.SubjectsWithTwoCodes, "people redeemed two access codes"},
		{pc.CodeNotTheirs, "admissions with an access code bound to someone else"},
		{pc.CodeQueueWithoutCode, "admissions from a queue that needs an access code, of people who redeemed none"},
		{pc.AdmittedBeforeOpening, "admissions before their queue's phase opened"},
	} {
		if c.n != 0 {
			out = append(out, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return out
}

// queueRows are the report's rows per queue of phases.
func queueRows(phases []config.Phase, f loadtest.Fairness, res *loadtest.Result, groups []ShareGroup) []QueueRow {
	open := openings(phases)
	last := weightsAt(phases, len(phases)-1)
	var rows []QueueRow
	for _, p := range phases {
		for _, q := range p.Queues {
			if o := open[q.Name]; phases[o.phase].Name != p.Name {
				continue
			}
			admitted := f.Queues[q.Name]
			if q.Name == queue.DefaultQueue {
				admitted += f.Queues[""]
			}
			r := QueueRow{Name: q.Name, Phase: p.Name, Weight: last[q.Name], OpensAt: p.OpensAt, Admitted: admitted,
				Joined: res.Queues[q.Name].Joined, SeatsPaidFor: res.Queues[q.Name].SeatsPaidFor}
			best := -1
			for i, g := range groups {
				if g.Checked && slices.Contains(g.Queues, q.Name) && (best < 0 || g.Admissions > groups[best].Admissions) {
					best = i
				}
			}
			if best >= 0 {
				g := groups[best]
				total := 0
				for _, w := range g.Weights {
					total += w
				}
				r.Share = float64(g.Admitted[q.Name]) / float64(g.Admissions)
				r.WeightShare = float64(g.Weights[q.Name]) / float64(max(total, 1))
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// auditPhases runs the checks of a sale with phases on rep, from the
// admit log (its last Redis lifetime), the redeemed codes and the crowd's
// result.
func auditPhases(ctx context.Context, cfg AuditConfig, res *loadtest.Result, rep *Report) error {
	if len(cfg.Phases) == 0 {
		return nil
	}
	c, err := redisconn.New(cfg.Redis)
	if err != nil {
		return err
	}
	defer c.Close()
	entries, err := c.LRange(ctx, zone.AdmitLogKey(cfg.EventID), 0, -1).Result()
	if err != nil {
		return err
	}
	log, err := loadtest.ParseAdmissionLog(entries)
	if err != nil {
		return err
	}
	// The queue's HASH of redeemed codes: sha256(code) -> subject.
	redeemed, err := c.HGetAll(ctx, zone.Prefix(cfg.EventID)+"codes").Result()
	if err != nil {
		return err
	}
	pc := &PhaseChecks{Shares: weightedShares(res.QueueTimeline, cfg.Phases)}
	if rep.RedisLifetimes > 1 {
		// Redis lost the codes it had redeemed: only the crowd's record
		// (no code placed two people) can be checked.
		pc.RedisLostCodes = true
		codeChecks(pc, nil, &loadtest.Result{CodeJoins: res.CodeJoins}, nil, cfg.Phases)
	} else {
		codeChecks(pc, redeemed, res, log, cfg.Phases)
	}
	openingChecks(pc, res, cfg.Phases)
	shuffleChecks(pc, rep.Fairness)
	rep.PhaseChecks, rep.QueueTimeline = pc, res.QueueTimeline
	rep.Queues = queueRows(cfg.Phases, rep.Fairness, res, pc.Shares)
	rep.Problems = append(rep.Problems, pc.problems()...)
	return nil
}

// The demo's phases: the presale's queues and the general sale's.
const (
	presalePhase = "presale"
	generalPhase = "general"
	membersQueue = "members"
	codesQueue   = "codes"
)

// salePhases are the demo's two phases: at open, a presale of two queues,
// members (the member tier) and codes (an access code of the presale),
// weighted 3 to 1; at open+presaleFor the general sale adds the general
// queue, everyone's, weighted members 3, codes 1, general 1 (the same
// ratio of the first two, so a tick that deals across the change keeps it).
func salePhases(open time.Time, presaleFor time.Duration) []config.Phase {
	return []config.Phase{
		{Name: presalePhase, OpensAt: open, Queues: []config.PhaseQueue{
			{Name: membersQueue, Weight: 3, Tiers: []string{loadtest.DefaultMemberTier}},
			{Name: codesQueue, Weight: 1, AccessCode: true},
		}},
		{Name: generalPhase, OpensAt: open.Add(presaleFor), Queues: []config.PhaseQueue{
			{Name: membersQueue, Weight: 3, Tiers: []string{loadtest.DefaultMemberTier}},
			{Name: codesQueue, Weight: 1, AccessCode: true},
			{Name: queue.DefaultQueue, Weight: 1},
		}},
	}
}

// presale renders the demo's phases into q and issues a code for every
// code holder of profile (and a few more) with the key it gives q.
func (s *sale) presale(q *config.Queue, profile loadtest.Profile) error {
	if !s.o.Phases {
		return nil
	}
	if s.o.PresaleFor <= 0 {
		return fmt.Errorf("demo: the presale must last a while (PresaleFor %s)", s.o.PresaleFor)
	}
	s.phases = salePhases(s.open, s.o.PresaleFor)
	b, err := json.Marshal(s.phases)
	if err != nil {
		return err
	}
	q.Phases = string(b)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	q.AccessCodeKey = base64.StdEncoding.EncodeToString(key)
	s.accessCodes = loadtest.IssueCodes(key, s.o.EventID, presalePhase, int(math.Ceil(profile.CodeHolders*float64(profile.Customers)*1.1)))
	s.logf("phases      %s at %s (members, codes), %s at %s (members 3, codes 1, general 1); %d access codes",
		presalePhase, s.phases[0].OpensAt.Format(time.TimeOnly), generalPhase, s.phases[1].OpensAt.Format(time.TimeOnly), len(s.accessCodes))
	return nil
}
