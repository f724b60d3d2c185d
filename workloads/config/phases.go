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

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Phase is one sale phase of an event: from OpensAt, the people its queues
// accept are admitted. The queue reads the phases as JSON from
// Queue.Phases; the operator renders them from TicketEvent.spec.phases.
type Phase struct {
	Name string `json:"name"`
	// OpensAt and Queues are the queue's; booking's rendering leaves them
	// out (see the operator's bookingPhases).
	OpensAt time.Time    `json:"opensAt,omitzero"`
	Queues  []PhaseQueue `json:"queues,omitempty"`
	// MaxSeatsPerCustomer, when set, is the phase's own seat limit.
	MaxSeatsPerCustomer int `json:"maxSeatsPerCustomer,omitempty"`
	// Sections, when set, are the only sections the phase sells.
	Sections []string `json:"sections,omitempty"`
}

// PhaseQueue is one queue of a phase. A queue is named per event: a name
// listed by several phases is one line of people, open from the first of
// those phases, admitted with the weight of the latest open phase that
// lists it.
type PhaseQueue struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
	// Tiers are the identity token's tier values that may enter; empty:
	// anyone.
	Tiers []string `json:"tiers,omitempty"`
	// AccessCode: entry needs an access code issued for the phase.
	AccessCode bool `json:"accessCode,omitempty"`
}

// phaseName is what a phase or queue may be called: it is part of Redis
// keys, queueIds and access codes (the CRD's rule on phases[].name).
var phaseName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// ParsePhases reads phases as the queue and booking get them (a JSON list
// of Phase, "" for none) and checks the rules both keep to (CheckPhases).
func ParsePhases(s string) ([]Phase, error) {
	if s == "" {
		return nil, nil
	}
	var ps []Phase
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ps); err != nil {
		return nil, &FieldError{Rule: "not a JSON list of phases: " + err.Error()}
	}
	return ps, CheckPhases(ps, false)
}

// CheckPhases checks the rules of a sale's phases: names, queues, weights
// and seat limits; with queue, also what the queue needs (booking's
// rendering leaves it out): every phase opens, after the one before it,
// with at least one queue. A broken rule is a *FieldError whose Path is
// inside the list ("[1].queues[0].weight"); Within names the list.
func CheckPhases(ps []Phase, queue bool) error {
	var errs []error
	bad := func(path string, v any, rule string) {
		if s, ok := v.(string); ok {
			v = fmt.Sprintf("%q", s)
		}
		errs = append(errs, &FieldError{Path: path, Value: v, Rule: rule})
	}
	names := map[string]bool{}
	for i, p := range ps {
		at := fmt.Sprintf("[%d]", i)
		if !phaseName.MatchString(p.Name) {
			bad(at+".name", p.Name, "must be lower-case letters, digits and '-', at most 32")
		} else if names[p.Name] {
			bad(at+".name", p.Name, "named twice")
		}
		names[p.Name] = true
		if queue {
			switch {
			case p.OpensAt.IsZero():
				bad(at+".opensAt", nil, "required: when the phase's queues open")
			case i > 0 && !p.OpensAt.After(ps[i-1].OpensAt):
				bad(at+".opensAt", p.OpensAt.Format(time.RFC3339), fmt.Sprintf("must be after [%d].opensAt", i-1))
			}
			if len(p.Queues) == 0 {
				bad(at+".queues", nil, "at least one queue")
			}
		}
		if p.MaxSeatsPerCustomer < 0 {
			bad(at+".maxSeatsPerCustomer", p.MaxSeatsPerCustomer, "must be at least 1 (unset: the event's limit)")
		}
		for j, sec := range p.Sections {
			if !venueName.MatchString(sec) {
				bad(fmt.Sprintf("%s.sections[%d]", at, j), sec, "must be a section's name, 1 to 16 letters or digits")
			}
		}
		seen := map[string]bool{}
		for j, q := range p.Queues {
			qat := fmt.Sprintf("%s.queues[%d]", at, j)
			if !phaseName.MatchString(q.Name) {
				bad(qat+".name", q.Name, "must be lower-case letters, digits and '-', at most 32")
			} else if seen[q.Name] {
				bad(qat+".name", q.Name, "listed twice in the phase")
			}
			seen[q.Name] = true
			if q.Weight < 1 {
				bad(qat+".weight", q.Weight, "must be at least 1")
			}
		}
	}
	return errors.Join(errs...)
}
