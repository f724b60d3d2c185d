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

package loadtest

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

// TestCodesCSV: the codes `ticketfair access-codes` writes are the crowd's,
// and their hashes are those the queue stores on redeeming them.
func TestCodesCSV(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	var b bytes.Buffer
	if err := accesscode.WriteCSV(&b, key, 1, "presale", 1, 3); err != nil {
		t.Fatal(err)
	}
	codes, err := ReadCodesCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	issued := IssueCodes(key, 1, "presale", 3)
	if strings.Join(codes, ",") != strings.Join(issued, ",") {
		t.Fatalf("CSV %v, issued %v", codes, issued)
	}
	for i, h := range codeHashes(codes) {
		c, err := accesscode.Check(key, 1, codes[i])
		if err != nil || accesscode.Hash(c) != h {
			t.Fatalf("code %q: hash %s, the queue's %s (%v)", codes[i], h, accesscode.Hash(c), err)
		}
	}
	if _, err := ReadCodesCSV(strings.NewReader("serial\n1\n")); err == nil {
		t.Fatal("a CSV without a code column was read")
	}
}

// TestMemberToken: a member's identity token carries the member tier in
// the services' tier claim, as the queue's verifier reads it; a person
// who is not a member has no tier.
func TestMemberToken(t *testing.T) {
	idc := config.DefaultsOf[config.Identity]()
	idc.IdentityHMACSecret = "a-secret-of-enough-length-for-hs256"
	v, err := identity.New(context.Background(), idc)
	if err != nil {
		t.Fatal(err)
	}
	cr := &crowd{cfg: Config{TierClaim: idc.TierClaim, MemberTier: DefaultMemberTier},
		signer: identity.NewHS256Signer(idc.IdentityHMACSecret, idc.IdentityIssuer, idc.IdentityAudience)}
	for _, c := range []struct {
		member bool
		tier   string
	}{{true, DefaultMemberTier}, {false, ""}} {
		r, _ := http.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", "Bearer "+cr.identityToken(&customer{id: 7, member: c.member}))
		id, err := v.Identify(r)
		if err != nil || id.Subject != "cust-7" || id.Tier != c.tier {
			t.Fatalf("member %v: %+v, %v", c.member, id, err)
		}
	}
}

// TestQueueView: a person in a sale with phases reads their own queue's
// figures; without phases, the whole state.
func TestQueueView(t *testing.T) {
	at := time.Now().Add(time.Minute)
	st := queueapi.State{Watermark: 1, Waiting: 9, Queues: []queueapi.QueueState{
		{Name: "members", Open: true, Watermark: 50, Waiting: 3, AdmissionRate: 7, Samples: [][2]int64{{0, 51}}},
		{Name: "general", OpensAt: &at, Waiting: 6},
	}}
	cr := &crowd{}
	m, g := &customer{qi: cr.phases.queueIndex("members")}, &customer{qi: cr.phases.queueIndex("general")}
	if v := cr.view(st, m); !v.SalesOpen || v.Watermark != 50 || v.Waiting != 3 || v.AdmissionRate != 7 || v.Ahead(60) != 3 {
		t.Fatalf("members' view %+v", v)
	}
	if v := cr.view(st, g); v.SalesOpen || v.SalesOpenAt == nil || !v.SalesOpenAt.Equal(at) || v.Waiting != 6 {
		t.Fatalf("general's view %+v", v)
	}
	if v := cr.view(st, &customer{}); v.Watermark != 1 || v.Waiting != 9 {
		t.Fatalf("a sale without phases: %+v", v)
	}
	// phase_not_open names the opening to join again at.
	open, ok := phaseNotOpen(result{status: 403, body: []byte(`{"error":{"code":"phase_not_open","message":"m","phase":"general","opensAt":"2026-07-01T10:00:00Z"}}`)})
	if !ok || !open.Equal(time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("opensAt %v %v", open, ok)
	}
	if _, ok := phaseNotOpen(result{status: 403, body: []byte(`{"error":{"code":"not_eligible"}}`)}); ok {
		t.Fatal("not_eligible read as phase_not_open")
	}
}
