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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/qrcode/qrcodetest"
	"github.com/ticketfair/ticketfair/workloads/internal/ticketmail"
)

// The service mails each paid order once to the buyer's address, however
// often Kafka delivers its message (the same outbox id twice, then a
// replay under another), a buyer without an address gets no mail and
// still has tickets, and a transfer by email mails the new code, which
// the gate admits, to the recipient.
func TestServiceMailsEachOrderOnce(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	mp := testenv.Mailpit(t)
	const orders = 12
	for i := range orders {
		o := order(i, 1+i%3)
		if i != 0 {
			o.Email = fmt.Sprintf("buyer-%d@example.com", i)
		}
		produce(t, brokers, int64(i+1), o)
		if i%4 == 1 {
			produce(t, brokers, int64(i+1), o)    // redelivered
			produce(t, brokers, int64(i+1000), o) // replayed under a new outbox id
		}
	}
	cfg := testConfig(t, url, brokers)
	cfg.Mail = config.DefaultsOf[config.Mail]()
	cfg.RetryMin = 50 * time.Millisecond
	cfg.SMTPHost, cfg.SMTPPort, cfg.SMTPTLS, cfg.From = mp.SMTPHost, mp.SMTPPort, "none", "tickets@tickets.example"
	cfg.EventName, cfg.Venue, cfg.StartsAt = "Test Concert", "Test Hall", time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339)
	cfg.GateSecret, cfg.EmailClaim, cfg.MaxTransfers = gateSecret, "email", 1
	s := startRun(t, cfg)
	ctx := context.Background()
	testenv.WaitFor(t, 60*time.Second, "a mail per order with an address", func() bool {
		n, err := mp.Count(ctx)
		return err == nil && n >= orders-1
	})
	// The duplicates had their chance to mail twice.
	testenv.WaitFor(t, 30*time.Second, "every message consumed", func() bool {
		r := results(t, s.base)
		return r["issued"]+r["duplicate"] >= orders+6
	})
	msgs, err := mp.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for _, m := range msgs {
		byID[m.MessageID]++
	}
	for i := 1; i < orders; i++ {
		id := ticketmail.OrderKey(order(i, 1).OrderID) + "@tickets.example"
		if byID[id] != 1 {
			t.Errorf("order %d: %d mails with Message-ID %s, want 1", i, byID[id], id)
		}
	}
	if len(msgs) != orders-1 {
		t.Errorf("%d mails, want %d (the order without an address has none)", len(msgs), orders-1)
	}
	if ts, err := ForOrder(ctx, pool, order(0, 1).OrderID); err != nil || len(ts) != 1 {
		t.Errorf("the buyer without an address: %d tickets (%v), want 1", len(ts), err)
	}

	// A transfer by email mails the new code to the recipient.
	tk, err := ForOrder(ctx, pool, order(2, 3).OrderID)
	if err != nil || len(tk) != 3 {
		t.Fatalf("tickets of order 2: %v %v", tk, err)
	}
	st, body := gateDo(t, "POST", s.base+"/tickets/"+tk[0].TicketID+"/transfers", token(t, tk[0].CustomerID), Recipient{Email: "friend@example.com"})
	if st != 201 {
		t.Fatalf("transfer: %d %s", st, body)
	}
	var transferMail string
	testenv.WaitFor(t, 30*time.Second, "the transfer's mail", func() bool {
		msgs, err := mp.Messages(ctx)
		if err != nil {
			return false
		}
		for _, m := range msgs {
			if m.MessageID == ticketmail.TransferKey(tk[0].TicketID, 1)+"@tickets.example" {
				transferMail = m.ID
				return true
			}
		}
		return false
	})
	msg, err := mp.Message(ctx, transferMail)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.To) != 1 || msg.To[0].Address != "friend@example.com" {
		t.Errorf("transfer mail to %v", msg.To)
	}
	var qrs []string
	for _, p := range msg.Inline {
		if strings.HasPrefix(p.ContentType, "image/png") {
			png, err := mp.Part(ctx, msg.ID, p.PartID)
			if err != nil {
				t.Fatal(err)
			}
			qrs = append(qrs, qrcodetest.Decode(t, png))
		}
	}
	if len(qrs) != 1 || qrs[0] == tk[0].Code {
		t.Fatalf("transfer mail QR codes %d (the old code: %v)", len(qrs), len(qrs) == 1 && qrs[0] == tk[0].Code)
	}
	if st, a := scanAt(t, s.base, credential(t, eventID, "north"), qrs[0]); st != 200 || a["result"] != Admitted {
		t.Errorf("the mailed new code at the gate: %d %v", st, a)
	}
	if st, a := scanAt(t, s.base, credential(t, eventID, "north"), tk[0].Code); st != 410 {
		t.Errorf("the old code at the gate: %d %v, want 410", st, a)
	}
}
