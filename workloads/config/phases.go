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
