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

// Package tickets issues tickets: `ticketfair tickets` consumes ticket-issued
// in a consumer group, stores one ticket per seat of each paid order
// (exactly once, whatever Kafka redelivers), and serves an order's tickets to
// its customer. Every ticket carries a code signed with Ed25519 that a gate
// verifies offline against the keys published at
// /.well-known/ticket-keys.json.
package tickets

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/kafkaconn"
	"github.com/ticketfair/ticketfair/workloads/internal/qrcode"
	"github.com/ticketfair/ticketfair/workloads/internal/ticketmail"
	"github.com/ticketfair/ticketfair/workloads/openapi"
)

// KeysPath is where the ticket code verification keys are published.
const KeysPath = "/.well-known/ticket-keys.json"

type metrics struct {
	messages    *prometheus.CounterVec
	issued      prometheus.Counter
	storeErrors prometheus.Counter
	fetchErrors prometheus.Counter
	latency     prometheus.Histogram

	checkins       *prometheus.CounterVec
	checkinLatency prometheus.Histogram
	transfers      prometheus.Counter
}

func newMetrics() *metrics {
	return &metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_tickets_messages_total", Help: "ticket-issued messages by result: issued, duplicate, rejected, skipped.",
		}, []string{"result"}),
		issued: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_tickets_issued_total", Help: "Tickets issued (one per seat).",
		}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_tickets_store_errors_total", Help: "Failed attempts to store tickets (retried).",
		}),
		fetchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_tickets_fetch_errors_total", Help: "Failed fetches from the brokers (retried with backoff).",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_tickets_message_to_stored_seconds", Help: "Time from a message's produce timestamp to its tickets being stored.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}),
		checkins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ticketfair_checkins_total", Help: "Gate scans by gate and result: admitted, already_used, revoked, wrong_event, invalid, conflict.",
		}, []string{"gate", "result"}),
		checkinLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ticketfair_checkin_seconds", Help: "Time to answer one online gate scan.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		transfers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ticketfair_ticket_transfers_total", Help: "Tickets handed to another person (each revokes the previous code).",
		}),
	}
}

// Service is the tickets service: the consumer plus the HTTP API.
type Service struct {
	pool *pgxpool.Pool
	keys *Keys
	// public verifies scanned codes: the keys' public halves, derived once.
	public   map[string]ed25519.PublicKey
	identity *identity.Verifier
	m        *metrics
	reg      *prometheus.Registry
	consumer *consumer
	// gateSecret derives the gate devices' credentials ("" disables check-in).
	gateSecret string
	transfers  TransferRules
	// mailer sends the ticket mails; nil without an SMTP host.
	mailer *ticketmail.Sender
}

// New builds the service on pool.
func New(ctx context.Context, cfg config.Tickets, pool *pgxpool.Pool) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tickets: %w", err)
	}
	keys, err := ParseKeys(cfg.TicketKeys)
	if err != nil {
		return nil, err
	}
	idv, err := identity.New(ctx, cfg.Identity)
	if err != nil {
		return nil, err
	}
	dialer, err := kafkaconn.Dialer(cfg.Kafka)
	if err != nil {
		return nil, err
	}
	rules := TransferRules{Max: cfg.MaxTransfers, Cutoff: cfg.TransferCutoff}
	if cfg.StartsAt != "" {
		if rules.StartsAt, err = time.Parse(time.RFC3339, cfg.StartsAt); err != nil {
			return nil, fmt.Errorf("tickets: event start (TICKETFAIR_EVENT_STARTS_AT) must be RFC 3339: %w", err)
		}
	}
	s := &Service{pool: pool, keys: keys, public: keys.PublicKeys(), identity: idv, m: newMetrics(), reg: prometheus.NewRegistry(),
		gateSecret: cfg.GateSecret, transfers: rules}
	s.consumer = newConsumer(cfg, pool, keys, s.m, dialer)
	if cfg.SMTPHost != "" {
		s.mailer = ticketmail.New(cfg.Mail, cfg.EventInfo, pool, slog.Default())
		s.consumer.issued = s.mailer.Wake
		s.reg.MustRegister(s.mailer.Collectors()...)
	}
	s.reg.MustRegister(s.m.messages, s.m.issued, s.m.storeErrors, s.m.fetchErrors, s.m.latency, s.m.checkins, s.m.checkinLatency, s.m.transfers,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ticketfair_tickets_consumer_lag", Help: "Messages of ticket-issued not yet read by this consumer.",
		}, func() float64 { return float64(s.consumer.reader.Stats().Lag) }))
	return s, nil
}

// Consume runs the consumer until ctx is cancelled.
func (s *Service) Consume(ctx context.Context) error { return s.consumer.run(ctx) }

// SendMail runs the mail workers until ctx is cancelled (nothing to do
// without an SMTP host).
func (s *Service) SendMail(ctx context.Context) error {
	if s.mailer == nil {
		<-ctx.Done()
		return nil
	}
	return s.mailer.Run(ctx)
}

// Close stops the Kafka reader (leaving the group).
func (s *Service) Close() error { return s.consumer.close() }

// Run serves `ticketfair tickets` until ctx is cancelled.
func Run(ctx context.Context, cfg config.Tickets, ready func(net.Addr)) error {
	if err := kafkaconn.Check(ctx, cfg.Kafka); err != nil {
		return fmt.Errorf("tickets: %w", err)
	}
	pool, err := database.Pool(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	defer pool.Close()
	s, err := New(ctx, cfg, pool)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	// A consumer that fails for good (not a broker outage: it rides that
	// out) takes the service down: Kubernetes restarts it.
	return httpapi.Run(ctx, httpapi.Server{Addr: cfg.HTTPAddr, Handler: s.Handler(),
		Drain: cfg.DrainDelay, Grace: cfg.ShutdownGrace, Ready: ready}, s.Consume, s.SendMail)
}

// Handler serves the API, probes and metrics.
func (s *Service) Handler() *httpapi.Mux {
	mux := httpapi.NewMux()
	mux.Handle("GET /orders/{orderId}/tickets", httpapi.HandlerFunc(s.orderTickets))
	mux.Handle("GET "+KeysPath, httpapi.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error {
		httpapi.WriteJSON(w, http.StatusOK, s.keys.JWKS())
		return nil
	}))
	mux.Handle("GET /tickets", httpapi.HandlerFunc(s.myTickets))
	mux.Handle("POST /tickets/{ticketId}/transfers", httpapi.HandlerFunc(s.transfer))
	mux.Handle("GET /tickets/{ticketId}/transfers", httpapi.HandlerFunc(s.ticketTransfers))
	mux.Handle("POST /events/{eventId}/checkins", httpapi.HandlerFunc(s.checkin))
	mux.Handle("POST /events/{eventId}/checkins/sync", httpapi.HandlerFunc(s.sync))
	mux.Handle("GET /events/{eventId}/checkins/report", httpapi.HandlerFunc(s.checkinReport))
	mux.Handle("GET /events/{eventId}/gate/list", httpapi.HandlerFunc(s.gateList))
	mux.Handle("GET /events/{eventId}/stats", httpapi.HandlerFunc(s.stats))
	mux.Handle("GET "+openapi.Path, openapi.Handler(openapi.Tickets))
	// The ticket table must exist: ready means migrated too.
	httpapi.Probes(mux, httpapi.Check{Name: "database", Fn: func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, "SELECT 1 FROM ticket LIMIT 0")
		return err
	}})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return mux
}

// orderTickets returns an order's tickets to the order's customer. Another
// customer gets the same 404 as for an unknown order, so order ids cannot
// be probed; 404 also means "not issued yet" (the client polls). Tickets
// the buyer handed on are listed without their code: it is the
// recipient's now.
func (s *Service) orderTickets(w http.ResponseWriter, r *http.Request) error {
	customer, err := s.identity.Customer(r)
	if err != nil {
		return &httpapi.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a valid identity token is required", Err: err}
	}
	orderID := r.PathValue("orderId")
	if orderID == "" || len(orderID) > 128 {
		return httpapi.Errorf(http.StatusBadRequest, "bad_order_id", "order id must be 1-128 characters")
	}
	ts, err := ForOrder(r.Context(), s.pool, orderID)
	if err != nil {
		return httpapi.DatabaseError(err)
	}
	if len(ts) == 0 || ts[0].CustomerID != customer {
		return httpapi.Errorf(http.StatusNotFound, "not_found", "no tickets for this order (yet)")
	}
	held, handedOn := []Ticket{}, []map[string]any{}
	for _, t := range ts {
		if t.HolderID == customer {
			held = append(held, t)
		} else {
			handedOn = append(handedOn, map[string]any{"ticketId": t.TicketID, "seatId": t.SeatID, "section": t.Section})
		}
	}
	s.withQR(held)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"orderId": orderID, "eventId": ts[0].EventID, "tickets": held, "transferred": handedOn,
	})
	return nil
}

// qrSize is the QR images' width in pixels: sharp on a phone, small in a
// JSON answer.
const qrSize = 320

// withQR renders each ticket's code as a QR image. A code that cannot be
// rendered keeps its text (the page shows it).
func (s *Service) withQR(ts []Ticket) {
	for i := range ts {
		png, err := qrcode.PNG(ts[i].Code, qrSize)
		if err != nil {
			slog.Warn("qr code", "ticketId", ts[i].TicketID, "err", err)
			continue
		}
		ts[i].QR = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	}
}
