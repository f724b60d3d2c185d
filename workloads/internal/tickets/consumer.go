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
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"
	"golang.org/x/sync/errgroup"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
)

// consumer reads ticket-issued in a consumer group and issues tickets.
// Offsets are committed only after a message's tickets are stored, so a
// crash re-reads it and the database's dedupe makes that harmless.
type consumer struct {
	cfg  config.Tickets
	pool *pgxpool.Pool
	keys *Keys
	// issued, when set, is called after an order's tickets are stored
	// (it wakes the mail workers).
	issued func()
	m      *metrics
	log    *slog.Logger
	reader *kafka.Reader
	// closed is set before the reader is closed: FetchMessage answers
	// io.EOF both for a closed reader and for a consumer group whose
	// coordinator's connection broke, and only the first ends the fetcher.
	closed atomic.Bool

	// beforeCommit, when set (tests only), runs after a message is stored
	// and before its offset is committed; an error stops the consumer
	// without committing, as a crash there would.
	beforeCommit func(kafka.Message) error
}

func newConsumer(cfg config.Tickets, pool *pgxpool.Pool, keys *Keys, m *metrics, dialer *kafka.Dialer) *consumer {
	return &consumer{
		cfg: cfg, pool: pool, keys: keys, m: m,
		log: slog.Default().With("component", "tickets"),
		reader: kafka.NewReader(kafka.ReaderConfig{
			Brokers:        cfg.Brokers,
			Dialer:         dialer,
			GroupID:        cfg.ConsumerGroup,
			Topic:          cfg.TopicTicketIssued,
			StartOffset:    kafka.FirstOffset, // a new group starts at the beginning: no paid order is skipped
			CommitInterval: commitInterval,    // offsets of stored messages, committed in the background
			MaxWait:        250 * time.Millisecond,
			ReadBackoffMin: 50 * time.Millisecond,
			ReadBackoffMax: time.Second,
		}),
	}
}

// commitInterval is how often the offsets of stored messages are
// committed (and on close). A synchronous commit per message is a round
// trip to the group coordinator each; storing is idempotent, so a crash
// that loses the last interval's commits only re-reads those messages.
const commitInterval = time.Second

func (c *consumer) close() error {
	c.closed.Store(true)
	return c.reader.Close()
}

// consumerBatch bounds the messages applied between two commits, and
// consumerWorkers how many of them are stored at once. One message at a
// time, a sale's payments outran the consumer: each order's transaction is
// a few round trips, and on a busy machine each round trip waits for a
// CPU, so the tickets of late buyers appeared more than 30 s after they
// paid. Orders are independent and storing is idempotent, so their
// messages may be stored in any order; a batch's offsets are committed
// only once every message of it is stored.
const (
	consumerBatch   = 64
	consumerWorkers = 4
)

// run consumes until ctx is cancelled or a commit hook stops it: one
// goroutine fetches, and the messages waiting when a batch starts (at
// least one, at most consumerBatch) are stored by up to consumerWorkers at
// once, then committed.
func (c *consumer) run(ctx context.Context) error {
	fctx, stop := context.WithCancel(ctx)
	msgs := make(chan kafka.Message, consumerBatch)
	fetched := make(chan error, 1)
	go func() { fetched <- c.fetch(fctx, msgs) }()
	fetching := true
	defer func() {
		// The fetcher is done before the caller may close the reader.
		stop()
		if fetching {
			<-fetched
		}
	}()
	batch := make([]kafka.Message, 0, consumerBatch)
	for {
		select {
		case m := <-msgs:
			batch = append(batch[:0], m)
		case err := <-fetched:
			fetching = false
			return err
		}
	waiting:
		for len(batch) < consumerBatch {
			select {
			case m := <-msgs:
				batch = append(batch, m)
			default:
				break waiting
			}
		}
		if err := c.handleAll(ctx, batch); err != nil {
			return nil // only ctx ends handle
		}
		if c.beforeCommit != nil {
			for _, m := range batch {
				if err := c.beforeCommit(m); err != nil {
					return err
				}
			}
		}
		if err := c.reader.CommitMessages(ctx, batch...); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// Not fatal: the messages are stored, a redelivery is a no-op.
			c.log.Warn("commit offsets", "messages", len(batch), "err", err)
		}
	}
}

// fetch sends messages to msgs until ctx is cancelled (nil) or the reader
// is closed. A failed fetch (the brokers unreachable, the group
// coordinator moving) is retried with backoff: the reader reconnects on
// its own, and exiting would take the HTTP API down with it and
// crash-loop for as long as the outage lasts.
func (c *consumer) fetch(ctx context.Context, msgs chan<- kafka.Message) error {
	failures := 0
	for {
		msg, err := c.reader.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if c.closed.Load() {
				return fmt.Errorf("fetch %s: %w", c.cfg.TopicTicketIssued, err)
			}
			failures++
			c.m.fetchErrors.Inc()
			d := retry.Backoff(failures, 100*time.Millisecond, 5*time.Second)
			c.log.Warn("fetch failed; retrying", "topic", c.cfg.TopicTicketIssued, "failures", failures, "retryIn", d, "err", err)
			if retry.Sleep(ctx, d) != nil {
				return nil
			}
			continue
		}
		if failures > 0 {
			c.log.Info("fetching again", "topic", c.cfg.TopicTicketIssued, "after", failures)
			failures = 0
		}
		select {
		case msgs <- msg:
		case <-ctx.Done():
			return nil
		}
	}
}

// handleAll stores batch's messages, up to consumerWorkers at once; its
// error is ctx's.
func (c *consumer) handleAll(ctx context.Context, batch []kafka.Message) error {
	var g errgroup.Group
	g.SetLimit(consumerWorkers)
	for _, m := range batch {
		g.Go(func() error { return c.handle(ctx, m) })
	}
	return g.Wait()
}

// handle applies one message, retrying storage failures with backoff until
// they succeed or ctx ends. A message that can never apply is logged and
// skipped so it does not block the partition.
func (c *consumer) handle(ctx context.Context, msg kafka.Message) error {
	var outboxID int64
	for _, h := range msg.Headers {
		switch h.Key {
		case events.HeaderOutboxID:
			outboxID, _ = strconv.ParseInt(string(h.Value), 10, 64)
		case events.HeaderEventType:
			if t := string(h.Value); t != events.TypeTicketIssued {
				c.m.messages.WithLabelValues("skipped").Inc()
				c.log.Warn("skipping message of another type", "eventType", t, "partition", msg.Partition, "offset", msg.Offset)
				return nil
			}
		}
	}
	var m events.TicketIssued
	if err := json.Unmarshal(msg.Value, &m); err != nil {
		c.reject(msg, fmt.Errorf("%w: %v", ErrInvalidMessage, err))
		return nil
	}
	for attempt := 0; ; attempt++ {
		n, err := IssueAndMail(ctx, c.pool, c.keys, outboxID, &m, c.cfg.SMTPHost != "")
		switch {
		case errors.Is(err, ErrInvalidMessage):
			c.reject(msg, err)
			return nil
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.m.storeErrors.Inc()
			lo := c.cfg.RetryBackoff
			if lo <= 0 {
				lo = 100 * time.Millisecond
			}
			d := retry.Backoff(attempt, lo, 10*time.Second)
			c.log.Warn("store tickets failed; retrying", "orderId", m.OrderID, "err", err, "in", d)
			if err := retry.Sleep(ctx, d); err != nil {
				return err
			}
			continue
		case n == 0:
			c.m.messages.WithLabelValues("duplicate").Inc()
			return nil
		}
		c.m.messages.WithLabelValues("issued").Inc()
		c.m.issued.Add(float64(n))
		if c.issued != nil {
			c.issued()
		}
		if !msg.Time.IsZero() {
			c.m.latency.Observe(time.Since(msg.Time).Seconds())
		}
		// The customer notification (an email later) is a structured event.
		c.log.InfoContext(ctx, "ticket ready", "event", "ticket_ready",
			"orderId", m.OrderID, "customerId", m.CustomerID, "eventId", m.EventID,
			"tickets", n, "outboxId", outboxID)
		return nil
	}
}

func (c *consumer) reject(msg kafka.Message, err error) {
	c.m.messages.WithLabelValues("rejected").Inc()
	c.log.Error("rejecting ticket-issued message", "partition", msg.Partition, "offset", msg.Offset,
		"key", string(msg.Key), "err", err)
}
