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
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/booking"
	"github.com/ticketfair/ticketfair/workloads/internal/database"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations"
	"github.com/ticketfair/ticketfair/workloads/internal/relay"
	"github.com/ticketfair/ticketfair/workloads/kafkatopics"
)

// The relay's figure: how fast `ticketfair relay` drains a backlog of
// booking's outbox to a real Apache Kafka broker (claim, publish with
// acks=all, mark), against Apache Kafka's own producer benchmark
// (kafka-producer-perf-test, the class ProducerPerformance) sending as
// many records of the same size with the same acks to the same broker.

const (
	// relayOrders are paid through booking.Store, so the outbox holds
	// the ticket-issued rows booking writes (confirm_payment builds them);
	// they are copied up to relayRows, since paying 100,000 orders would
	// take the bench's whole budget for this section.
	relayOrders = 250
	relayRows   = 100_000
	// relayOrderSeats is a typical order's size: two tickets, as the
	// door's mails have.
	relayOrderSeats = 2
	// perfTopic is the perf tool's topic, beside the relay's: the same
	// broker, partitions and replication, an empty log of its own.
	perfTopic = "bench-producer-perf"
	// producerPerformance is the main class kafka-producer-perf-test.sh
	// runs.
	producerPerformance = "org.apache.kafka.tools.ProducerPerformance"
)

type relaySection struct {
	rows           int
	valueBytes     int // the published values' average size, the perf tool's --record-size
	keyBytes       int // their keys' average size (the perf tool sends none)
	batchSize      int
	partitions     int
	elapsed        time.Duration
	publishPerSec  float64
	perf           perfResult
	kafkaVersion   string
	relayEndOffset int64
}

// measureRelay fills a fresh booking database's outbox, starts a one-node
// Apache Kafka for this section alone, drains the outbox with the relay,
// then runs ProducerPerformance on the same broker, and stops the broker.
// The relay runs first, on a broker just started: whatever a warmer broker
// is worth goes to the baseline, not to the relay.
func measureRelay(ctx context.Context, pgURL, dir string, logf func(string, ...any)) (relaySection, error) {
	r := relaySection{rows: relayRows, partitions: kafkatopics.Partitions, kafkaVersion: localsvc.KafkaVersion}
	// Known before anything starts, so a machine without the jars fails
	// at once with what to run.
	if _, err := localsvc.KafkaHome(); err != nil {
		return r, fmt.Errorf("bench: relay publish/s runs against Apache Kafka: %w", err)
	}
	logf("ticketfair: relay: Apache Kafka %s (one KRaft node) starting, %d paid orders copied to %d outbox rows ...", localsvc.KafkaVersion, relayOrders, relayRows)
	// The broker's JVM starts while the outbox fills: neither is measured.
	var k *localsvc.ApacheKafka
	var kerr error
	kdone := make(chan struct{})
	go func() {
		defer close(kdone)
		k, kerr = localsvc.StartApacheKafka(ctx, localsvc.ApacheKafkaConfig{
			Topics: []string{events.TopicTicketIssued, events.TopicRefundRequested, perfTopic},
			// The partitions relay.CreateTopics gives a sale's topics; one
			// node, so one replica, as there.
			Partitions: kafkatopics.Partitions,
			Dir:        filepath.Join(dir, "kafka"),
		})
	}()
	// Stopped when the section ends, whatever ends it (Stop of nil is a
	// no-op: a failed start stops its nodes itself).
	defer func() { <-kdone; k.Stop() }()

	db, err := createDatabase(ctx, pgURL, "relaybench")
	if err != nil {
		return r, err
	}
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		return r, err
	}
	defer pool.Close()
	if r.valueBytes, r.keyBytes, err = fillOutbox(ctx, pool, relayOrders, relayRows); err != nil {
		return r, err
	}
	<-kdone
	if kerr != nil {
		return r, fmt.Errorf("bench: starting Apache Kafka for the relay: %w", kerr)
	}

	cfg := config.DefaultsOf[config.Relay]()
	cfg.Postgres = config.Postgres{DatabaseURL: db}
	cfg.Brokers = k.Brokers
	cfg.TopicTicketIssued, cfg.TopicRefundRequested = events.TopicTicketIssued, events.TopicRefundRequested
	r.batchSize = cfg.BatchSize
	logf("ticketfair: relay: draining %d outbox rows (batches of %d, acks=all) ...", relayRows, cfg.BatchSize)
	if r.elapsed, err = drainOutbox(ctx, cfg, relayRows); err != nil {
		return r, fmt.Errorf("%w\n%s", err, k.Logs())
	}
	r.publishPerSec = float64(relayRows) / r.elapsed.Seconds()
	if r.relayEndOffset, err = topicRecords(ctx, k.Brokers, events.TopicTicketIssued); err != nil {
		return r, err
	}
	if r.relayEndOffset < relayRows {
		return r, fmt.Errorf("bench: the relay marked %d rows published, but %s holds %d records", relayRows, events.TopicTicketIssued, r.relayEndOffset)
	}

	logf("baseline: kafka-producer-perf-test, %d records of %d bytes, acks=all, same broker ...", relayRows, r.valueBytes)
	if r.perf, err = producerPerf(ctx, k, perfTopic, relayRows, r.valueBytes); err != nil {
		return r, err
	}
	return r, nil
}

func (r relaySection) row() Row {
	return Row{What: "relay publish/s", PerSecond: r.publishPerSec,
		Baseline: fmt.Sprintf("kafka-producer-perf-test (acks=all, %d-byte records)", r.valueBytes), BaselineRPS: r.perf.recordsPerSec}
}

func (r relaySection) line() string {
	return fmt.Sprintf("\nrelay against Apache Kafka %s (one KRaft node, %d partitions, acks=all): %d outbox rows of booking's ticket-issued events "+
		"(values %d bytes on average, keys %d bytes, two headers) published and marked in %s, batches of %d; "+
		"kafka-producer-perf-test on the same broker: %d records of %d bytes without keys in %.0f records/s, latency p50 %s, p99 %s\n",
		r.kafkaVersion, r.partitions, r.rows, r.valueBytes, r.keyBytes, r.elapsed.Round(time.Millisecond), r.batchSize,
		r.perf.records, r.valueBytes, r.perf.recordsPerSec, r.perf.p50, r.perf.p99)
}

// createDatabase creates database name on the server of pgURL (a URL of
// its postgres database), migrated to booking's schema, and returns its
// URL.
func createDatabase(ctx context.Context, pgURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return "", err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	conn.Close(ctx)
	if err != nil {
		return "", err
	}
	db := strings.Replace(pgURL, "/postgres?", "/"+name+"?", 1)
	if err := migrations.Up(ctx, db); err != nil {
		return "", err
	}
	return db, nil
}

// fillOutbox pays orders orders of relayOrderSeats seats each through
// booking.Store (hold, then confirm, as a sale does), then copies their
// ticket-issued outbox rows, keys and payloads as they are, until the
// outbox holds rows unpublished rows. It returns the average size of the
// values and keys the relay will publish, read as the relay reads them.
func fillOutbox(ctx context.Context, pool *pgxpool.Pool, orders, rows int) (valueBytes, keyBytes int, err error) {
	if rows%orders != 0 {
		return 0, 0, fmt.Errorf("bench: %d outbox rows are not copies of %d orders", rows, orders)
	}
	// One section of 50-seat rows, enough for every order.
	seatRows := (orders*relayOrderSeats + 49) / 50
	sections, err := booking.ParseSeating(fmt.Sprintf("A:89.50:%d:50", seatRows))
	if err != nil {
		return 0, 0, err
	}
	if _, err := booking.Seed(ctx, pool, eventID, sections); err != nil {
		return 0, 0, err
	}
	st := booking.NewStore(pool, eventID, 10*time.Minute, 4, "EUR")
	for i := range orders {
		var seats []string
		for s := range relayOrderSeats {
			n := i*relayOrderSeats + s
			seats = append(seats, fmt.Sprintf("A-%d-%d", n/50+1, n%50+1))
		}
		customer := fmt.Sprintf("c%07d", i)
		h, err := st.HoldInPhase(ctx, customer, "bench-session-"+customer, "", customer+"@buyers.example", seats)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: hold for the relay's orders: %w", err)
		}
		amount, err := booking.ParseCents(h.Amount)
		if err != nil {
			return 0, 0, err
		}
		// A payment id as the demo's provider makes them: pay_ and 24 hex digits.
		pay := fmt.Sprintf("pay_%024x", i+1)
		res, err := st.Confirm(ctx, booking.Payment{OrderID: h.OrderID, IdempotencyKey: pay, PaymentID: pay, Amount: amount, Currency: h.Currency})
		if err != nil {
			return 0, 0, fmt.Errorf("bench: payment for the relay's orders: %w", err)
		}
		if res.Order.Status != booking.StatusPaid {
			return 0, 0, fmt.Errorf("bench: order %s is %s after its payment, not %s", h.OrderID, res.Order.Status, booking.StatusPaid)
		}
	}
	// The values as the relay reads them (jsonb as text, pgx's []byte).
	q, err := pool.Query(ctx, `SELECT key, payload FROM outbox WHERE topic = $1 AND published_at IS NULL ORDER BY id`, events.TopicTicketIssued)
	if err != nil {
		return 0, 0, err
	}
	var n, values, keys int
	for q.Next() {
		var key string
		var payload []byte
		if err := q.Scan(&key, &payload); err != nil {
			q.Close()
			return 0, 0, err
		}
		n, values, keys = n+1, values+len(payload), keys+len(key)
	}
	q.Close()
	if err := q.Err(); err != nil {
		return 0, 0, err
	}
	if n != orders {
		return 0, 0, fmt.Errorf("bench: %d paid orders wrote %d ticket-issued outbox rows", orders, n)
	}
	// Copy g interleaves the orders, as rows of many orders follow each
	// other in a sale.
	if _, err := pool.Exec(ctx, `INSERT INTO outbox (topic, key, event_type, payload)
		SELECT o.topic, o.key, o.event_type, o.payload FROM generate_series(2, $1::int) g CROSS JOIN outbox o
		 WHERE o.published_at IS NULL ORDER BY g, o.id`, rows/orders); err != nil {
		return 0, 0, fmt.Errorf("bench: copying the outbox rows: %w", err)
	}
	// A live outbox has been vacuumed and analyzed long before: the
	// relay's claim should meet the plan and visibility map it has then.
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE outbox"); err != nil {
		return 0, 0, err
	}
	var unpublished int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE published_at IS NULL`).Scan(&unpublished); err != nil {
		return 0, 0, err
	}
	if unpublished != rows {
		return 0, 0, fmt.Errorf("bench: the outbox holds %d unpublished rows, want %d", unpublished, rows)
	}
	return (values + n/2) / n, (keys + n/2) / n, nil
}

// drainOutbox runs the relay in this process, as `ticketfair relay` runs
// it (relay.New and Run, the configured defaults), and times it from its
// start, which includes taking the lock and connecting to the broker, as
// the perf tool's time includes its producer's first metadata, until no
// row is left unpublished: a row is marked only after the broker
// acknowledged it with acks=all.
func drainOutbox(ctx context.Context, cfg config.Relay, rows int) (time.Duration, error) {
	pool, err := database.Pool(ctx, cfg.Postgres)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	rl, err := relay.New(cfg, pool, prometheus.NewRegistry())
	if err != nil {
		return 0, err
	}
	defer rl.Close()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- rl.Run(rctx) }()
	// Polled through the partial index of unpublished rows, a cheap read
	// beside the relay's work.
	const limit = 2 * time.Minute
	for {
		var left bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM outbox WHERE published_at IS NULL)`).Scan(&left); err != nil {
			return 0, err
		}
		if !left {
			break
		}
		if time.Since(start) > limit {
			var n int
			_ = pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE published_at IS NOT NULL`).Scan(&n)
			return 0, fmt.Errorf("bench: the relay published %d of %d outbox rows in %s", n, rows, limit)
		}
		select {
		case err := <-done:
			return 0, fmt.Errorf("bench: the relay stopped before the outbox was drained: %v", err)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		return 0, err
	}
	return elapsed, nil
}

// topicRecords counts the records of topic: the sum of its partitions'
// end offsets (the log is new, its start offsets 0).
func topicRecords(ctx context.Context, brokers []string, topic string) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	if err := ends.Error(); err != nil {
		return 0, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n, nil
}

// perfResult is the summary line of ProducerPerformance.
type perfResult struct {
	records       int64
	recordsPerSec float64
	p50, p99      time.Duration
}

// producerPerf runs ProducerPerformance, as kafka-producer-perf-test.sh
// does, against k's first broker: records records of size bytes, as fast
// as it can (--throughput -1), with acks=all and the producer's defaults
// otherwise.
func producerPerf(ctx context.Context, k *localsvc.ApacheKafka, topic string, records, size int) (perfResult, error) {
	cmd := k.Tool(ctx, producerPerformance, "--topic", topic,
		"--num-records", strconv.Itoa(records), "--record-size", strconv.Itoa(size), "--throughput", "-1",
		"--bootstrap-server", k.Brokers[0], "--command-property", "acks=all")
	// Its summary prints a %f: a locale's decimal comma would not parse.
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return perfResult{}, fmt.Errorf("bench: kafka-producer-perf-test: %w\n%s", err, out.String())
	}
	p, err := parseProducerPerf(out.String())
	if err != nil {
		return p, fmt.Errorf("bench: kafka-producer-perf-test: %w\n%s", err, out.String())
	}
	if p.records != int64(records) {
		return p, fmt.Errorf("bench: kafka-producer-perf-test sent %d records, not %d:\n%s", p.records, records, out.String())
	}
	return p, nil
}

// perfSummary is ProducerPerformance's last line (Stats.printTotal), e.g.
// "100000 records sent, 42105.263158 records/sec (17.17 MB/sec), 812.34
// ms avg latency, 1380.00 ms max latency, 842 ms 50th, 1254 ms 95th, 1342
// ms 99th, 1371 ms 99.9th." With --warmup-records a second one, of the
// "steady state", follows; this bench sends none.
var perfSummary = regexp.MustCompile(`(?m)^(\d+) records sent, ([0-9.]+) records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th, \d+ ms 99\.9th\.$`)

// parseProducerPerf reads the summary line of ProducerPerformance's
// output (the progress lines every 5 s lack the percentiles).
func parseProducerPerf(out string) (perfResult, error) {
	m := perfSummary.FindAllStringSubmatch(strings.ReplaceAll(out, "\r\n", "\n"), -1)
	if len(m) == 0 {
		return perfResult{}, errors.New("no summary line (\"N records sent, X records/sec ... 99.9th.\") in its output")
	}
	last := m[len(m)-1]
	var p perfResult
	var err error
	if p.records, err = strconv.ParseInt(last[1], 10, 64); err != nil {
		return p, err
	}
	if p.recordsPerSec, err = strconv.ParseFloat(last[2], 64); err != nil {
		return p, err
	}
	p50, _ := strconv.Atoi(last[3])
	p99, _ := strconv.Atoi(last[4])
	p.p50, p.p99 = time.Duration(p50)*time.Millisecond, time.Duration(p99)*time.Millisecond
	return p, nil
}
