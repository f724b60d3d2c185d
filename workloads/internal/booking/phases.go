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

package booking

import (
	"fmt"
	"slices"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// phaseRule is what a hold under one sale phase may take.
type phaseRule struct {
	name     string
	maxSeats int             // the phase's own limit, else the event's
	sections map[string]bool // nil: every section
}

// parsePhases reads booking's TICKETFAIR_PHASES (a JSON list of
// config.Phase; booking reads the names, seat limits and sections, and
// ignores the rest, the queue's business) into the rule of each phase.
// The rules of the list itself, and that no phase's limit exceeds the
// event's, maxSeats (the limit late payments are held to, in
// confirm_payment), are config.Booking's (Validate). sections, when not
// nil, are the seating's: a phase may sell only those.
func parsePhases(s string, maxSeats int, sections []string) (map[string]phaseRule, error) {
	ps, err := config.ParsePhases(s)
	if err != nil {
		return nil, config.Within("TICKETFAIR_PHASES", err)
	}
	out := make(map[string]phaseRule, len(ps))
	for i, p := range ps {
		r := phaseRule{name: p.Name, maxSeats: maxSeats}
		if p.MaxSeatsPerCustomer > 0 {
			r.maxSeats = min(p.MaxSeatsPerCustomer, maxSeats)
		}
		if len(p.Sections) > 0 {
			r.sections = make(map[string]bool, len(p.Sections))
			for j, sec := range p.Sections {
				if sections != nil && !slices.Contains(sections, sec) {
					return nil, &config.FieldError{Field: "TICKETFAIR_PHASES", Path: fmt.Sprintf("[%d].sections[%d]", i, j), Value: fmt.Sprintf("%q", sec), Rule: "not a section of the seating"}
				}
				r.sections[sec] = true
			}
		}
		out[p.Name] = r
	}
	return out, nil
}

// rule is the rule of a hold under phase: the event's limit and every
// section for a token without a phase (a sale without phases, or a token
// signed before the sale had them).
func (s *Store) rule(phase string) (phaseRule, error) {
	if phase == "" {
		return phaseRule{maxSeats: s.maxSeats}, nil
	}
	r, ok := s.phases[phase]
	if !ok {
		return phaseRule{}, &UnknownPhaseError{Phase: phase}
	}
	return r, nil
}

// sectionsRefused are the seats of sorted outside r's sections.
func (r phaseRule) sectionsRefused(sorted []string) []string {
	if r.sections == nil {
		return nil
	}
	var out []string
	for _, id := range sorted {
		if sec, _ := parseSeatID(id); !r.sections[sec] {
			out = append(out, id)
		}
	}
	return out
}

// allowedSections lists r's sections in order.
func (r phaseRule) allowedSections() []string {
	out := make([]string, 0, len(r.sections))
	for sec := range r.sections {
		out = append(out, sec)
	}
	slices.Sort(out)
	return out
}
