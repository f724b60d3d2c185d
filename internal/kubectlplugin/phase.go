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

package kubectlplugin

import (
	"sync"
	"time"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// Phase is where a sale stands, as the plugin derives it from a TicketEvent.
type Phase string

// Phases of a sale.
const (
	// PhaseScheduled: spec.salesOpenAt has not come yet; people joining form the pre-queue.
	PhaseScheduled Phase = "Scheduled"
	// PhaseOpen: sales opened and admission runs.
	PhaseOpen Phase = "Open"
	// PhasePaused: spec.admission.paused holds admission back; joins are still accepted.
	PhasePaused Phase = "Paused"
	// PhaseSoldOut: the queue reported every seat sold (status.sale.soldOut).
	PhaseSoldOut Phase = "SoldOut"
)

// PhaseOf derives the phase of te at now; the first rule that holds wins.
// Sold out is final whatever else is set, and a pause shows even before the
// opening, since it will hold admission back once sales open. A new phase
// (a presale, say) is one more case here.
func PhaseOf(te *ticketsv1alpha1.TicketEvent, now time.Time) Phase {
	switch {
	case te.Status.Sale != nil && te.Status.Sale.SoldOut:
		return PhaseSoldOut
	case te.Spec.Admission.Paused:
		return PhasePaused
	case now.Before(te.Spec.SalesOpenAt.Time):
		return PhaseScheduled
	default:
		return PhaseOpen
	}
}

// QueueETA is how long admitting everyone now waiting takes at
// ratePerSecond, in whole seconds rounded up. It is a lower bound: the
// admitter also stops at maxActive and at the seats left. ok is false when
// there is no end to give: nobody waits, the rate is 0, or the phase admits
// nobody (paused, sold out).
func QueueETA(waiting int64, ratePerSecond int32, phase Phase) (eta time.Duration, ok bool) {
	if waiting <= 0 || ratePerSecond <= 0 || phase == PhasePaused || phase == PhaseSoldOut {
		return 0, false
	}
	rate := int64(ratePerSecond)
	return time.Duration((waiting+rate-1)/rate) * time.Second, true
}

// defaultAdmission holds the admission defaults of the queue's config tags,
// which the CRD's +kubebuilder:default markers match
// (controllers/render's TestCRDDefaultsMatchConfig).
var defaultAdmission = sync.OnceValue(config.DefaultsOf[config.Admission])

// RatePerSecond is the admission rate of te: spec.admission.ratePerSecond,
// or the default when it is unset (an object stored before the CRD
// defaulted it).
func RatePerSecond(te *ticketsv1alpha1.TicketEvent) int32 {
	if r := te.Spec.Admission.RatePerSecond; r > 0 {
		return r
	}
	return int32(defaultAdmission().RatePerSecond)
}
