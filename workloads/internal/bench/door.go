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

package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	gomail "github.com/wneessen/go-mail"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/gatecred"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/ticketmail"
	"github.com/ticketfair/ticketfair/workloads/internal/tickets"
)

// The door's figures: gate check-ins through the tickets service's HTTP
// API against the plain Go handler, and ticket mails from the outbox to a
// real SMTP server (Mailpit) against go-mail sending a message of the same
// size on as many connections.

const (
	doorOrders      = 8000 // of doorSeatsEach tickets
	doorSeatsEach   = 10
	benchMails      = 600
	benchMailBytes  = 24 << 10 // about a two-ticket mail: two QR images and the text
	benchGateSecret = "bench-gate-secret"
)

type doorSection struct {
	checkins        measurement
	mailsPerSecond  float64
	goMailPerSecond float64
	mailWorkers     int
	mailsInBox      int
}

// measureDoor issues the tickets into the bench's database, then measures
// check-ins and mails.
func measureDoor(ctx context.Context, databaseURL string, hc *http.Client, o Options, logf func(string, ...any)) (doorSection, error) {
	var d doorSection
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return d, err
	}
	defer pool.Close()
	keySpec, _ := accesstoken.GenerateKey("bench-tickets")
	keys, err := tickets.ParseKeys(keySpec)
	if err != nil {
		return d, err
	}
	logf("ticketfair: issuing %d tickets ...", doorOrders*doorSeatsEach)
	for i := range doorOrders {
		m := &events.TicketIssued{OrderID: fmt.Sprintf("bench-order-%05d", i), EventID: eventID, CustomerID: fmt.Sprintf("b%d", i),
			PaidAt: time.Now(), Email: fmt.Sprintf("b%d@buyers.example", i)}
		for k := range doorSeatsEach {
			m.Seats = append(m.Seats, events.Seat{SeatID: fmt.Sprintf("Z-%d-%d", i, k), Section: "Z", Price: "10.00"})
		}
		if _, err := tickets.Issue(ctx, pool, keys, int64(i+1), m); err != nil {
			return d, err
		}
	}
	rows, err := pool.Query(ctx, `SELECT code FROM ticket WHERE event_id = $1 ORDER BY ticket_id`, eventID)
	if err != nil {
		return d, err
	}
	codes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return d, err
	}

	cfg := config.DefaultsOf[config.Tickets]()
	cfg.Brokers, cfg.TopicTicketIssued = []string{"127.0.0.1:1"}, events.TopicTicketIssued // never consumed here
	cfg.IdentityHMACSecret, cfg.TicketKeys, cfg.GateSecret = "bench-identity-secret", keySpec, benchGateSecret
	svc, err := tickets.New(ctx, cfg, pool)
	if err != nil {
		return d, err
	}
	defer svc.Close()
	srv := &services{}
	defer srv.stop()
	url, err := serve(ctx, srv, func(ctx context.Context, ready func(net.Addr)) error {
		return httpapi.Serve(ctx, "127.0.0.1:0", svc.Handler(), 2*time.Second, ready)
	})
	if err != nil {
		return d, err
	}
	creds := make([]string, 8)
	for g := range creds {
		if creds[g], err = gatecred.Mint(benchGateSecret, eventID, fmt.Sprintf("gate-%d", g)); err != nil {
			return d, err
		}
	}
	logf("ticketfair: gate check-ins, each code once, from %d gates ...", len(creds))
	var mu sync.Mutex
	next := 0
	// Each code is scanned once: the measurement ends early when they run
	// out (its rate is over the time it ran).
	cctx, out := context.WithCancel(ctx)
	defer out()
	d.checkins = closedLoop(cctx, o.Concurrency/4+1, o.Duration, func(ctx context.Context, w, i int) error {
		mu.Lock()
		k := next
		next++
		mu.Unlock()
		if k >= len(codes) {
			out()
			return nil
		}
		return call(ctx, hc, http.MethodPost, fmt.Sprintf("%s/events/%d/checkins", url, eventID),
			map[string]string{"Authorization": "Bearer " + creds[w%len(creds)], "Content-Type": "application/json"},
			`{"code":"`+codes[k]+`"}`, nil, http.StatusOK)
	})

	mp, err := localsvc.StartMailpit(ctx)
	if err != nil {
		return d, fmt.Errorf("the mail server (make mailpit): %w", err)
	}
	defer mp.Close()
	mc := config.DefaultsOf[config.Mail]()
	mc.SMTPHost, mc.SMTPPort, mc.SMTPTLS, mc.From = mp.SMTPHost, mp.SMTPPort, "none", "tickets@tickets.example"
	d.mailWorkers = mc.Workers
	logf("ticketfair: %d ticket mails (2 tickets each) through %d SMTP connections ...", benchMails, mc.Workers)
	for i := range benchMails {
		order := fmt.Sprintf("bench-order-%05d", i)
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return ticketmail.Enqueue(ctx, tx, ticketmail.Mail{Key: ticketmail.OrderKey(order), Kind: ticketmail.KindOrder, EventID: eventID,
				OrderID: order, TicketIDs: []string{tickets.TicketID(order, fmt.Sprintf("Z-%d-0", i)), tickets.TicketID(order, fmt.Sprintf("Z-%d-1", i))},
				To: fmt.Sprintf("b%d@buyers.example", i)})
		})
		if err != nil {
			return d, err
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	sender := ticketmail.New(mc, config.EventInfo{EventName: "bench", Venue: "bench", StartsAt: time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, pool, nil)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- sender.Run(sctx) }()
	sender.Wake()
	for d.mailsInBox < benchMails && time.Since(start) < 5*time.Minute {
		time.Sleep(50 * time.Millisecond)
		if d.mailsInBox, err = mp.Count(ctx); err != nil {
			break
		}
	}
	elapsed := time.Since(start)
	cancel()
	<-done
	if d.mailsInBox != benchMails {
		return d, fmt.Errorf("bench: %d of %d mails reached the SMTP server", d.mailsInBox, benchMails)
	}
	d.mailsPerSecond = float64(benchMails) / elapsed.Seconds()
	if err := mp.DeleteAll(ctx); err != nil {
		return d, err
	}
	logf("baseline: go-mail alone, %d messages of %d KiB through %d connections ...", benchMails, benchMailBytes>>10, mc.Workers)
	d.goMailPerSecond, err = goMailAlone(ctx, mp, mc.Workers)
	return d, err
}

// goMailAlone sends benchMails messages of benchMailBytes to mp from
// workers connections, one message after another on each.
func goMailAlone(ctx context.Context, mp *localsvc.Mailpit, workers int) (float64, error) {
	body := strings.Repeat("ticketfair bench mail body line of text, 64 bytes long, padded.\n", benchMailBytes/64)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := gomail.NewClient(mp.SMTPHost, gomail.WithPort(mp.SMTPPort), gomail.WithTLSPolicy(gomail.NoTLS))
			if err != nil {
				errs <- err
				return
			}
			var msgs []*gomail.Msg
			for i := w; i < benchMails; i += workers {
				m := gomail.NewMsg()
				if err := m.From("tickets@tickets.example"); err != nil {
					errs <- err
					return
				}
				if err := m.To(fmt.Sprintf("b%d@buyers.example", i)); err != nil {
					errs <- err
					return
				}
				m.Subject("bench")
				m.SetBodyString(gomail.TypeTextPlain, body)
				msgs = append(msgs, m)
			}
			if err := c.DialAndSendWithContext(ctx, msgs...); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return 0, err
	}
	return float64(benchMails) / time.Since(start).Seconds(), nil
}

func (d doorSection) rows(plainRPS float64) []Row {
	return []Row{
		{What: "gate check-ins/s (HTTP)", PerSecond: d.checkins.PerSecond, P50: d.checkins.P50, P99: d.checkins.P99, Baseline: "plain Go handler (POST + bearer)", BaselineRPS: plainRPS},
		{What: "ticket mails/s (to Mailpit)", PerSecond: d.mailsPerSecond, Baseline: fmt.Sprintf("go-mail alone, %d KiB messages", benchMailBytes>>10), BaselineRPS: d.goMailPerSecond},
	}
}
