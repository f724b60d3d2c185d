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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
)

const (
	// batch is how many mails a worker claims at once.
	batch = 3
	// Lease is how long a claimed mail stays a worker's: a worker that dies
	// while sending gives its mails back when it ends. Far above a batch's
	// sending time (batch × smtpTimeout), so a live worker never loses its
	// claim, and short enough that a killed replica's mails go out within
	// a few minutes.
	Lease = 2 * time.Minute
	// poll is how often idle workers look for due mails: rows enqueued by
	// another replica, and retries whose backoff ended.
	poll = time.Second
	// idleClose closes an unused SMTP connection before the server times
	// it out.
	idleClose = 30 * time.Second
	// smtpTimeout bounds each SMTP exchange, so a hung server fails the
	// attempt instead of blocking the worker.
	smtpTimeout = 30 * time.Second
	// markSentFor bounds the retries that record an accepted mail: a
	// quarter of the lease, so the record lands before another worker may
	// claim the mail again.
	markSentFor = Lease / 4
)

// Sender sends the enqueued mails.
type Sender struct {
	cfg      config.Mail
	info     config.EventInfo
	startsAt time.Time // zero when the event's start is not configured
	domain   string    // of the From address, names Message-IDs and Content-IDs
	pool     *pgxpool.Pool
	log      *slog.Logger
	wake     chan struct{}
	roots    *x509.CertPool // CAs the SMTP server's certificate may chain to; nil: the system's

	sent     prometheus.Counter
	failures prometheus.Counter
	seconds  prometheus.Histogram
	pending  prometheus.GaugeFunc
}

// New returns a Sender of the mails in pool's mail_outbox. Settings left
// unset take the defaults of their config tags; Run checks them.
func New(cfg config.Mail, info config.EventInfo, pool *pgxpool.Pool, log *slog.Logger) *Sender {
	def := config.DefaultsOf[config.Mail]()
	if cfg.SMTPPort == 0 {
		cfg.SMTPPort = def.SMTPPort
	}
	if cfg.SMTPTLS == "" {
		cfg.SMTPTLS = def.SMTPTLS
	}
	if cfg.From == "" {
		cfg.From = def.From
	}
	if cfg.Workers <= 0 {
		cfg.Workers = def.Workers
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = def.RetryMin
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = max(def.RetryMax, cfg.RetryMin)
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Sender{cfg: cfg, info: info, pool: pool, log: log.With("component", "mail"),
		wake: make(chan struct{}, cfg.Workers)}
	if info.StartsAt != "" {
		t, err := time.Parse(time.RFC3339, info.StartsAt)
		if err != nil {
			s.log.Warn("event start is not RFC 3339; mails go without a start time and calendar entry", "starts_at", info.StartsAt, "err", err)
		}
		s.startsAt = t
	}
	if a, err := mail.ParseAddress(cfg.From); err == nil {
		s.domain = domainOf(a.Address)
	}
	s.sent = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ticketfair_mail_sent_total", Help: "Ticket mails the SMTP server accepted.",
	})
	s.failures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ticketfair_mail_send_failures_total", Help: "Failed attempts to send a ticket mail (each is retried with backoff).",
	})
	s.seconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ticketfair_mail_send_seconds", Help: "Time to build and send one ticket mail, successful or not.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	})
	s.pending = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ticketfair_mail_pending", Help: "Ticket mails not sent yet (-1 when the database does not answer).",
	}, s.countPending)
	return s
}

// Collectors are the Sender's metrics, for the service's registry.
func (s *Sender) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.sent, s.failures, s.seconds, s.pending}
}

// countPending reads the backlog at scrape time, so every replica reports
// all of it.
func (s *Sender) countPending() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM mail_outbox WHERE status = 'pending'`).Scan(&n); err != nil {
		return -1
	}
	return float64(n)
}

// Wake makes idle workers look for mails now, after the caller enqueued
// some; without it they find them within a second.
func (s *Sender) Wake() {
	for range cap(s.wake) {
		select {
		case s.wake <- struct{}{}:
		default:
			return
		}
	}
}

// Run sends mails with cfg.Workers workers until ctx ends. Without an SMTP
// host mail is off: Run waits for ctx and leaves the mails pending.
func (s *Sender) Run(ctx context.Context) error {
	if s.cfg.SMTPHost == "" {
		s.log.Info("no SMTP host: ticket mails are not sent")
		<-ctx.Done()
		return nil
	}
	if err := s.cfg.Validate(); err != nil {
		return fmt.Errorf("ticketmail: %w", err)
	}
	client, err := s.client()
	if err != nil {
		return err
	}
	s.log.Info("sending ticket mails", "smtp", fmt.Sprintf("%s:%d", s.cfg.SMTPHost, s.cfg.SMTPPort),
		"tls", s.cfg.SMTPTLS, "workers", s.cfg.Workers)
	var wg sync.WaitGroup
	for i := range s.cfg.Workers {
		w := &worker{s: s, client: client, log: s.log.With("worker", i)}
		wg.Go(func() { w.run(ctx) })
	}
	wg.Wait()
	return nil
}

// client is the go-mail client the workers share; each dials its own
// connection with it.
func (s *Sender) client() (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithPort(s.cfg.SMTPPort), gomail.WithTimeout(smtpTimeout),
		gomail.WithTLSConfig(&tls.Config{ServerName: s.cfg.SMTPHost, RootCAs: s.roots, MinVersion: tls.VersionTLS12})}
	switch s.cfg.SMTPTLS {
	case config.SMTPTLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	case config.SMTPTLSStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case config.SMTPTLSImplicit:
		opts = append(opts, gomail.WithSSL())
	}
	if s.cfg.SMTPUsername != "" {
		// Over TLS the server's best mechanism; in the clear PLAIN, which
		// go-mail sends to a loopback server only (config.Mail's Validate checks).
		auth := gomail.SMTPAuthAutoDiscover
		if s.cfg.SMTPTLS == config.SMTPTLSNone {
			auth = gomail.SMTPAuthPlain
		}
		opts = append(opts, gomail.WithSMTPAuth(auth),
			gomail.WithUsername(s.cfg.SMTPUsername), gomail.WithPassword(s.cfg.SMTPPassword))
	}
	c, err := gomail.NewClient(s.cfg.SMTPHost, opts...)
	if err != nil {
		return nil, fmt.Errorf("ticketmail: smtp client: %w", err)
	}
	return c, nil
}

// worker sends mails over one SMTP connection, kept open between mails.
type worker struct {
	s        *Sender
	client   *gomail.Client
	log      *slog.Logger
	conn     *smtp.Client // nil until dialled and after a failure
	lastUsed time.Time
}

func (w *worker) run(ctx context.Context) {
	defer w.hangUp()
	dbFailures := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		n, err := w.round(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := poll
		switch {
		case err != nil:
			// The database is away: back off as the SMTP retries do.
			w.log.Warn("claim ticket mails", "err", err)
			wait = retry.Backoff(dbFailures, w.s.cfg.RetryMin, w.s.cfg.RetryMax)
			dbFailures++
		case n == batch:
			dbFailures = 0
			continue // more may be due
		default:
			dbFailures = 0
		}
		if w.conn != nil && time.Since(w.lastUsed) > idleClose {
			w.hangUp()
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.s.wake:
		case <-timer.C:
		}
	}
}

// round claims due mails and sends them; it reports how many it claimed.
func (w *worker) round(ctx context.Context) (int, error) {
	jobs, err := w.s.claim(ctx)
	if err != nil {
		return 0, err
	}
	for i, j := range jobs {
		if ctx.Err() != nil {
			// Shutting down: give the rest back now, not after the lease.
			w.s.release(jobs[i:])
			break
		}
		w.send(ctx, j)
	}
	return len(jobs), nil
}

// send sends one claimed mail and records the outcome.
func (w *worker) send(ctx context.Context, j *job) {
	start := time.Now()
	err := w.s.loadTickets(ctx, j)
	var msg *gomail.Msg
	if err == nil {
		msg, err = w.s.message(j)
	}
	if err == nil {
		err = w.deliver(ctx, msg)
	}
	w.s.seconds.Observe(time.Since(start).Seconds())
	if err != nil {
		// Record with a context of its own, as markSentRetrying does: the
		// outcome must be kept while the service stops.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		w.s.failures.Inc()
		delay := retry.Backoff(j.Attempts, w.s.cfg.RetryMin, w.s.cfg.RetryMax)
		w.log.Warn("ticket mail not sent; retrying", "key", j.Key, "attempt", j.Attempts+1, "retry_in", delay, "err", err)
		if merr := w.s.markFailed(rctx, j, err, delay); merr != nil {
			w.log.Error("record failed ticket mail", "key", j.Key, "err", merr)
		}
		return
	}
	w.s.sent.Inc()
	w.s.markSentRetrying(ctx, j)
}

// markSentRetrying records an accepted mail, retrying while the database
// is away (a restart, a failover): an unrecorded mail goes again when its
// lease ends, so the buyer would get it twice. It gives up well before the
// lease ends, which is then the only way a mail goes twice.
func (s *Sender) markSentRetrying(ctx context.Context, j *job) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markSentFor)
	defer cancel()
	for attempt := 0; ; attempt++ {
		err := s.markSent(rctx, j)
		if err == nil {
			return
		}
		if rctx.Err() != nil || retry.Sleep(rctx, retry.Backoff(attempt, 50*time.Millisecond, 2*time.Second)) != nil {
			// The lease ends and the mail goes again, with the same Message-ID.
			s.log.Error("mark ticket mail sent", "key", j.Key, "attempts", attempt+1, "err", err)
			return
		}
	}
}

// deliver sends msg over the worker's connection, dialling one when it has
// none. A kept connection the server has since closed is dialled again once.
func (w *worker) deliver(ctx context.Context, msg *gomail.Msg) error {
	reused := w.conn != nil
	if err := w.dial(ctx); err != nil {
		return err
	}
	err := w.client.SendWithSMTPClient(w.conn, msg)
	if err != nil && reused && isConnError(err) {
		w.drop()
		if err = w.dial(ctx); err != nil {
			return err
		}
		err = w.client.SendWithSMTPClient(w.conn, msg)
	}
	if err != nil {
		// Whatever state the session is in, start the next mail afresh.
		w.drop()
		if msg.IsDelivered() {
			// The server accepted the mail (250 after DATA) and only the
			// RSET after it failed: sending it again would mail the buyer
			// twice.
			w.log.Warn("ticket mail accepted; the session failed after it", "err", err)
			return nil
		}
		return err
	}
	w.lastUsed = time.Now()
	return nil
}

func (w *worker) dial(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	c, err := w.client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return fmt.Errorf("connect to %s:%d: %w", w.s.cfg.SMTPHost, w.s.cfg.SMTPPort, err)
	}
	w.conn = c
	return nil
}

// isConnError reports a failure of the connection rather than of the mail.
func isConnError(err error) bool {
	var se *gomail.SendError
	return errors.As(err, &se) && se.Reason == gomail.ErrConnCheck
}

// hangUp ends the session politely (QUIT).
func (w *worker) hangUp() {
	if w.conn != nil {
		_ = w.client.CloseWithSMTPClient(w.conn)
		w.conn = nil
	}
}

// drop abandons the connection without a goodbye: after a failure the
// server may not answer one.
func (w *worker) drop() {
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
}

// claim leases up to batch due mails: their next attempt moves a lease
// ahead, so other workers skip them, and they come back when a worker dies
// holding them.
func (s *Sender) claim(ctx context.Context) ([]*job, error) {
	rows, err := s.pool.Query(ctx, `UPDATE mail_outbox m SET next_attempt_at = now() + $2::bigint * interval '1 microsecond'
		FROM (SELECT message_key FROM mail_outbox
			WHERE status = 'pending' AND next_attempt_at <= now()
			ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
		WHERE m.message_key = due.message_key
		RETURNING m.message_key, m.kind, m.event_id, coalesce(m.order_id, ''), m.ticket_ids, m.recipient, m.attempts, m.created_at`,
		batch, Lease.Microseconds())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var jobs []*job
	for rows.Next() {
		j := &job{}
		var kind string
		if err := rows.Scan(&j.Key, &kind, &j.EventID, &j.OrderID, &j.TicketIDs, &j.To, &j.Attempts, &j.Created); err != nil {
			return nil, err
		}
		j.Kind = Kind(kind)
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

// loadTickets reads the tickets a mail lists, in its order.
func (s *Sender) loadTickets(ctx context.Context, j *job) error {
	rows, err := s.pool.Query(ctx, `SELECT t.ticket_id, t.seat_id, t.section, t.price, t.code
		FROM unnest($1::text[]) WITH ORDINALITY AS l(id, n) JOIN ticket t ON t.ticket_id = l.id
		ORDER BY l.n`, j.TicketIDs)
	if err != nil {
		return fmt.Errorf("load tickets: %w", err)
	}
	defer rows.Close()
	j.Tickets = j.Tickets[:0]
	for rows.Next() {
		var t ticket
		if err := rows.Scan(&t.ID, &t.Seat, &t.Section, &t.Price, &t.Code); err != nil {
			return fmt.Errorf("load tickets: %w", err)
		}
		j.Tickets = append(j.Tickets, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load tickets: %w", err)
	}
	if len(j.Tickets) != len(j.TicketIDs) {
		return fmt.Errorf("load tickets: %d of the %d listed exist", len(j.Tickets), len(j.TicketIDs))
	}
	return nil
}

func (s *Sender) markSent(ctx context.Context, j *job) error {
	_, err := s.pool.Exec(ctx, `UPDATE mail_outbox SET status = 'sent', sent_at = now(), attempts = attempts + 1, last_error = NULL
		WHERE message_key = $1`, j.Key)
	return err
}

func (s *Sender) markFailed(ctx context.Context, j *job, cause error, delay time.Duration) error {
	_, err := s.pool.Exec(ctx, `UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = now() + $3::bigint * interval '1 microsecond'
		WHERE message_key = $1 AND status = 'pending'`, j.Key, cause.Error(), delay.Microseconds())
	return err
}

// release gives claimed, unsent mails back at once.
func (s *Sender) release(jobs []*job) {
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.Key
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `UPDATE mail_outbox SET next_attempt_at = now()
		WHERE message_key = ANY($1) AND status = 'pending'`, keys); err != nil {
		s.log.Warn("give back claimed ticket mails", "n", len(keys), "err", err)
	}
}
