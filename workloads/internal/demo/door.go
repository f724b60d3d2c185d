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
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/gatecred"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/ticketmail"
)

// After the sale, the door: every paid order's mail must be in the
// mailbox of the real SMTP server, once; then buyers are scanned at
// several gates from their QR images (decoded by zbarimg, an independent
// decoder), some scan twice, some hand their ticket on first, and the
// gates must admit each ticket once and refuse what they must.

// DoorReport is the mail and the gates' part of the report.
type DoorReport struct {
	// MailboxURL is the SMTP server's web view of the sale's mails.
	MailboxURL string `json:"mailboxUrl"`
	// MailsExpected is the paid orders with a buyer's address; MailsInBox
	// the messages the SMTP server holds; MailsMissing expected orders
	// whose Message-ID it lacks, MailDuplicates messages beyond one per
	// Message-ID.
	MailsExpected  int64   `json:"mailsExpected"`
	MailsInBox     int     `json:"mailsInBox"`
	MailsMissing   int     `json:"mailsMissing"`
	MailDuplicates int     `json:"mailDuplicates"`
	MailSeconds    float64 `json:"mailSecondsAfterSale"` // until the last expected mail was in
	// MailsCaughtByKill are the duplicates of mails whose sender was
	// SIGKILLed between the server's 250 and the sent mark (caughtByKill);
	// TicketsKills counts the kills of the tickets process. SMTP has no transaction with the database: a
	// mail the server accepted just before its sender died cannot be
	// marked sent, and goes again (with the same Message-ID, which mail
	// clients merge) when its lease ends. At most one mail per SMTP worker
	// can be so caught; any other duplicate is a bug.
	MailsCaughtByKill int `json:"mailsCaughtByKill"`
	TicketsKills      int `json:"ticketsKills"`

	Gates      int `json:"gates"`
	QRDecoded  int `json:"qrDecoded"`  // images zbarimg read back
	QRMismatch int `json:"qrMismatch"` // decoded text that is not the ticket's code
	Admitted   int `json:"admitted"`
	// AdmittedTwice counts tickets that got two admitted answers: must be 0.
	AdmittedTwice int `json:"admittedTwice"`
	// Second scans of admitted tickets at another gate, and how many were
	// refused as already used.
	Rescanned, RescansRefused int
	// Tickets handed on before the doors: their old codes must be refused
	// as revoked, their new ones admit.
	Transferred, OldCodesRefused, NewCodesAdmitted int
	CheckinRows                                    int64 `json:"checkinRows"`
}

// mailDomain is the domain of the sale's From address, which names the
// mails' Message-IDs.
const mailDomain = "tickets.example"

// doorGates are the gates the buyers queue at.
var doorGates = []string{"north", "east", "south", "west"}

// doorScans bounds the scanned buyers, so a sale of millions checks its
// door in seconds.
const doorScans = 800

// door runs the mail check and the gates after the sale.
func (s *sale) door(ctx context.Context, rep *Report) error {
	d := &DoorReport{MailboxURL: s.mailpit.APIURL, Gates: len(doorGates)}
	rep.Door = d
	conn, err := pgx.Connect(ctx, s.db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if err := s.checkMails(ctx, conn, d); err != nil {
		return fmt.Errorf("mails: %w", err)
	}
	return s.scanAtGates(ctx, conn, d)
}

// caughtByKill tells whether a mail's copies (the times the SMTP server
// stored them) are those of a sender SIGKILLed between the server's 250
// and the sent mark: the first copy while a killed process held the mail's
// lease (claimed at most a lease before the kill, stored at most a moment
// after it, when its last line was on the wire), and the next one only
// when that lease ended. A copy sent again sooner came from a live sender:
// a bug.
func caughtByKill(copies []time.Time, kills []time.Time) bool {
	slices.SortFunc(copies, time.Time.Compare)
	first, second := copies[0], copies[1]
	for _, k := range kills {
		if first.After(k.Add(-ticketmail.Lease)) && first.Before(k.Add(time.Second)) && second.Sub(first) >= ticketmail.Lease-leaseSlack {
			return true
		}
	}
	return false
}

// leaseSlack is how much of the lease may have passed between the claim
// and the first copy: a batch's sending time.
const leaseSlack = 30 * time.Second

// checkMails waits for the mails of every paid order with an address and
// counts them from the SMTP server.
func (s *sale) checkMails(ctx context.Context, conn *pgx.Conn, d *DoorReport) error {
	rows, err := conn.Query(ctx, `SELECT id::text FROM ticket_order WHERE event_id = $1 AND status = 'PAID' AND email IS NOT NULL`, s.o.EventID)
	if err != nil {
		return err
	}
	orders, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	d.MailsExpected = int64(len(orders))
	start := time.Now()
	// A killed tickets process's claimed mails come back after the
	// mailer's lease (2 min).
	deadline := start.Add(4 * time.Minute)
	for {
		// Count Message-IDs, not messages: a mail that went twice must not
		// stand in for one that has not gone yet.
		n, err := s.mailpit.Count(ctx)
		if err != nil {
			return err
		}
		if int64(n) >= d.MailsExpected {
			if err := s.countMails(ctx, orders, d); err != nil || d.MailsMissing == 0 {
				d.MailSeconds = time.Since(start).Seconds()
				return err
			}
		}
		if time.Now().After(deadline) {
			d.MailSeconds = time.Since(start).Seconds()
			return s.countMails(ctx, orders, d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// countMails fills d's mailbox figures from the SMTP server's messages.
func (s *sale) countMails(ctx context.Context, orders []string, d *DoorReport) error {
	msgs, err := s.mailpit.Messages(ctx)
	if err != nil {
		return err
	}
	d.MailsInBox, d.MailDuplicates, d.MailsMissing, d.MailsCaughtByKill = len(msgs), 0, 0, 0
	kills := s.faults.killsOf("tickets")
	d.TicketsKills = len(kills)
	copies := map[string][]time.Time{}
	for _, m := range msgs {
		copies[m.MessageID] = append(copies[m.MessageID], m.Created)
	}
	for _, at := range copies {
		if len(at) > 1 {
			d.MailDuplicates += len(at) - 1
			if caughtByKill(at, kills) {
				d.MailsCaughtByKill += len(at) - 1
			}
		}
	}
	seen := func(id string) bool { return len(copies[id]) > 0 }
	for _, o := range orders {
		if !seen(ticketmail.OrderKey(o) + "@" + mailDomain) {
			d.MailsMissing++
		}
	}
	return nil
}

// doorTicket is one scanned buyer's ticket.
type doorTicket struct {
	ticketID, orderID, customer, code string
	png                               []byte
	decoded                           string
}

func (s *sale) scanAtGates(ctx context.Context, conn *pgx.Conn, d *DoorReport) error {
	rows, err := conn.Query(ctx, `SELECT ticket_id, order_id, customer_id, code FROM ticket
		WHERE event_id = $1 ORDER BY ticket_id LIMIT $2`, s.o.EventID, doorScans)
	if err != nil {
		return err
	}
	var ts []*doorTicket
	for rows.Next() {
		t := &doorTicket{}
		if err := rows.Scan(&t.ticketID, &t.orderID, &t.customer, &t.code); err != nil {
			return err
		}
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ts) == 0 {
		return nil
	}
	signer := identity.NewHS256Signer(s.identitySecret, identityIssuer, identityAudience)
	tickets := s.procs["tickets"].url
	// Each buyer's phone shows the QR images of the order page.
	byOrder := map[string][]*doorTicket{}
	for _, t := range ts {
		byOrder[t.orderID] = append(byOrder[t.orderID], t)
	}
	for orderID, group := range byOrder {
		var page struct {
			Tickets []struct{ TicketID, QR string }
		}
		if err := getJSON(ctx, tickets+"/orders/"+orderID+"/tickets", signer.Sign(group[0].customer, time.Minute), &page); err != nil {
			return err
		}
		for _, pt := range page.Tickets {
			for _, t := range group {
				if t.ticketID == pt.TicketID {
					t.png, err = base64.StdEncoding.DecodeString(strings.TrimPrefix(pt.QR, "data:image/png;base64,"))
					if err != nil {
						return fmt.Errorf("qr of %s: %w", t.ticketID, err)
					}
				}
			}
		}
	}
	if err := decodeQR(ctx, filepath.Join(s.dir, "qr"), ts); err != nil {
		return err
	}
	for _, t := range ts {
		if t.decoded != "" {
			d.QRDecoded++
		}
		if t.decoded != t.code {
			d.QRMismatch++
		}
	}

	// One in twenty hands the ticket on before the doors.
	newCode := map[string]string{}
	for i, t := range ts {
		if i%20 != 7 {
			continue
		}
		friend := "friend-of-" + t.customer
		status, body, err := post(ctx, tickets+"/tickets/"+t.ticketID+"/transfers", signer.Sign(t.customer, time.Minute), map[string]string{"customerId": friend})
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("transfer %s: %d %s", t.ticketID, status, body)
		}
		var mine struct {
			Tickets []struct{ TicketID, Code string }
		}
		if err := getJSON(ctx, tickets+"/tickets", signer.Sign(friend, time.Minute), &mine); err != nil {
			return err
		}
		for _, m := range mine.Tickets {
			if m.TicketID == t.ticketID {
				newCode[t.ticketID] = m.Code
			}
		}
		d.Transferred++
	}

	creds := map[string]string{}
	for _, g := range doorGates {
		if creds[g], err = gatecred.Mint(s.gateSecret, s.o.EventID, g); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	admitted := map[string]int{}
	scan := func(gate, text string) (int, error) {
		status, body, err := post(ctx, fmt.Sprintf("%s/events/%d/checkins", tickets, s.o.EventID), creds[gate], map[string]string{"code": text})
		if err == nil && status == http.StatusOK {
			var a struct{ TicketID string }
			_ = json.Unmarshal(body, &a)
			mu.Lock()
			admitted[a.TicketID]++
			mu.Unlock()
		}
		return status, err
	}
	// The gates work at once, each its own line of buyers; a buyer whose
	// ticket changed hands shows the old code first.
	var wg sync.WaitGroup
	errs := make([]error, len(doorGates))
	var oldRefused, newAdmitted, rescans, rescansRefused int
	for gi, gate := range doorGates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := gi; i < len(ts); i += len(doorGates) {
				t := ts[i]
				st, err := scan(gate, t.decoded)
				if err != nil {
					errs[gi] = err
					return
				}
				if nc, ok := newCode[t.ticketID]; ok {
					if st == http.StatusGone {
						mu.Lock()
						oldRefused++
						mu.Unlock()
					}
					if st, err = scan(gate, nc); err != nil {
						errs[gi] = err
						return
					}
					if st == http.StatusOK {
						mu.Lock()
						newAdmitted++
						mu.Unlock()
					}
				}
				// Every tenth buyer tries again at the next gate.
				if i%10 == 3 && st == http.StatusOK {
					text := t.decoded
					if nc, ok := newCode[t.ticketID]; ok {
						text = nc
					}
					st2, err := scan(doorGates[(gi+1)%len(doorGates)], text)
					if err != nil {
						errs[gi] = err
						return
					}
					mu.Lock()
					rescans++
					if st2 == http.StatusConflict {
						rescansRefused++
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	d.OldCodesRefused, d.NewCodesAdmitted, d.Rescanned, d.RescansRefused = oldRefused, newAdmitted, rescans, rescansRefused
	for _, n := range admitted {
		d.Admitted++
		if n > 1 {
			d.AdmittedTwice++
		}
	}
	return conn.QueryRow(ctx, `SELECT count(*) FROM checkin WHERE event_id = $1`, s.o.EventID).Scan(&d.CheckinRows)
}

// decodeQR writes each ticket's image and reads them all back with one
// zbarimg run per batch (it prints one line per image, in order).
func decodeQR(ctx context.Context, dir string, ts []*doorTicket) error {
	zbar, err := exec.LookPath("zbarimg")
	if err != nil {
		return errors.New("zbarimg is needed to scan the tickets' QR codes (hack/install-deps.sh demo installs zbar-tools)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const batch = 200
	for lo := 0; lo < len(ts); lo += batch {
		part := ts[lo:min(lo+batch, len(ts))]
		args := []string{"--raw", "-q", "-Sdisable", "-Sqrcode.enable"}
		for _, t := range part {
			p := filepath.Join(dir, t.ticketID+".png")
			if err := os.WriteFile(p, t.png, 0o644); err != nil {
				return err
			}
			args = append(args, p)
		}
		out, err := exec.CommandContext(ctx, zbar, args...).Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 4) { // 4: some image had no code
			return fmt.Errorf("zbarimg: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		if len(lines) != len(part) {
			return fmt.Errorf("zbarimg read %d of %d QR images", len(lines), len(part))
		}
		for i, t := range part {
			t.decoded = lines[i]
		}
	}
	return nil
}

var doorClient = &http.Client{Timeout: 10 * time.Second}

func getJSON(ctx context.Context, url, token string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := doorClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return json.Unmarshal(body, dst)
}

func post(ctx context.Context, url, token string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := doorClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, nil
}

// check records the door's broken promises.
func (d *DoorReport) check(r *Report) {
	if d == nil {
		return
	}
	workers := config.DefaultsOf[config.Mail]().Workers
	if d.MailsMissing != 0 || d.MailDuplicates != d.MailsCaughtByKill || d.MailsCaughtByKill > d.TicketsKills*workers {
		r.Problems = append(r.Problems, fmt.Sprintf("mails: %d of %d paid orders' mails missing, %d duplicates (%d of them sent again when the lease of a SIGKILLed sender ended, of %d kills of the tickets process, at most %d a kill)",
			d.MailsMissing, d.MailsExpected, d.MailDuplicates, d.MailsCaughtByKill, d.TicketsKills, workers))
	}
	if d.QRMismatch != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d QR images did not decode to their ticket's code", d.QRMismatch))
	}
	if d.AdmittedTwice != 0 || int64(d.Admitted) != d.CheckinRows {
		r.Problems = append(r.Problems, fmt.Sprintf("gates: %d tickets admitted twice; %d admitted answers for %d check-ins", d.AdmittedTwice, d.Admitted, d.CheckinRows))
	}
	if d.RescansRefused != d.Rescanned || d.OldCodesRefused != d.Transferred || d.NewCodesAdmitted != d.Transferred {
		r.Problems = append(r.Problems, fmt.Sprintf("gates: %d of %d second scans refused, %d of %d transferred old codes refused, %d new codes admitted",
			d.RescansRefused, d.Rescanned, d.OldCodesRefused, d.Transferred, d.NewCodesAdmitted))
	}
}

func (d *DoorReport) print(w io.Writer) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "emails delivered\t%d of %d paid orders' mails in the SMTP server's mailbox (%d messages), %d duplicates, %d missing (waited %.1fs after the ledger's audit)\n",
		d.MailsExpected-int64(d.MailsMissing), d.MailsExpected, d.MailsInBox, d.MailDuplicates, d.MailsMissing, d.MailSeconds)
	if d.MailDuplicates > 0 {
		fmt.Fprintf(w, "\t%d of the duplicates were sent again when the lease of a sender SIGKILLed after the server's 250 ended (%d kills of the tickets process)\n",
			d.MailsCaughtByKill, d.TicketsKills)
	}
	fmt.Fprintf(w, "gate check-ins\t%d admitted at %d gates from %d QR images decoded by zbarimg (%d not matching); %d admitted twice; second scans refused %d of %d; transferred: old code refused %d of %d, new code admitted %d\n",
		d.Admitted, d.Gates, d.QRDecoded, d.QRMismatch, d.AdmittedTwice, d.RescansRefused, d.Rescanned, d.OldCodesRefused, d.Transferred, d.NewCodesAdmitted)
}
