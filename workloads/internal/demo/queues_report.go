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
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
	"github.com/ticketfair/ticketfair/workloads/internal/queue"
)

// printQueues prints a row per queue of a sale with phases: with the
// audit's rows (AuditConfig.Phases), each queue's joins, admissions, share
// of the admissions while it and others waited against its weight's share,
// and seats paid for; without them, the admit log's admissions per queue
// and their share (FIFO is measured within each queue, see
// loadtest.ComputeFairness). A sale without phases has no rows.
func printQueues(w io.Writer, admitted map[string]int, rows []QueueRow) {
	if len(rows) > 0 {
		for _, r := range rows {
			share := "no group of waiting queues large enough to compare"
			if r.WeightShare > 0 {
				share = fmt.Sprintf("%.1f%% of admissions while others waited, weight %d = %.1f%%", 100*r.Share, r.Weight, 100*r.WeightShare)
			}
			fmt.Fprintf(w, "queue %s (%s, %s)\tjoined %d, admitted %d, %s; seats paid for %d\n",
				r.Name, r.Phase, r.OpensAt.Format("15:04:05"), r.Joined, r.Admitted, share, r.SeatsPaidFor)
		}
		return
	}
	if len(admitted) == 0 {
		return
	}
	names, total := make([]string, 0, len(admitted)), 0
	for q, n := range admitted {
		names = append(names, q)
		total += n
	}
	slices.Sort(names)
	for _, q := range names {
		name := q
		if name == "" {
			name = queue.DefaultQueue
		}
		fmt.Fprintf(w, "queue %s\t%d admitted, %.1f%% of admissions\n", name, admitted[q], 100*float64(admitted[q])/float64(max(total, 1)))
	}
}

// printPhaseChecks prints the audit's checks of a sale with phases.
func printPhaseChecks(w io.Writer, pc *PhaseChecks) {
	if pc == nil {
		return
	}
	for _, g := range pc.Shares {
		if !g.Checked {
			continue
		}
		total := 0
		for _, wt := range g.Weights {
			total += wt
		}
		var parts []string
		for _, n := range g.Queues {
			parts = append(parts, fmt.Sprintf("%s %.1f%% (weight %.1f%%)", n, 100*float64(g.Admitted[n])/float64(g.Admissions), 100*float64(g.Weights[n])/float64(max(total, 1))))
		}
		fmt.Fprintf(w, "shares, %s weights\t%d admissions while %s waited: %s\n", g.Phase, g.Admissions, strings.Join(g.Queues, "+"), strings.Join(parts, ", "))
	}
	reasons := make([]string, 0, len(pc.CodeRefusals))
	for r, n := range pc.CodeRefusals {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(reasons)
	refused := "none refused"
	if len(reasons) > 0 {
		refused = "refused: " + strings.Join(reasons, ", ")
	}
	fmt.Fprintf(w, "access codes\t%d redeemed, %d placed two people, %d people with two, %d admissions with someone else's, %d code-queue admissions without one; %s\n",
		pc.CodesRedeemed, pc.CodesPlacedTwice, pc.SubjectsWithTwoCodes, pc.CodeNotTheirs, pc.CodeQueueWithoutCode, refused)
	fmt.Fprintf(w, "admitted before their phase\t%d\n", pc.AdmittedBeforeOpening)
}

// preQueuesText is the pre-queue's shuffle per queue of a sale with phases
// ("" without).
func preQueuesText(pq map[string]loadtest.PreQueueShuffle) string {
	if len(pq) == 0 {
		return ""
	}
	names := make([]string, 0, len(pq))
	for q := range pq {
		names = append(names, q)
	}
	sort.Strings(names)
	var parts []string
	for _, q := range names {
		name := q
		if name == "" {
			name = queue.DefaultQueue
		}
		parts = append(parts, fmt.Sprintf("%s %d at %.3f", name, pq[q].Admitted, pq[q].Spearman))
	}
	return "; per queue: " + strings.Join(parts, ", ")
}
