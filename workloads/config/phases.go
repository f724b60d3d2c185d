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

import "time"

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
