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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// The live path reads the TicketEvent through config.Queue.ApplyTicketEvent,
// the operator's mapping: what the spec leaves unset keeps the env/flag
// value, and a tick interval outside the CRD's 100ms to 1m is refused (the
// watch then keeps the settings it has) instead of being applied.
func TestSettingsFromTicketEventIsTheOperatorsMapping(t *testing.T) {
	base := config.DefaultsOf[config.Queue]()
	base.TickInterval = 250 * time.Millisecond
	opens := time.Date(2036, 7, 1, 10, 0, 0, 0, time.UTC)
	te := &v1alpha1.TicketEvent{Spec: v1alpha1.TicketEventSpec{SalesOpenAt: metav1.NewTime(opens),
		Admission: v1alpha1.Admission{MaxActive: 3, TickInterval: &metav1.Duration{}}}}
	s, err := settingsFromTicketEvent(base, te)
	if err != nil {
		t.Fatal(err)
	}
	if s.TickInterval != 250*time.Millisecond || s.MaxActive != 3 || !s.SalesOpenAt.Equal(opens) {
		t.Fatalf("settings %+v, salesOpenAt %v", s.Admission, s.SalesOpenAt)
	}
	te.Spec.Admission.TickInterval = &metav1.Duration{Duration: 10 * time.Millisecond}
	if _, err := settingsFromTicketEvent(base, te); err == nil || !strings.Contains(err.Error(), "spec.admission.tickInterval") {
		t.Fatalf("tick 10ms: %v", err)
	}
}
