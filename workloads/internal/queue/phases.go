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
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// queueDef is one queue of the event as the scripts see it.
type queueDef struct {
	Name    string
	Weight  int
	OpensAt time.Time // zero: open from the start
}

// queues are the event's queues at now, in the order they first appear:
// each opens with the first phase that lists it and is admitted with the
// weight of the latest phase opened by now that lists it (before that, of
// the first). Without phases: one queue, DefaultQueue, opening at
// SalesOpenAt.
func (s Settings) queues(now time.Time) []queueDef {
	if len(s.Phases) == 0 {
		return []queueDef{{Name: DefaultQueue, Weight: 1, OpensAt: s.SalesOpenAt}}
	}
	var out []queueDef
	at := map[string]int{}
	for _, p := range s.Phases {
		for _, q := range p.Queues {
			i, ok := at[q.Name]
			if !ok {
				at[q.Name] = len(out)
				out = append(out, queueDef{Name: q.Name, Weight: q.Weight, OpensAt: p.OpensAt})
				continue
			}
			if !p.OpensAt.After(now) {
				out[i].Weight = q.Weight
			}
		}
	}
	return out
}

// phaseAt is the index of the latest phase opened by now, -1 before the
// first (or without phases).
func (s Settings) phaseAt(now time.Time) int {
	cur := -1
	for i, p := range s.Phases {
		if !p.OpensAt.After(now) {
			cur = i
		}
	}
	return cur
}

// phaseOfQueue is the phase that opens queue name ("" without phases).
func (s Settings) phaseOfQueue(name string) string {
	for _, p := range s.Phases {
		for _, q := range p.Queues {
			if q.Name == name {
				return p.Name
			}
		}
	}
	return ""
}

// phaseOfAdmission is the phase a customer admitted from queue at `at`
// was admitted under, as their access token names it for booking: the
// latest phase opened by then that lists the queue (the first that lists
// it when none had opened, which admission never does). "" without phases.
func (s Settings) phaseOfAdmission(queue string, at time.Time) string {
	name := s.phaseOfQueue(queue)
	for _, p := range s.Phases {
		if p.OpensAt.After(at) {
			break
		}
		if slices.ContainsFunc(p.Queues, func(q config.PhaseQueue) bool { return q.Name == queue }) {
			name = p.Name
		}
	}
	return name
}

// The refusals of step 5 of the join: which queue a customer may enter.
var (
	errNotEligible = &httpapi.Error{Status: http.StatusForbidden, Code: "not_eligible",
		Message: "no open or next phase of this sale admits this identity"}
	errCodeInvalid = &httpapi.Error{Status: http.StatusForbidden, Code: "code_invalid",
		Message: "the access code is not valid"}
	errCodeOtherEvent = &httpapi.Error{Status: http.StatusForbidden, Code: "code_other_event",
		Message: "the access code belongs to another event"}
	errCodeNotNeeded = &httpapi.Error{Status: http.StatusForbidden, Code: "code_invalid",
		Message: "this sale takes no access codes"}
)

// phaseNotOpen refuses a join before the customer's phase is next to open.
func phaseNotOpen(phase string, at time.Time) error {
	return &httpapi.Error{Status: http.StatusForbidden, Code: "phase_not_open",
		Message: fmt.Sprintf("phase %s opens at %s; joining opens when the phase before it has opened", phase, at.UTC().Format(time.RFC3339)),
		Extra:   map[string]any{"phase": phase, "opensAt": at.UTC().Format(time.RFC3339)}}
}

// choose is step 5 of the join: the queue customer enters at now, given
// the tier claim of their identity and the phase of their access code
// ("" without one). A customer may join the queues of the phases already
// open and of the next one to open (its pre-queue); among those, the first
// phase in order with a queue for them, and within it the first such queue.
// A queue that needs a code takes only a code of its phase, and a code
// only places its holder in such a queue.
func (s Settings) choose(now time.Time, tier, codePhase string) (string, error) {
	if len(s.Phases) == 0 {
		if codePhase != "" {
			return "", errCodeNotNeeded
		}
		return DefaultQueue, nil
	}
	// Phases up to and including the next to open may be joined.
	joinable := len(s.Phases)
	for i, p := range s.Phases {
		if p.OpensAt.After(now) {
			joinable = i + 1
			break
		}
	}
	fits := func(q config.PhaseQueue, code bool) bool {
		return q.AccessCode == code && (len(q.Tiers) == 0 || slices.Contains(q.Tiers, tier))
	}
	for i, p := range s.Phases {
		if codePhase != "" && p.Name != codePhase {
			continue
		}
		for _, q := range p.Queues {
			if fits(q, codePhase != "") {
				if i >= joinable {
					return "", phaseNotOpen(p.Name, p.OpensAt)
				}
				return q.Name, nil
			}
		}
		if codePhase != "" {
			break
		}
	}
	if codePhase != "" && !slices.ContainsFunc(s.Phases, func(p config.Phase) bool { return p.Name == codePhase }) {
		return "", errCodeInvalid
	}
	return "", errNotEligible
}
