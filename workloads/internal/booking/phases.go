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
	"encoding/json"
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
// A phase's limit may not exceed the event's, maxSeats: the event's limit
// is what late payments are held to (confirm_payment). sections, when not
// nil, are the seating's: a phase may sell only those.
func parsePhases(s string, maxSeats int, sections []string) (map[string]phaseRule, error) {
	if s == "" {
		return nil, nil
	}
	var ps []config.Phase
	if err := json.Unmarshal([]byte(s), &ps); err != nil {
		return nil, fmt.Errorf("phases (TICKETFAIR_PHASES): %w", err)
	}
	out := make(map[string]phaseRule, len(ps))
	for i, p := range ps {
		if p.Name == "" {
			return nil, fmt.Errorf("phases[%d]: no name", i)
		}
		if _, dup := out[p.Name]; dup {
			return nil, fmt.Errorf("phases[%d].name %q: named twice", i, p.Name)
		}
		r := phaseRule{name: p.Name, maxSeats: maxSeats}
		switch {
		case p.MaxSeatsPerCustomer < 0 || p.MaxSeatsPerCustomer > maxSeats:
			return nil, fmt.Errorf("phases[%d].maxSeatsPerCustomer %d: must be 1 to the event's limit %d", i, p.MaxSeatsPerCustomer, maxSeats)
		case p.MaxSeatsPerCustomer > 0:
			r.maxSeats = p.MaxSeatsPerCustomer
		}
		if len(p.Sections) > 0 {
			r.sections = make(map[string]bool, len(p.Sections))
			for _, sec := range p.Sections {
				if !validSectionName(sec) || sections != nil && !slices.Contains(sections, sec) {
					return nil, fmt.Errorf("phases[%d].sections: %q is not a section of the seating", i, sec)
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
