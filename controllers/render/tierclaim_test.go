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
