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

package demo

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// TestShortSaleWithBots runs a small sale with bots at a tenth of the
// identities: the people see no 429 and no proof-of-work refusal, the
// bots' floods are refused by the limits, and the report's shares add up
// to the records.
func TestShortSaleWithBots(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	requireServers(t)
	o := DefaultOptions()
	o.Phases = false // one general queue: this sale tests something else
	o.Customers, o.Bots, o.Seats, o.MaxActive, o.AdmitRate = 1350, 150, 400, 150, 100
	o.OpensIn, o.HoldTTL, o.Seed = 4*time.Second, 8*time.Second, 42
	o.Profile = "prequeue=0.05,joinwindow=3s"
	// A bot sends its join five times back to back, a person once: three
	// joins an identity refuses every bot's flood however fast a loaded
	// machine runs it (the poll limit's refusals depend on the bots' poll
	// rate, which a loaded machine cut below it in CI), and leaves the bots'
	// polls, holds and payments as they are, so they still meet the
	// card's limit.
	o.JoinLimit = 3
	o.Binary, o.Deadline = testenv.BuildWorkloads(t), 4*time.Minute
	var out bytes.Buffer
	o.Out = &out
	rep, err := Run(context.Background(), o)
	t.Log(out.String())
	// The audit's problems include the bots buying more than their share
	// of identities in seats (BotShares.check).
	if err != nil {
		t.Fatal(err)
	}
	b := rep.Bots
	if b == nil || b.Crowd == nil {
		t.Fatal("no bots in the report")
	}
	if b.Crowd.Bots.Identities != 150 || b.Crowd.People.Identities != 1350 {
		t.Fatalf("identities %+v", b.Crowd)
	}
	if b.SeatsBots+b.SeatsPeople != rep.SeatsSold {
		t.Fatalf("seats by kind %d + %d, sold %d", b.SeatsBots, b.SeatsPeople, rep.SeatsSold)
	}
	if b.AdmittedBots+b.AdmittedPeople != int64(rep.Fairness.Admitted) {
		t.Fatalf("admissions by kind %d + %d, admitted %d", b.AdmittedBots, b.AdmittedPeople, rep.Fairness.Admitted)
	}
	var botLimited, peoplePow, cardLimited int64
	for _, r := range b.Crowd.Refused {
		switch {
		case r.Kind == "people" && r.Status == 429:
			t.Errorf("people got 429: %+v", r)
		case r.Kind == "people" && r.Reason == "pow_invalid":
			t.Errorf("people's proofs refused: %+v", r)
		case r.Kind == "people" && r.Reason == "pow_required":
			peoplePow += r.Count
		case r.Kind == "bots" && r.Status == 429:
			botLimited += r.Count
		case r.Kind == "bots" && r.Reason == "refunded: card_limit":
			cardLimited += r.Count
		}
	}
	if peoplePow == 0 {
		t.Error("the people were never asked for a proof of work")
	}
	if botLimited == 0 {
		t.Error("no bot request was rate limited")
	}
	// The bots share one card: booking refunds their payments past its limit.
	if cardLimited == 0 {
		t.Error("no bot payment was refused by the card's limit")
	}
	if per := float64(b.Crowd.Bots.Requests) / 150; per < 20 {
		t.Errorf("bots made %.1f requests each: not a flood", per)
	}
}
