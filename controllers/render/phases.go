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

package render

import (
	"encoding/json"
	"fmt"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// KeyAccessCodeKey is the generated Secret's key of the access codes'
// HMAC key (`ticketfair access-codes` issues codes with it).
const KeyAccessCodeKey = "access-code-key"

// bookingPhases renders spec.phases as booking's TICKETFAIR_PHASES: what a
// hold follows, each phase's name, seat limit and sections ("" without
// phases). The queue's part (openings, queues, weights) is left out, so
// that a live change of it does not roll booking's pods; a change of a
// limit or of sections does, and the new pods apply it.
func bookingPhases(src []ticketsv1alpha1.SalePhase) (string, error) {
	if len(src) == 0 {
		return "", nil
	}
	out := make([]config.Phase, 0, len(src))
	for _, p := range src {
		ph := config.Phase{Name: p.Name, Sections: p.Sections}
		if p.MaxSeatsPerCustomer != nil {
			ph.MaxSeatsPerCustomer = int(*p.MaxSeatsPerCustomer)
		}
		out = append(out, ph)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("booking phases: %w", err)
	}
	return string(b), nil
}
