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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/migrations/migrationstest"
	"github.com/ticketfair/ticketfair/workloads/internal/openapitest"
	"github.com/ticketfair/ticketfair/workloads/openapi"
)

func TestMain(m *testing.M) { testenv.Main(m, ticketsAPI.AfterTests) }

// ticketsAPI checks every exchange of the tests against the served document.
var ticketsAPI = openapitest.MustLoad(openapi.Tickets)

const (
	eventID = 42
	secret  = "identity-secret"
	issuer  = "test-idp"
	aud     = "ticketfair"
)

// newDB returns a migrated database and a pool on it.
func newDB(t testing.TB) (string, *pgxpool.Pool) { return migrationstest.NewDB(t) }

func testKeys(t testing.TB) string {
	t.Helper()
	k1, err := accesstoken.GenerateKey("tk1")
	if err != nil {
		t.Fatal(err)
	}
	k2, err := accesstoken.GenerateKey("tk0")
	if err != nil {
		t.Fatal(err)
	}
	return k1 + "," + k2
}

func testConfig(t testing.TB, url string, brokers []string) config.Tickets {
	return config.Tickets{
		Server:        config.Server{HTTPAddr: "127.0.0.1:0", ShutdownGrace: 2 * time.Second},
		Postgres:      config.Postgres{DatabaseURL: url},
		Kafka:         config.Kafka{Brokers: brokers, TopicTicketIssued: events.TopicTicketIssued},
		Identity:      config.Identity{IdentityHMACSecret: secret, IdentityIssuer: issuer, IdentityAudience: aud},
		ConsumerGroup: "tickets",
		TicketKeys:    testKeys(t),
		RetryBackoff:  20 * time.Millisecond,
	}
}

func order(i, seats int) *events.TicketIssued {
	o := fmt.Sprintf("ord-%04d", i)
	m := &events.TicketIssued{OrderID: o, EventID: eventID, CustomerID: fmt.Sprintf("cust-%04d", i),
		PaymentID: "pay-" + o, Amount: "10.00", Currency: "EUR", PaidAt: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)}
	for s := range seats {
		m.Seats = append(m.Seats, events.Seat{SeatID: fmt.Sprintf("%s-s%d", o, s), Section: "B", Price: "5.00"})
	}
	return m
}

// produce writes messages as the relay does, but with franz-go: an
// independent client.
func produce(t testing.TB, brokers []string, outboxID int64, m any) {
	t.Helper()
	produceRaw(t, brokers, outboxID, keyOf(m), mustJSON(m))
}

func keyOf(m any) string {
	if ti, ok := m.(*events.TicketIssued); ok {
		return ti.OrderID
	}
	return "other"
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

var producers sync.Map // brokers -> *kgo.Client

func produceRaw(t testing.TB, brokers []string, outboxID int64, key string, value []byte) {
	t.Helper()
	k := strings.Join(brokers, ",")
	cl, ok := producers.Load(k)
	if !ok {
		c, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RequiredAcks(kgo.AllISRAcks()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { producers.Delete(k); c.Close() })
		cl = c
		producers.Store(k, c)
	}
	rec := &kgo.Record{Topic: events.TopicTicketIssued, Key: []byte(key), Value: value}
	if outboxID > 0 {
		rec.Headers = []kgo.RecordHeader{
			{Key: events.HeaderOutboxID, Value: []byte(strconv.FormatInt(outboxID, 10))},
			{Key: events.HeaderEventType, Value: []byte(events.TypeTicketIssued)},
		}
	}
	if err := cl.(*kgo.Client).ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func countTickets(t testing.TB, pool *pgxpool.Pool) int {
	t.Helper()
	n, err := Count(context.Background(), pool, eventID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Duplicates, replays under another outbox id and many concurrent
// deliveries of one order create each seat's ticket once.
func TestIssueOncePerSeat(t *testing.T) {
	_, pool := newDB(t)
	keys, err := ParseKeys(testKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := order(1, 3)
	if n, err := Issue(ctx, pool, keys, 100, m); err != nil || n != 3 {
		t.Fatalf("first delivery: %d, %v; want 3 tickets", n, err)
	}
	if n, err := Issue(ctx, pool, keys, 100, m); err != nil || n != 0 {
		t.Fatalf("redelivery: %d, %v; want 0", n, err)
	}
	if n, err := Issue(ctx, pool, keys, 0, m); err != nil || n != 0 {
		t.Fatalf("delivery without outbox id: %d, %v; want 0", n, err)
	}

	// 32 goroutines deliver the same order under different outbox ids.
	m2 := order(2, 4)
	var wg sync.WaitGroup
	var total atomic.Int64
	errc := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := Issue(ctx, pool, keys, int64(200+i), m2)
			if err != nil {
				errc <- err
			}
			total.Add(int64(n))
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if total.Load() != 4 {
		t.Fatalf("concurrent deliveries issued %d tickets, want 4", total.Load())
	}
	if n := countTickets(t, pool); n != 7 {
		t.Fatalf("%d tickets, want 7", n)
	}
	ts, err := ForOrder(ctx, pool, m2.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range ts {
		c, err := VerifyCode(tk.Code, keys.PublicKeys(), eventID)
		if err != nil {
			t.Fatalf("code of %s: %v", tk.TicketID, err)
		}
		if c.Subject != tk.TicketID || c.SeatID != tk.SeatID || c.OrderID != m2.OrderID {
			t.Fatalf("code claims %+v do not match ticket %+v", c, tk)
		}
	}
	if n, err := SeatsSoldTwice(ctx, pool, eventID); err != nil || n != 0 {
		t.Fatalf("seats sold twice: %d, %v", n, err)
	}
	// Another order claiming a seat already ticketed shows up as oversold.
	m3 := order(3, 0)
	m3.Seats = []events.Seat{{SeatID: m2.Seats[0].SeatID}}
	if _, err := Issue(ctx, pool, keys, 300, m3); err != nil {
		t.Fatal(err)
	}
	if n, err := SeatsSoldTwice(ctx, pool, eventID); err != nil || n != 1 {
		t.Fatalf("seats sold twice: %d, %v; want 1", n, err)
	}

	for name, bad := range map[string]*events.TicketIssued{
		"no order":    {CustomerID: "c", Seats: []events.Seat{{SeatID: "x"}}},
		"no customer": {OrderID: "o", Seats: []events.Seat{{SeatID: "x"}}},
		"no seats":    {OrderID: "o", CustomerID: "c"},
		"empty seat":  {OrderID: "o", CustomerID: "c", Seats: []events.Seat{{}}},
	} {
		if _, err := Issue(ctx, pool, keys, 999, bad); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("%s: %v, want ErrInvalidMessage", name, err)
		}
	}
}

func TestTicketCodes(t *testing.T) {
	if _, err := ParseKeys(""); err == nil {
		t.Error("empty keys accepted")
	}
	if _, err := ParseKeys("nokid"); err == nil {
		t.Error("key without kid accepted")
	}
	if _, err := ParseKeys("k:c2hvcnQ="); err == nil || !strings.Contains(err.Error(), "seed has 5 bytes") {
		t.Errorf("short seed: %v", err)
	}
	if _, err := ParseKeys("k:!!!"); err == nil {
		t.Error("non-base64 seed accepted")
	}
	keys, err := ParseKeys(testKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	paid := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	id := TicketID("o1", "s1")
	code, err := keys.Sign(id, eventID, "o1", "s1", "A", 0, paid)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := keys.Sign(id, eventID, "o1", "s1", "A", 0, paid)
	if again != code {
		t.Error("the same ticket got two different codes")
	}
	pub := keys.PublicKeys()
	if _, err := VerifyCode(code, pub, eventID); err != nil {
		t.Fatalf("valid code: %v", err)
	}
	if _, err := VerifyCode(code, pub, eventID+1); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("code for another event: %v", err)
	}
	parts := strings.Split(code, ".")
	tampered := parts[0] + "." + parts[1] + "x." + parts[2]
	if _, err := VerifyCode(tampered, pub, eventID); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("tampered code: %v", err)
	}
	other, _ := ParseKeys(testKeys(t))
	if _, err := VerifyCode(code, other.PublicKeys(), eventID); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("code checked against other keys: %v", err)
	}
	forged, _ := other.Sign(TicketID("o1", "s2"), eventID, "o1", "s1", "A", 0, paid)
	if _, err := VerifyCode(forged, other.PublicKeys(), eventID); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("ticket id not matching its seat: %v", err)
	}
}

type service struct {
	base string
	stop func() error
	done <-chan struct{} // closed when Run returned
}

func startRun(t testing.TB, cfg config.Tickets) service {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		err := Run(ctx, cfg, func(a net.Addr) { addrc <- a })
		close(done)
		errc <- err
	}()
	s := service{done: done}
	select {
	case a := <-addrc:
		s.base = "http://" + a.String()
	case err := <-errc:
		cancel()
		t.Fatalf("tickets.Run: %v", err)
	}
	var once sync.Once
	var err error
	s.stop = func() error { once.Do(func() { cancel(); err = <-errc }); return err }
	t.Cleanup(func() { _ = s.stop() })
	return s
}

func call(t testing.TB, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ticketsAPI.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func token(t testing.TB, customer string) string {
	t.Helper()
	tok, err := identity.SignHS256(secret, issuer, aud, customer, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var messagesMetric = regexp.MustCompile(`ticketfair_tickets_messages_total\{result="(\w+)"\} (\d+)`)

func results(t testing.TB, base string) map[string]int {
	t.Helper()
	_, body := call(t, base+"/metrics", "")
	out := map[string]int{}
	for _, m := range messagesMetric.FindAllStringSubmatch(string(body), -1) {
		out[m[1]], _ = strconv.Atoi(m[2])
	}
	return out
}

// The service consumes ticket-issued (duplicates, a replay and a malformed
// message among them), issues one ticket per seat, and serves an order's
// tickets to its own customer only, with codes that verify against the
// published keys.
func TestServiceIssuesAndServesTickets(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	const orders = 60
	for i := range orders {
		produce(t, brokers, int64(i+1), order(i, 1+i%4))
	}
	produceRaw(t, brokers, 1000, "bad", []byte("{not json"))
	produce(t, brokers, 3, order(2, 3))    // redelivery: same outbox id
	produce(t, brokers, 2000, order(5, 2)) // replay under a new outbox id
	seats := 0
	for i := range orders {
		seats += 1 + i%4
	}

	s := startRun(t, testConfig(t, url, brokers))
	testenv.WaitFor(t, 60*time.Second, "all messages consumed", func() bool {
		r := results(t, s.base)
		return r["issued"]+r["duplicate"]+r["rejected"] >= orders+3
	})
	if r := results(t, s.base); r["issued"] != orders || r["duplicate"] != 2 || r["rejected"] != 1 {
		t.Fatalf("results %v, want %d issued, 2 duplicate, 1 rejected", r, orders)
	}
	if n := countTickets(t, pool); n != seats {
		t.Fatalf("%d tickets, want %d", n, seats)
	}

	// The served document is the embedded one; the probes answer as it says.
	if code, body := call(t, s.base+openapi.Path, ""); code != http.StatusOK || !bytes.Equal(body, openapi.Tickets) {
		t.Fatalf("GET %s: %d, %d bytes; want the embedded document", openapi.Path, code, len(body))
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := call(t, s.base+p, ""); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}

	// The published keys verify the served codes.
	code, body := call(t, s.base+KeysPath, "")
	if code != http.StatusOK {
		t.Fatalf("keys: %d %s", code, body)
	}
	pub, err := accesstoken.ParseJWKS(body)
	if err != nil || len(pub) != 2 {
		t.Fatalf("published keys: %d, %v", len(pub), err)
	}
	o := order(7, 4)
	code, body = call(t, s.base+"/orders/"+o.OrderID+"/tickets", token(t, o.CustomerID))
	if code != http.StatusOK {
		t.Fatalf("own tickets: %d %s", code, body)
	}
	var got struct {
		OrderID string   `json:"orderId"`
		EventID int64    `json:"eventId"`
		Tickets []Ticket `json:"tickets"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.OrderID != o.OrderID || got.EventID != eventID || len(got.Tickets) != 4 {
		t.Fatalf("tickets response %s", body)
	}
	for i, tk := range got.Tickets {
		c, err := VerifyCode(tk.Code, pub, eventID)
		if err != nil {
			t.Fatalf("ticket %d: %v", i, err)
		}
		if c.SeatID != o.Seats[i].SeatID || c.OrderID != o.OrderID {
			t.Fatalf("ticket %d claims %+v", i, c)
		}
	}
	if strings.Contains(string(body), o.CustomerID) {
		t.Error("response leaks the customer id")
	}

	for name, tc := range map[string]struct {
		path, token string
		status      int
		code        string
	}{
		"other customer": {"/orders/" + o.OrderID + "/tickets", token(t, "cust-9999"), 404, "not_found"},
		"unknown order":  {"/orders/nope/tickets", token(t, o.CustomerID), 404, "not_found"},
		"no token":       {"/orders/" + o.OrderID + "/tickets", "", 401, "unauthorized"},
		"bad token":      {"/orders/" + o.OrderID + "/tickets", "garbage", 401, "unauthorized"},
		"long order id":  {"/orders/" + strings.Repeat("x", 200) + "/tickets", token(t, o.CustomerID), 400, "bad_order_id"},
	} {
		code, body := call(t, s.base+tc.path, tc.token)
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if code != tc.status || e.Error.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", name, code, body, tc.status, tc.code)
		}
	}
	if code, _ := call(t, s.base+"/readyz", ""); code != http.StatusOK {
		t.Errorf("readyz %d", code)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

var errCrash = errors.New("crash before commit")

// The consumer crashes after storing a batch's tickets but before
// committing its offsets: the restarted consumer reads those messages
// again and issues nothing twice; in the end every offset is committed.
func TestConsumerCrashBeforeCommit(t *testing.T) {
	url, pool := newDB(t)
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	const orders = 200
	for i := range orders {
		produce(t, brokers, int64(i+1), order(i, 2))
	}
	cfg := testConfig(t, url, brokers)
	ctx := context.Background()
	logs := captureLogs(t)

	s1, err := New(ctx, cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	hooked := 0
	s1.consumer.beforeCommit = func(kafka.Message) error {
		if hooked++; hooked == 100 {
			return errCrash
		}
		return nil
	}
	if err := s1.Consume(ctx); !errors.Is(err, errCrash) {
		t.Fatalf("consume: %v, want the crash", err)
	}
	_ = s1.Close()
	// The batch of the 100th message was stored whole; the batches before
	// it were committed (the reader flushes its commits on close), not it.
	n := countTickets(t, pool)
	stored := n / 2
	committed := committedTotal(t, brokers, cfg.ConsumerGroup)
	if n%2 != 0 || stored < 100 || stored >= orders || committed == 0 || committed >= 100 {
		t.Fatalf("at the crash: %d tickets, %d offsets committed; want the tickets of 100 or more orders, and the offsets of the batches before the crash's", n, committed)
	}
	t.Logf("at the crash: %d orders stored, %d offsets committed", stored, committed)

	s2, err := New(ctx, cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s2.Consume(cctx) }()
	testenv.WaitFor(t, 60*time.Second, "every message consumed", func() bool {
		return counter(s2.m.messages.WithLabelValues("issued"))+counter(s2.m.messages.WithLabelValues("duplicate")) >= float64(orders-committed)
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_ = s2.Close()
	if n := countTickets(t, pool); n != 2*orders {
		t.Fatalf("%d tickets, want %d", n, 2*orders)
	}
	if d := counter(s2.m.messages.WithLabelValues("duplicate")); int64(d) != int64(stored)-committed {
		t.Fatalf("the restarted consumer re-read %v stored messages, want the %d left uncommitted", d, int64(stored)-committed)
	}
	if i := counter(s2.m.messages.WithLabelValues("issued")); int(i) != orders-stored {
		t.Fatalf("the restarted consumer issued %v orders, want %d", i, orders-stored)
	}

	// One "ticket ready" notification per order, none for the re-read ones.
	if n := strings.Count(logs.String(), `"event":"ticket_ready"`); n != orders {
		t.Fatalf("%d ticket ready notifications, want %d", n, orders)
	}

	// franz-go sees the group's committed offsets at the end of each partition.
	adm := admin(t, brokers)
	offsets, err := adm.FetchOffsets(ctx, cfg.ConsumerGroup)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, events.TopicTicketIssued)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		c, _ := offsets.Lookup(o.Topic, o.Partition)
		if c.At != o.Offset {
			t.Errorf("partition %d: committed %d, end %d", o.Partition, c.At, o.Offset)
		}
		total += o.Offset
	})
	if total != orders {
		t.Fatalf("%d messages on the topic, want %d", total, orders)
	}
}

// admin is a franz-go admin client of brokers, closed with the test.
func admin(t *testing.T, brokers []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// committedTotal is the sum of group's committed offsets, as franz-go
// reads them.
func committedTotal(t *testing.T, brokers []string, group string) int64 {
	t.Helper()
	offsets, err := admin(t, brokers).FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.At > 0 {
			total += o.At
		}
	})
	return total
}

type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureLogs sends the default logger's JSON records to a buffer for the
// rest of the test (tests here are not parallel).
func captureLogs(t testing.TB) *syncBuffer {
	var b syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&b, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &b
}

// A database that is down (restarting, unreachable) answers 503 with
// Retry-After, so the client polls again, not a 500.
func TestTicketsWhileDatabaseDown(t *testing.T) {
	port, err := localsvc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	brokers := testenv.KafkaBrokers(t, events.TopicTicketIssued)
	s := startRun(t, testConfig(t, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/ticketfair?sslmode=disable&connect_timeout=2", port), brokers))
	req, _ := http.NewRequest(http.MethodGet, s.base+"/orders/"+order(1, 1).OrderID+"/tickets", nil)
	req.Header.Set("Authorization", "Bearer "+token(t, order(1, 1).CustomerID))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), `"unavailable"`) {
		t.Fatalf("tickets with the database down: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	_ = s.stop()
}

// The broker goes away for longer than any retry of the reader: the
// service keeps running and serving (it used to exit on the first failed
// fetch, and, restarted by Kubernetes, crash-loop until the broker was
// back), and once the broker is back on the same address with its log it
// consumes what was produced after the outage.
func TestConsumerRidesOutBrokerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 8 s of broker downtime")
	}
	url, pool := newDB(t)
	k := testenv.RestartableKafka(t, events.TopicTicketIssued)
	for i := range 5 {
		produce(t, k.Brokers, int64(i+1), order(i, 1))
	}
	s := startRun(t, testConfig(t, url, k.Brokers))
	testenv.WaitFor(t, 60*time.Second, "the first orders ticketed", func() bool { return results(t, s.base)["issued"] == 5 })

	k.Kill(0) // as a crashed broker machine
	for down := time.Now(); time.Since(down) < 8*time.Second; time.Sleep(250 * time.Millisecond) {
		select {
		case <-s.done:
			t.Fatalf("the service exited %v into the broker outage: %v", time.Since(down).Round(time.Millisecond), s.stop())
		default:
		}
		if code, body := call(t, s.base+"/orders/"+order(0, 1).OrderID+"/tickets", token(t, order(0, 1).CustomerID)); code != http.StatusOK {
			t.Fatalf("tickets during the broker outage: %d %s", code, body)
		}
	}
	if _, body := call(t, s.base+"/metrics", ""); !strings.Contains(string(body), "ticketfair_tickets_fetch_errors_total") {
		t.Fatal("no fetch error metric")
	}

	if err := k.Restart(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 10; i++ {
		produce(t, k.Brokers, int64(i+1), order(i, 1))
	}
	testenv.WaitFor(t, 90*time.Second, "the orders after the outage ticketed", func() bool { return results(t, s.base)["issued"] == 10 })
	if n := countTickets(t, pool); n != 10 {
		t.Fatalf("%d tickets, want 10", n)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}
