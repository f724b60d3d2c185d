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

package tickets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/identity"
)

func emailToken(t testing.TB, customer, email string) string {
	t.Helper()
	return identity.NewHS256Signer(secret, issuer, aud).SignTier(customer, "email", email, time.Minute)
}

func transferTo(t testing.TB, base, tok, ticketID string, rcpt Recipient) (int, map[string]any) {
	t.Helper()
	st, body := gateDo(t, "POST", base+"/tickets/"+ticketID+"/transfers", tok, rcpt)
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("transfer answer %d %s: %v", st, body, err)
	}
	if e, ok := out["error"].(map[string]any); ok {
		out = e
	}
	return st, out
}

func heldTickets(t testing.TB, base, tok string) map[string]Ticket {
	t.Helper()
	st, body := gateDo(t, "GET", base+"/tickets", tok, nil)
	var out struct{ Tickets []Ticket }
	if err := json.Unmarshal(body, &out); st != 200 || err != nil {
		t.Fatalf("GET /tickets: %d %s %v", st, body, err)
	}
	m := map[string]Ticket{}
	for _, tk := range out.Tickets {
		m[tk.TicketID] = tk
	}
	return m
}

// A ticket changes hands twice, by customer id and then by verified email:
// each time the previous code is refused at the gate and the new one
// admits; the history is kept; the limit and bad requests are refused.
func TestTransferRevokesOldCode(t *testing.T) {
	g := newGateService(t, 1)
	buyer := order(1, 2).CustomerID
	tk := g.codes(t, 1)[0]
	gate := credential(t, eventID, "north")
	buyerTok := token(t, buyer)

	for _, c := range []struct {
		name string
		tok  string
		body any
		st   int
		code string
	}{
		{"no token", "", Recipient{CustomerID: "x"}, 401, "unauthorized"},
		{"not the holder", token(t, "stranger"), Recipient{CustomerID: "x"}, 404, "not_found"},
		{"no recipient", buyerTok, Recipient{}, 400, "bad_recipient"},
		{"bad address", buyerTok, Recipient{Email: "Friend <f@example.com>"}, 400, "bad_recipient"},
		{"to oneself", buyerTok, Recipient{CustomerID: buyer}, 400, "self_transfer"},
	} {
		st, body := gateDo(t, "POST", g.base+"/tickets/"+tk.TicketID+"/transfers", c.tok, c.body)
		var e struct{ Error struct{ Code string } }
		_ = json.Unmarshal(body, &e)
		if st != c.st || e.Error.Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, st, body, c.st, c.code)
		}
	}

	st, a := transferTo(t, g.base, buyerTok, tk.TicketID, Recipient{CustomerID: "friend-1"})
	if st != http.StatusCreated || a["generation"] != 1.0 || a["code"] != nil {
		t.Fatalf("first transfer: %d %v, want 201 generation 1 without the new code", st, a)
	}
	if st, a := scanAt(t, g.base, gate, tk.Code); st != http.StatusGone || a["code"] != Revoked {
		t.Errorf("old code after transfer: %d %v, want 410 revoked", st, a)
	}
	friendTok := token(t, "friend-1")
	got, ok := heldTickets(t, g.base, friendTok)[tk.TicketID]
	if !ok || got.Generation != 1 || got.Code == tk.Code || got.QR == "" {
		t.Fatalf("recipient's tickets: %+v", got)
	}
	if _, ok := heldTickets(t, g.base, buyerTok)[tk.TicketID]; ok {
		t.Error("the giver still lists the ticket")
	}
	st, body := gateDo(t, "GET", g.base+"/orders/"+tk.OrderID+"/tickets", buyerTok, nil)
	var ot struct {
		Tickets     []Ticket
		Transferred []map[string]string
	}
	if err := json.Unmarshal(body, &ot); st != 200 || err != nil || len(ot.Tickets) != 1 || len(ot.Transferred) != 1 || ot.Transferred[0]["ticketId"] != tk.TicketID {
		t.Errorf("buyer's order page: %d %s", st, body)
	}

	// On by email: the holder is whoever signs in with that address.
	if st, a := transferTo(t, g.base, friendTok, tk.TicketID, Recipient{Email: "pal@example.com"}); st != http.StatusCreated || a["generation"] != 2.0 {
		t.Fatalf("second transfer: %d %v", st, a)
	}
	palTok := emailToken(t, "pal-7", "Pal@Example.com")
	final, ok := heldTickets(t, g.base, palTok)[tk.TicketID]
	if !ok || final.Generation != 2 {
		t.Fatalf("tickets of the address: %+v", final)
	}
	if len(heldTickets(t, g.base, emailToken(t, "pal-8", "other@example.com"))) != 0 {
		t.Error("another address sees the ticket")
	}
	if st, a := scanAt(t, g.base, gate, got.Code); st != http.StatusGone || a["code"] != Revoked {
		t.Errorf("generation-1 code: %d %v, want 410 revoked", st, a)
	}
	// The limit (2) is reached.
	if st, a := transferTo(t, g.base, palTok, tk.TicketID, Recipient{CustomerID: "friend-3"}); st != http.StatusConflict || a["code"] != "transfer_limit" {
		t.Errorf("third transfer: %d %v, want 409 transfer_limit", st, a)
	}
	st, body = gateDo(t, "GET", g.base+"/tickets/"+tk.TicketID+"/transfers", buyerTok, nil)
	var hist struct{ Transfers []TransferRecord }
	if err := json.Unmarshal(body, &hist); st != 200 || err != nil || len(hist.Transfers) != 2 ||
		hist.Transfers[0].From != buyer || hist.Transfers[0].ToCustomer != "friend-1" || hist.Transfers[1].ToEmail != "pal@example.com" {
		t.Errorf("history: %d %s", st, body)
	}
	if st, a := scanAt(t, g.base, gate, final.Code); st != http.StatusOK || a["result"] != Admitted {
		t.Errorf("current code: %d %v, want admitted", st, a)
	}
	// A used ticket does not change hands; nor does one after the cut-off.
	other := g.codes(t, 1)[1]
	if st, _ := scanAt(t, g.base, gate, other.Code); st != 200 {
		t.Fatal("scan")
	}
	if st, a := transferTo(t, g.base, buyerTok, other.TicketID, Recipient{CustomerID: "friend-4"}); st != http.StatusConflict || a["code"] != "already_used" {
		t.Errorf("transfer of a used ticket: %d %v, want 409 already_used", st, a)
	}
	rules := TransferRules{Max: 3, Cutoff: time.Hour, StartsAt: time.Now().Add(30 * time.Minute)}
	if _, err := TransferTicket(context.Background(), g.pool, g.svc.keys, rules, time.Now(), other.TicketID, Holder{CustomerID: buyer}, Recipient{CustomerID: "x"}, nil); !errors.Is(err, ErrTransferClosed) {
		t.Errorf("transfer 30 min before a 1 h cut-off: %v, want ErrTransferClosed", err)
	}
}

// A transfer and a scan of the old code race, many times over: never do
// both succeed (the old code admitting someone while the ticket changes
// hands would let two people in).
func TestTransferRacesCheckIn(t *testing.T) {
	const rounds = 30
	orders := make([]int, rounds)
	for i := range orders {
		orders[i] = i + 1
	}
	g := newGateService(t, orders...)
	gate := credential(t, eventID, "north")
	bothWon, transfers, admissions := 0, 0, 0
	for i := range rounds {
		tk := g.codes(t, i+1)[0]
		start := make(chan struct{})
		var wg sync.WaitGroup
		var scanStatus int
		var terr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			scanStatus, _ = scanAt(t, g.base, gate, tk.Code)
		}()
		go func() {
			defer wg.Done()
			<-start
			_, terr = TransferTicket(context.Background(), g.pool, g.svc.keys, g.svc.transfers, time.Now(), tk.TicketID,
				Holder{CustomerID: tk.CustomerID}, Recipient{CustomerID: fmt.Sprintf("r-%d", i)}, nil)
		}()
		close(start)
		wg.Wait()
		if terr != nil && !errors.Is(terr, ErrAlreadyCheckedIn) {
			t.Fatalf("round %d: transfer: %v", i, terr)
		}
		if scanStatus == 200 {
			admissions++
		}
		if terr == nil {
			transfers++
		}
		if scanStatus == 200 && terr == nil {
			bothWon++
		}
	}
	t.Logf("%d rounds: %d admissions of the old code, %d transfers", rounds, admissions, transfers)
	if bothWon != 0 || admissions+transfers != rounds {
		t.Errorf("%d rounds where both the old code admitted and the transfer went through; %d+%d outcomes, want %d", bothWon, admissions, transfers, rounds)
	}
}
