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
	"testing"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// spec.identity.tierClaim reaches the identity configuration of every
// workload that verifies identity tokens; unset, they keep their default.
func TestTierClaimRendered(t *testing.T) {
	tierClaim := func(te *ticketsv1alpha1.TicketEvent, w Component) string {
		t.Helper()
		o, err := Render(te, Options{Image: "ticketfair:1.0"})
		if err != nil {
			t.Fatal(err)
		}
		var id config.Identity
		data := o.ConfigMaps[w].Data
		if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := data[k]; return v, ok }, &id); err != nil {
			t.Fatal(err)
		}
		return id.TierClaim
	}
	te := event()
	var def config.Identity
	if err := config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &def); err != nil {
		t.Fatal(err)
	}
	for _, w := range []Component{Queue, Booking, Tickets} {
		if got := tierClaim(te, w); got != def.TierClaim {
			t.Errorf("%s, unset: tier claim %q, want the default %q", w, got, def.TierClaim)
		}
	}
	te.Spec.Identity.TierClaim = "membership"
	for _, w := range []Component{Queue, Booking, Tickets} {
		if got := tierClaim(te, w); got != "membership" {
			t.Errorf("%s: tier claim %q, want membership", w, got)
		}
	}
}
