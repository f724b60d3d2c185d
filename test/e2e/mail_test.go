//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// withMail sends the sale's ticket mails to the test's SMTP server
// (Mailpit on the host, at smtp on the node IP), in the clear: it is on
// the node's own network.
func withMail(t *testing.T, te *ticketsv1alpha1.TicketEvent, smtp string) {
	t.Helper()
	host, port, err := net.SplitHostPort(smtp)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	te.Spec.Delivery.Mail = &ticketsv1alpha1.Mail{
		SMTP: ticketsv1alpha1.SMTP{Host: host, Port: int32(p), TLS: ticketsv1alpha1.SMTPNoTLS},
		From: "tickets@tickets.example",
	}
}

// checkMails: every paid order with a buyer's address has its one mail in
// the SMTP server, by Message-ID, none twice, and the TicketEvent's
// status counts them sent.
func checkMails(t *testing.T, c *cli, te *ticketsv1alpha1.TicketEvent, svc services) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, svc.databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var paid int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM ticket_order WHERE event_id = $1 AND status = 'PAID' AND email IS NOT NULL`,
		te.Spec.EventID).Scan(&paid); err != nil {
		t.Fatal(err)
	}
	if paid == 0 {
		t.Fatal("no paid order carries the buyer's address: the crowd's identity tokens reached no hold")
	}
	took := eventually(t, fmt.Sprintf("%d ticket mails in the SMTP server", paid), 3*time.Minute, func() error {
		n, err := svc.mail.Count(ctx)
		if err != nil {
			return err
		}
		if n < paid {
			return fmt.Errorf("%d of %d", n, paid)
		}
		return nil
	})
	msgs, err := svc.mail.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		if ids[m.MessageID] {
			t.Errorf("mail %s delivered twice", m.MessageID)
		}
		ids[m.MessageID] = true
	}
	if len(msgs) != paid {
		t.Errorf("%d mails for %d paid orders with an address", len(msgs), paid)
	}
	eventually(t, "status.tickets.emailsSent", 2*time.Minute, func() error {
		var got ticketsv1alpha1.TicketEvent
		c.getJSON(&got, "-n", saleNS, "get", "te", te.Name, "-o", "json")
		if got.Status.Tickets == nil || got.Status.Tickets.EmailsSent != int64(paid) {
			return fmt.Errorf("status.tickets %+v, want %d emails sent", got.Status.Tickets, paid)
		}
		return nil
	})
	t.Logf("ticket mails: %d, one per paid order, in the SMTP server %v after the audit; status.tickets counts them", paid, took.Round(time.Second))
}
