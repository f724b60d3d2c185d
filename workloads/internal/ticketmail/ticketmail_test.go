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

package ticketmail

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
	"github.com/ticketfair/ticketfair/workloads/internal/qrcode/qrcodetest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	eventID = 42
	from    = "Ticketfair <tickets@ticketfair.test>"
	domain  = "ticketfair.test"
)

// info names the event with characters a calendar must escape.
var info = config.EventInfo{
	EventName: "Rock, Paper; Scissors \\ Live",
	Venue:     "Große Halle, Hall 2",
	StartsAt:  "2026-12-12T20:00:00+01:00",
}

// waitLong is generous: two cores run the database, Mailpit and the test.
const waitLong = 2 * time.Minute

func mailConfig(mp *localsvc.Mailpit) config.Mail {
	return config.Mail{
		SMTPHost: mp.SMTPHost, SMTPPort: mp.SMTPPort, SMTPTLS: "none",
		From: from, Workers: 2, RetryMin: 50 * time.Millisecond, RetryMax: 400 * time.Millisecond,
	}
}

// startSender runs a Sender, changed by opts, until the test ends.
func startSender(t testing.TB, cfg config.Mail, pool *pgxpool.Pool, opts ...func(*Sender)) *Sender {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	s := New(cfg, info, pool, log)
	for _, o := range opts {
		o(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s
}

type testTicket struct{ id, seat, code string }

// issue inserts the tickets of a paid order, as the tickets service does.
func issue(t testing.TB, pool *pgxpool.Pool, orderID string, seats int) []testTicket {
	t.Helper()
	// Ticket columns beyond the ones a mail reads (the holder, since
	// migration 00014) get what the tickets service would write.
	var holder bool
	if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT FROM information_schema.columns
		WHERE table_name = 'ticket' AND column_name = 'holder_id')`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO ticket (ticket_id, order_id, seat_id, event_id, customer_id, section, price, code)
		VALUES ($1, $2, $3, $4, 'cust', 'A', '10.00 EUR', $5)`
	if holder {
		insert = `INSERT INTO ticket (ticket_id, order_id, seat_id, event_id, customer_id, section, price, code, holder_id)
		VALUES ($1, $2, $3, $4, 'cust', 'A', '10.00 EUR', $5, 'cust')`
	}
	var out []testTicket
	for i := range seats {
		tk := testTicket{
			id:   fmt.Sprintf("tk-%s-%d", orderID, i),
			seat: fmt.Sprintf("A-%d-%d", i/10+1, i%10+1),
			code: fmt.Sprintf("TF1.%d.%s.%d.c2lnbmF0dXJl", eventID, orderID, i),
		}
		_, err := pool.Exec(context.Background(), insert, tk.id, orderID, tk.seat, eventID, tk.code)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tk)
	}
	return out
}

func orderMail(orderID string, tickets []testTicket) Mail {
	m := Mail{Key: OrderKey(orderID), Kind: KindOrder, EventID: eventID, OrderID: orderID, To: "Buyer <buyer-" + orderID + "@example.com>"}
	for _, tk := range tickets {
		m.TicketIDs = append(m.TicketIDs, tk.id)
	}
	return m
}

func enqueue(t testing.TB, pool *pgxpool.Pool, m Mail) {
	t.Helper()
	if err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		return Enqueue(context.Background(), tx, m)
	}); err != nil {
		t.Fatal(err)
	}
}

func stats(t testing.TB, pool *pgxpool.Pool) Counts {
	t.Helper()
	c, err := Stats(context.Background(), pool, eventID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func count(t testing.TB, mp *localsvc.Mailpit) int {
	t.Helper()
	n, err := mp.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOrderMail: a paid order's mail arrives once, with text and HTML, a
// QR code per ticket that reads back as the ticket's code, and a calendar
// entry.
func TestOrderMail(t *testing.T) {
	_, pool := migrationstest.NewDB(t)
	mp := testenv.Mailpit(t)
	ctx := context.Background()
	tickets := issue(t, pool, "ord-0001", 3)
	m := orderMail("ord-0001", tickets)
	enqueue(t, pool, m)

	cfg := mailConfig(mp)
	cfg.SMTPUsername, cfg.SMTPPassword = "tickets", "secret" // PLAIN to a loopback server
	s := startSender(t, cfg, pool)
	s.Wake()
	testenv.WaitFor(t, waitLong, "the mail marked sent", func() bool { return stats(t, pool).Sent == 1 })
	if got := count(t, mp); got != 1 {
		t.Fatalf("Mailpit holds %d messages, want 1", got)
	}
	if c := stats(t, pool); c != (Counts{Sent: 1}) {
		t.Errorf("stats %+v, want one sent", c)
	}
	if n := testutil.ToFloat64(s.sent); n != 1 {
		t.Errorf("sent counter %v, want 1", n)
	}

	list, err := mp.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if list[0].Username != "tickets" {
		t.Errorf("sent as SMTP user %q, want tickets", list[0].Username)
	}
	msg, err := mp.Message(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := m.Key + "@" + domain; msg.MessageID != want {
		t.Errorf("Message-ID %q, want %q", msg.MessageID, want)
	}
	if len(msg.To) != 1 || msg.To[0].Address != "buyer-ord-0001@example.com" {
		t.Errorf("To %v", msg.To)
	}
	if msg.From == nil || msg.From.Address != "tickets@ticketfair.test" {
		t.Errorf("From %v", msg.From)
	}
	if !strings.Contains(msg.Subject, info.EventName) {
		t.Errorf("subject %q does not name the event", msg.Subject)
	}
	for _, part := range []struct{ name, body string }{{"text", msg.Text}, {"HTML", msg.HTML}} {
		for _, want := range []string{"ord-0001", "Große Halle", "Saturday, 12 December 2026, 20:00"} {
			if !strings.Contains(part.body, want) {
				t.Errorf("%s part lacks %q:\n%s", part.name, want, part.body)
			}
		}
		for _, tk := range tickets {
			if !strings.Contains(part.body, tk.seat) {
				t.Errorf("%s part lacks seat %s", part.name, tk.seat)
			}
		}
	}
	if !strings.Contains(msg.HTML, "Rock, Paper; Scissors") {
		t.Errorf("HTML lacks the event name:\n%s", msg.HTML)
	}
	headers, err := mp.Headers(ctx, msg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := headers["Auto-Submitted"]; len(got) != 1 || got[0] != "auto-generated" {
		t.Errorf("Auto-Submitted %q", got)
	}

	// One inline PNG per ticket, in the order of the tickets, each
	// referenced by the HTML and holding the ticket's code.
	if len(msg.Inline) != len(tickets) {
		t.Fatalf("%d inline parts, want %d: %+v", len(msg.Inline), len(tickets), msg.Inline)
	}
	for i, in := range msg.Inline {
		if in.ContentType != "image/png" {
			t.Errorf("inline %d: content type %q", i, in.ContentType)
		}
		if !strings.Contains(msg.HTML, `src="cid:`+in.ContentID+`"`) {
			t.Errorf("HTML does not reference inline %d (cid %q)", i, in.ContentID)
		}
		png, err := mp.Part(ctx, msg.ID, in.PartID)
		if err != nil {
			t.Fatal(err)
		}
		if got := qrcodetest.Decode(t, png); got != tickets[i].code {
			t.Errorf("QR code %d reads %q, want %q", i, got, tickets[i].code)
		}
	}

	// RFC 2392: a Content-ID is an angle-bracketed msg-id.
	raw, err := mp.Raw(ctx, msg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`(?mi)^content-id: <[^<>@\s]+@[^<>@\s]+>\r?$`).FindAll(raw, -1)); n != len(tickets) {
		t.Errorf("%d well-formed Content-ID headers, want %d", n, len(tickets))
	}

	if len(msg.Attachments) != 1 || msg.Attachments[0].FileName != "event.ics" ||
		!strings.HasPrefix(msg.Attachments[0].ContentType, "text/calendar") {
		t.Fatalf("attachments %+v, want event.ics", msg.Attachments)
	}
	cal, err := mp.Part(ctx, msg.ID, msg.Attachments[0].PartID)
	if err != nil {
		t.Fatal(err)
	}
	checkICS(t, string(cal), m.Key+"@"+domain)
}

// checkICS checks a ticket mail's calendar entry.
func checkICS(t *testing.T, cal, uid string) {
	t.Helper()
	if strings.Contains(strings.ReplaceAll(cal, "\r\n", ""), "\n") || !strings.HasSuffix(cal, "\r\n") {
		t.Errorf("calendar lines do not all end in CRLF: %q", cal)
	}
	unfolded := strings.ReplaceAll(cal, "\r\n ", "")
	for _, want := range []string{
		"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n",
		"BEGIN:VEVENT\r\n",
		"UID:" + uid + "\r\n",
		"DTSTART:20261212T190000Z\r\n",
		`SUMMARY:Rock\, Paper\; Scissors \\ Live` + "\r\n",
		`LOCATION:Große Halle\, Hall 2` + "\r\n",
		"END:VEVENT\r\nEND:VCALENDAR\r\n",
	} {
		if !strings.Contains(unfolded, want) {
			t.Errorf("calendar lacks %q:\n%s", want, cal)
		}
	}
	if !regexp.MustCompile(`\r\nDTSTAMP:\d{8}T\d{6}Z\r\n`).MatchString(cal) {
		t.Errorf("calendar lacks a UTC DTSTAMP:\n%s", cal)
	}
}

// TestRedeliveryMailsOnce: the same key enqueued many times at once and
// again later, as redelivered messages would, yields one mail.
func TestRedeliveryMailsOnce(t *testing.T) {
	_, pool := migrationstest.NewDB(t)
	mp := testenv.Mailpit(t)
	m := orderMail("ord-0002", issue(t, pool, "ord-0002", 2))

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			errs <- pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
				return Enqueue(context.Background(), tx, m)
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	enqueue(t, pool, m)
	enqueue(t, pool, m)
	if c := stats(t, pool); c != (Counts{Pending: 1}) {
		t.Fatalf("after 18 enqueues: %+v, want one pending mail", c)
	}

	s := startSender(t, mailConfig(mp), pool)
	s.Wake()
	testenv.WaitFor(t, waitLong, "the mail marked sent", func() bool { return stats(t, pool).Sent == 1 })

	// Redelivered after it was sent: still nothing new. A later order's
	// mail marks when the sender had its chance to misbehave.
	enqueue(t, pool, m)
	marker := orderMail("ord-0003", issue(t, pool, "ord-0003", 1))
	enqueue(t, pool, marker)
	s.Wake()
	testenv.WaitFor(t, waitLong, "the second order's mail", func() bool { return stats(t, pool).Sent == 2 })
	list, err := mp.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, msg := range list {
		ids = append(ids, msg.MessageID)
	}
	slices.Sort(ids)
	want := []string{m.Key + "@" + domain, marker.Key + "@" + domain}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("Mailpit holds %v, want %v", ids, want)
	}
}

// TestOutageCatchUp: with the mail server down, mails wait and count their
// failures; once it is back, each arrives exactly once.
func TestOutageCatchUp(t *testing.T) {
	_, pool := migrationstest.NewDB(t)
	mp := testenv.Mailpit(t)
	if err := mp.Stop(); err != nil {
		t.Fatal(err)
	}
	s := startSender(t, mailConfig(mp), pool)

	const orders = 12
	want := map[string]bool{}
	for i := range orders {
		id := fmt.Sprintf("ord-1%03d", i)
		m := orderMail(id, issue(t, pool, id, 1+i%3))
		enqueue(t, pool, m)
		want[m.Key+"@"+domain] = true
	}
	s.Wake()
	testenv.WaitFor(t, waitLong, "every mail to fail once", func() bool { return stats(t, pool).Failing == orders })
	if c := stats(t, pool); c.Pending != orders || c.Sent != 0 {
		t.Fatalf("during the outage: %+v, want all %d pending", c, orders)
	}
	if n := testutil.ToFloat64(s.failures); n < orders {
		t.Errorf("failure counter %v, want at least %d", n, orders)
	}
	if n := testutil.ToFloat64(s.pending); n != orders {
		t.Errorf("pending gauge %v, want %d", n, orders)
	}

	if err := mp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, waitLong, "every mail marked sent", func() bool { return stats(t, pool).Sent == orders })
	if c := stats(t, pool); c != (Counts{Sent: orders}) {
		t.Errorf("after the outage: %+v", c)
	}
	list, err := mp.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, msg := range list {
		got[msg.MessageID]++
	}
	for id, n := range got {
		if !want[id] || n != 1 {
			t.Errorf("Message-ID %s arrived %d times (want once, and only ours)", id, n)
		}
	}
	if len(got) != orders {
		t.Errorf("%d distinct mails arrived, want %d", len(got), orders)
	}
	if n := testutil.ToFloat64(s.sent); n != orders {
		t.Errorf("sent counter %v, want %d", n, orders)
	}
	if n := testutil.ToFloat64(s.pending); n != 0 {
		t.Errorf("pending gauge %v, want 0", n)
	}
}

// TestMissingTicketRetries: a mail listing a ticket that does not exist
// fails and stays pending, recorded, instead of going out incomplete.
func TestMissingTicketRetries(t *testing.T) {
	_, pool := migrationstest.NewDB(t)
	mp := testenv.Mailpit(t)
	m := orderMail("ord-0004", issue(t, pool, "ord-0004", 1))
	m.TicketIDs = append(m.TicketIDs, "no-such-ticket")
	enqueue(t, pool, m)
	startSender(t, mailConfig(mp), pool).Wake()
	testenv.WaitFor(t, waitLong, "the mail to fail", func() bool { return stats(t, pool).Failing == 1 })
	var lastErr string
	if err := pool.QueryRow(context.Background(), `SELECT last_error FROM mail_outbox WHERE message_key = $1`, m.Key).Scan(&lastErr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lastErr, "1 of the 2") {
		t.Errorf("last_error %q", lastErr)
	}
	if n := count(t, mp); n != 0 {
		t.Errorf("Mailpit holds %d messages, want none", n)
	}
}

func TestKeys(t *testing.T) {
	safe := regexp.MustCompile(`^[a-z]+-[0-9a-f]{32}$`)
	keys := []string{OrderKey("ord-1"), OrderKey("ord-2"), OrderKey("<weird@id>"), TransferKey("ord-1", 1), TransferKey("ord-1", 2)}
	seen := map[string]bool{}
	for _, k := range keys {
		if !safe.MatchString(k) {
			t.Errorf("key %q is not safe for a Message-ID", k)
		}
		if seen[k] {
			t.Errorf("key %q twice", k)
		}
		seen[k] = true
	}
	if OrderKey("ord-1") != keys[0] || TransferKey("ord-1", 1) != keys[3] {
		t.Error("keys are not stable")
	}
}

func TestEnqueueRefusesBadMail(t *testing.T) {
	ok := Mail{Key: "k", Kind: KindOrder, TicketIDs: []string{"t"}, To: "a@example.com"}
	for name, mut := range map[string]func(*Mail){
		"no key":     func(m *Mail) { m.Key = "" },
		"bad kind":   func(m *Mail) { m.Kind = "gift" },
		"no tickets": func(m *Mail) { m.TicketIDs = nil },
	} {
		m := ok
		mut(&m)
		// Refused before the transaction is used.
		if err := Enqueue(context.Background(), nil, m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	m := ok
	m.To = "not an address"
	if err := Enqueue(context.Background(), nil, m); !errors.Is(err, ErrInvalidRecipient) {
		t.Errorf("bad recipient: %v, want ErrInvalidRecipient", err)
	}
}

func TestICSEscapesAndFolds(t *testing.T) {
	long := strings.Repeat("ü", 60) // 120 octets: folds, never inside a character
	cal := string(ics(calendarEvent{UID: "k@d", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600)),
		Summary: "a,b;c\\d\ne", Location: long}))
	for _, line := range strings.Split(strings.TrimSuffix(cal, "\r\n"), "\r\n") {
		if len(line) > 75 {
			t.Errorf("line of %d octets: %q", len(line), line)
		}
		if !utf8.ValidString(line) {
			t.Errorf("line splits a character: %q", line)
		}
	}
	unfolded := strings.ReplaceAll(cal, "\r\n ", "")
	for _, want := range []string{"DTSTART:20260102T020405Z\r\n", `SUMMARY:a\,b\;c\\d\ne` + "\r\n", "LOCATION:" + long + "\r\n"} {
		if !strings.Contains(unfolded, want) {
			t.Errorf("lacks %q:\n%s", want, cal)
		}
	}
}

// TestCrashedWorkersMailsComeBack: mails claimed by a worker that died are
// leased, not lost: no one else takes them until the lease ends, then they
// go out.
func TestCrashedWorkersMailsComeBack(t *testing.T) {
	_, pool := migrationstest.NewDB(t)
	mp := testenv.Mailpit(t)
	ctx := context.Background()
	m := orderMail("ord-0005", issue(t, pool, "ord-0005", 1))
	enqueue(t, pool, m)

	// A worker claims the mail and dies before sending it.
	crashed := New(mailConfig(mp), info, pool, nil)
	if jobs, err := crashed.claim(ctx); err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d mails, %v", len(jobs), err)
	}
	if jobs, err := crashed.claim(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("a leased mail was claimed again: %d mails, %v", len(jobs), err)
	}
	if c := stats(t, pool); c != (Counts{Pending: 1}) {
		t.Fatalf("stats %+v, want the leased mail pending", c)
	}
	// The lease runs out (moved, rather than waited for).
	if _, err := pool.Exec(ctx, `UPDATE mail_outbox SET next_attempt_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	startSender(t, mailConfig(mp), pool)
	testenv.WaitFor(t, waitLong, "the mail sent by another worker", func() bool { return stats(t, pool).Sent == 1 })
	if n := count(t, mp); n != 1 {
		t.Errorf("Mailpit holds %d messages, want 1", n)
	}
}

// TestTLSModes: starttls and tls reach servers that require them, with
// authentication, and starttls refuses a server that does not offer it.
func TestTLSModes(t *testing.T) {
	for _, mode := range []string{"starttls", "tls"} {
		t.Run(mode, func(t *testing.T) {
			_, pool := migrationstest.NewDB(t)
			mp, certs := testenv.MailpitTLS(t, mode == "tls")
			roots := x509.NewCertPool()
			if !roots.AppendCertsFromPEM([]byte(certs.CA)) {
				t.Fatal("test CA")
			}
			enqueue(t, pool, orderMail("ord-0006", issue(t, pool, "ord-0006", 1)))
			cfg := mailConfig(mp)
			cfg.SMTPTLS, cfg.SMTPUsername, cfg.SMTPPassword = mode, "tickets", "secret"
			startSender(t, cfg, pool, func(s *Sender) { s.roots = roots }).Wake()
			testenv.WaitFor(t, waitLong, "the mail marked sent", func() bool { return stats(t, pool).Sent == 1 })
			list, err := mp.Messages(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].Username != "tickets" {
				t.Errorf("Mailpit holds %+v, want one message sent as user tickets", list)
			}
		})
	}
	t.Run("starttls to a plain server", func(t *testing.T) {
		_, pool := migrationstest.NewDB(t)
		mp := testenv.Mailpit(t)
		m := orderMail("ord-0007", issue(t, pool, "ord-0007", 1))
		enqueue(t, pool, m)
		cfg := mailConfig(mp)
		cfg.SMTPTLS = "starttls"
		startSender(t, cfg, pool).Wake()
		testenv.WaitFor(t, waitLong, "the mail to fail", func() bool { return stats(t, pool).Failing == 1 })
		var lastErr string
		if err := pool.QueryRow(context.Background(), `SELECT last_error FROM mail_outbox WHERE message_key = $1`, m.Key).Scan(&lastErr); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(lastErr, "STARTTLS") {
			t.Errorf("last_error %q, want it to name STARTTLS", lastErr)
		}
		if n := count(t, mp); n != 0 {
			t.Errorf("Mailpit holds %d messages, want none", n)
		}
	})
}
