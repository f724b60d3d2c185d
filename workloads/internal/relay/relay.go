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

// Package relay publishes the transactional outbox to Kafka: `ticketfair
// relay`. Delivery is at least once: a row is marked published only after
// the broker acknowledged it (acks=all), so a crash between the ack and the
// mark republishes the row and consumers deduplicate on the outbox id header.
//
// One relay per database is active at a time: it holds a PostgreSQL session
// advisory lock on a dedicated connection and does all its work (claiming,
// marking, LISTEN) on that same connection, so losing the connection loses
// the lock and the unmarked batch together. Other replicas are hot standbys
// that retry the lock. A single publisher, claiming rows in id order and
// writing them synchronously, keeps every key's events in order.
package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/segmentio/kafka-go"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/kafkaconn"
	"github.com/ticketfair/ticketfair/workloads/internal/retry"
	"github.com/ticketfair/ticketfair/workloads/kafkatopics"
)

// LockKey is the advisory lock the active relay holds ("tfoutbox"). Advisory
// locks are per database, so each sale's database has its own active relay.
const LockKey int64 = 0x74666f7574626f78

// NotifyChannel is the channel the outbox insert trigger notifies.
const NotifyChannel = "ticketfair_outbox"

// pruneBatch bounds one DELETE of old published rows.
const pruneBatch = 5000

var errStandby = errors.New("another relay holds the outbox lock")

// Relay moves outbox rows to Kafka.
type Relay struct {
	cfg    config.Relay
	pool   *pgxpool.Pool
	writer *kafka.Writer
	topics map[string]string // outbox topic -> configured Kafka topic
	m      *metrics
	log    *slog.Logger
	leader atomic.Bool

	// afterAck, when set (tests only), runs after the broker acknowledged a
	// batch and before its rows are marked; an error abandons the batch
	// unmarked, as a crash at that point would.
	afterAck func(ids []int64) error
}

// New builds a relay on pool; reg receives its metrics. It fails on Kafka
// TLS or SASL settings that cannot make a transport (a PEM that does not
// parse, an unknown mechanism).
func New(cfg config.Relay, pool *pgxpool.Pool, reg prometheus.Registerer) (*Relay, error) {
	// Settings left unset take the defaults of their config tags; a
	// BackoffMax below BackoffMin is raised to it.
	def := config.DefaultsOf[config.Relay]()
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = def.BatchSize
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = def.PollInterval
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = def.BackoffMin
	}
	if cfg.BackoffMax < cfg.BackoffMin {
		cfg.BackoffMax = cfg.BackoffMin
	}
	if cfg.LockRetry <= 0 {
		cfg.LockRetry = def.LockRetry
	}
	if cfg.PruneInterval <= 0 {
		cfg.PruneInterval = def.PruneInterval
	}
	transport, err := kafkaconn.Transport(cfg.Kafka)
	if err != nil {
		return nil, fmt.Errorf("relay: kafka settings: %w", err)
	}
	r := &Relay{
		cfg:  cfg,
		pool: pool,
		// kafka-go's defaults lose data or reorder here: acks=all, key
		// hashing, synchronous writes. Each partition's batches are written
		// one after another by a single goroutine, so a key stays in order
		// even across the writer's own retries. BatchTimeout is tiny because
		// a synchronous WriteMessages otherwise waits for a partial batch.
		writer: &kafka.Writer{
			Addr:            kafka.TCP(cfg.Brokers...),
			Transport:       transport,
			Balancer:        &kafka.Hash{},
			RequiredAcks:    kafka.RequireAll,
			Async:           false,
			BatchSize:       cfg.BatchSize,
			BatchTimeout:    time.Millisecond,
			MaxAttempts:     3,
			WriteBackoffMin: 50 * time.Millisecond,
			WriteBackoffMax: 500 * time.Millisecond,
			ReadTimeout:     10 * time.Second,
			WriteTimeout:    10 * time.Second,
		},
		topics: map[string]string{
			events.TopicTicketIssued:    cfg.TopicTicketIssued,
			events.TopicRefundRequested: cfg.TopicRefundRequested,
		},
		log: slog.Default().With("component", "relay"),
	}
	r.m = newMetrics(reg, pool, &r.leader)
	return r, nil
}

// Leader reports whether this replica currently holds the outbox lock.
func (r *Relay) Leader() bool { return r.leader.Load() }

// Close releases the Kafka writer.
func (r *Relay) Close() error { return r.writer.Close() }

// Run relays until ctx is cancelled: it waits for the outbox lock, then
// publishes, and goes back to waiting whenever it loses the lock.
func (r *Relay) Run(ctx context.Context) error {
	var prune sync.WaitGroup
	prune.Go(func() { r.pruneLoop(ctx) })
	defer prune.Wait()
	attempt := 0
	for ctx.Err() == nil {
		err := r.lead(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errStandby):
			attempt = 0
			_ = retry.Sleep(ctx, r.cfg.LockRetry)
		default:
			r.log.Warn("relay lost its database session", "err", err)
			_ = retry.Sleep(ctx, retry.Backoff(attempt, r.cfg.BackoffMin, r.cfg.BackoffMax))
			attempt++
		}
	}
	return nil
}

// lead takes the lock on a dedicated connection and publishes until ctx is
// done or the connection fails.
func (r *Relay) lead(ctx context.Context) error {
	pcfg, err := database.ConnConfig(r.cfg.Postgres)
	if err != nil {
		return err
	}
	// The server must notice a vanished relay within seconds, not after the
	// kernel's two-hour keepalive: until it does, the dead session keeps
	// the lock and no replica publishes.
	pcfg.RuntimeParams["application_name"] = "ticketfair-relay"
	pcfg.RuntimeParams["tcp_keepalives_idle"] = "10"
	pcfg.RuntimeParams["tcp_keepalives_interval"] = "5"
	pcfg.RuntimeParams["tcp_keepalives_count"] = "3"
	conn, err := pgx.ConnectConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	var locked bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", LockKey).Scan(&locked); err != nil {
		return fmt.Errorf("try outbox lock: %w", err)
	}
	if !locked {
		return errStandby
	}
	r.leader.Store(true)
	defer r.leader.Store(false)
	r.log.Info("active relay: holding the outbox lock")
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}

	failures := 0
	for ctx.Err() == nil {
		n, err := r.publishBatch(ctx, conn)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.m.errors.Inc()
			if conn.IsClosed() {
				return err
			}
			d := retry.Backoff(failures, r.cfg.BackoffMin, r.cfg.BackoffMax)
			failures++
			r.log.Warn("publish failed; retrying", "err", err, "in", d, "failures", failures)
			_ = retry.Sleep(ctx, d)
			continue
		}
		failures = 0
		if n == r.cfg.BatchSize {
			continue // more rows are waiting
		}
		if err := r.wait(ctx, conn); err != nil {
			return err
		}
	}
	return nil
}

// wait blocks until an outbox insert is notified or the poll interval
// passes, then drops the notifications already buffered: one batch query
// serves them all.
func (r *Relay) wait(ctx context.Context, conn *pgx.Conn) error {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.PollInterval)
	_, err := conn.WaitForNotification(wctx)
	cancel()
	if err != nil && ctx.Err() == nil && !pgconn.Timeout(err) {
		return fmt.Errorf("wait for notification: %w", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	for {
		if _, err := conn.WaitForNotification(done); err != nil {
			return nil
		}
	}
}

// publishBatch claims up to BatchSize unpublished rows, publishes them and
// marks them, all in one transaction on the lock holder's connection.
func (r *Relay) publishBatch(ctx context.Context, conn *pgx.Conn) (int, error) {
	// A batch in flight at shutdown gets ShutdownGrace to finish, so a
	// rolling update does not republish it.
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(r.cfg.ShutdownGrace, cancel) })
	defer stop()

	start := time.Now()
	tx, err := conn.Begin(bctx)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op

	// SKIP LOCKED: rows another transaction is already handling (a relay
	// whose lock session is dying) are left alone rather than waited for.
	rows, err := tx.Query(bctx, `SELECT id, topic, key, event_type, payload, created_at
		FROM outbox WHERE published_at IS NULL
		ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, r.cfg.BatchSize)
	if err != nil {
		return 0, fmt.Errorf("claim rows: %w", err)
	}
	var (
		msgs    []kafka.Message
		ids     []int64
		created []time.Time
	)
	for rows.Next() {
		var (
			id                    int64
			topic, key, eventType string
			payload               []byte
			createdAt             time.Time
		)
		if err := rows.Scan(&id, &topic, &key, &eventType, &payload, &createdAt); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read row: %w", err)
		}
		ids = append(ids, id)
		created = append(created, createdAt)
		msgs = append(msgs, kafka.Message{
			Topic: r.topic(topic),
			Key:   []byte(key),
			Value: payload,
			Headers: []kafka.Header{
				{Key: events.HeaderOutboxID, Value: []byte(strconv.FormatInt(id, 10))},
				{Key: events.HeaderEventType, Value: []byte(eventType)},
			},
		})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("claim rows: %w", err)
	}
	if len(msgs) == 0 {
		return 0, tx.Commit(bctx)
	}

	if err := r.writer.WriteMessages(bctx, msgs...); err != nil {
		return 0, fmt.Errorf("publish %d rows (ids %d..%d): %w", len(ids), ids[0], ids[len(ids)-1], summarize(err))
	}
	acked := time.Now()
	if r.afterAck != nil {
		if err := r.afterAck(ids); err != nil {
			return 0, err
		}
	}
	if _, err := tx.Exec(bctx, "UPDATE outbox SET published_at = now() WHERE id = ANY($1)", ids); err != nil {
		return 0, fmt.Errorf("mark %d rows published: %w", len(ids), err)
	}
	if err := tx.Commit(bctx); err != nil {
		return 0, fmt.Errorf("commit marks: %w", err)
	}
	r.m.published.Add(float64(len(ids)))
	r.m.batch.Observe(time.Since(start).Seconds())
	for _, c := range created {
		r.m.latency.Observe(acked.Sub(c).Seconds())
	}
	return len(ids), nil
}

// topic maps an outbox topic to its configured Kafka topic; unknown topics
// are published under their own name.
func (r *Relay) topic(t string) string {
	if k, ok := r.topics[t]; ok && k != "" {
		return k
	}
	return t
}

// pruneLoop deletes published rows older than the retention, in batches,
// while this replica is the active one.
func (r *Relay) pruneLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.PruneInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !r.leader.Load() || r.cfg.Retention <= 0 {
			continue
		}
		if n, err := Prune(ctx, r.pool, r.cfg.Retention); err != nil {
			r.log.Warn("prune outbox", "err", err)
		} else {
			r.m.pruned.Add(float64(n))
		}
	}
}

// Prune deletes rows published more than retention ago, pruneBatch rows per
// statement so no single transaction holds many locks, and returns how many
// went.
func Prune(ctx context.Context, pool *pgxpool.Pool, retention time.Duration) (int64, error) {
	var total int64
	for {
		tag, err := pool.Exec(ctx, `DELETE FROM outbox WHERE id IN (
			SELECT id FROM outbox
			WHERE published_at IS NOT NULL AND published_at < now() - make_interval(secs => $1)
			ORDER BY published_at LIMIT $2)`, retention.Seconds(), pruneBatch)
		if err != nil {
			return total, fmt.Errorf("prune outbox: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < pruneBatch {
			return total, nil
		}
	}
}

// CreateTopics creates the configured topics (3 partitions), accepting ones
// that exist. For the local sale; production topics are provisioned.
func CreateTopics(ctx context.Context, cfg config.Kafka) error {
	return kafkatopics.Create(ctx, cfg, cfg.TopicTicketIssued, cfg.TopicRefundRequested)
}

// Run serves `ticketfair relay`: the relay loop plus /healthz, /readyz and
// /metrics on cfg.HTTPAddr, until ctx is cancelled.
func Run(ctx context.Context, cfg config.Relay, ready func(net.Addr)) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	if err := kafkaconn.Check(ctx, cfg.Kafka); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	pool, err := database.Pool(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	defer pool.Close()
	if cfg.CreateTopics {
		if err := CreateTopics(ctx, cfg.Kafka); err != nil {
			return err
		}
	}
	reg := prometheus.NewRegistry()
	r, err := New(cfg, pool, reg)
	if err != nil {
		return err
	}
	defer r.Close()

	// The relay loop retries its own failures (a lost lock, session or
	// publish) and stops only with ctx.
	return httpapi.Run(ctx, httpapi.Server{Addr: cfg.HTTPAddr, Handler: r.Handler(reg),
		Drain: cfg.DrainDelay, Grace: cfg.ShutdownGrace, Ready: ready}, r.Run)
}

// Handler serves the probes and metrics.
func (r *Relay) Handler(reg *prometheus.Registry) *httpapi.Mux {
	mux := httpapi.NewMux()
	// A standby replica is ready too: it is healthy and takes over the
	// moment the active one goes away (ticketfair_relay_active tells which
	// one is active).
	httpapi.Probes(mux, httpapi.Check{Name: "database", Fn: r.pool.Ping})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return mux
}

// summarize shortens kafka-go's per-message errors (often one cause
// repeated a batch's worth of times) to a count and the first cause.
func summarize(err error) error {
	var we kafka.WriteErrors
	if !errors.As(err, &we) {
		return err
	}
	for _, e := range we {
		if e != nil {
			return fmt.Errorf("%d of %d messages failed, first: %w", we.Count(), len(we), e)
		}
	}
	return err
}
