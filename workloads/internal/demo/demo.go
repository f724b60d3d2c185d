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

// Package demo runs a local sale end to end: it starts Redis, PostgreSQL
// and a Kafka-protocol broker on loopback (each unless given by URL), the
// queue, booking, relay and tickets workloads as real processes of this
// binary, seeds an event whose sales open a few seconds later, drives a
// simulated crowd through it and audits the outcome: nothing sold twice,
// one ticket per sold seat, admission in fair order.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/chaos"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
	"github.com/ticketfair/ticketfair/workloads/internal/web"
)

// Options of a local sale.
type Options struct {
	Customers  int
	Seats      int
	MaxActive  int
	AdmitRate  int
	OpensIn    time.Duration
	HoldTTL    time.Duration
	Profile    string // loadtest.ParseProfile overrides
	ReportJSON string
	// CPUProfiles, when set, is a directory for a CPU profile of every Go
	// process of the sale; the report then says where the CPU went (see
	// WhereCPU), with Redis's time per command and, on the sale's own
	// PostgreSQL, its time per statement.
	CPUProfiles string
	// CrowdNice is the niceness this process takes once the servers and
	// workloads run (DefaultCrowdNice; 0: none). Not with Faults.
	CrowdNice int
	Keep      bool
	RedisURL  string
	// RedisMode "sentinel" starts a master, a replica and three sentinels
	// instead of one redis-server, and the services find the master
	// through the sentinels (with RedisURL: the sentinels to use).
	RedisMode    string
	RedisMaster  string // sentinel mode: the master's name (default "ticketfair")
	DatabaseURL  string
	KafkaBrokers []string
	Binary       string // the ticketfair service binary (default: WorkloadsBinary)
	Deadline     time.Duration
	Seed         uint64
	Out          io.Writer // progress and the report
	EventID      int64
	// Faults, when set, is a fault plan run during the sale (see package
	// chaos): queue and booking then run two replicas each, and the queue's
	// Redis and booking's PostgreSQL are reached through fault proxies.
	Faults *chaos.Plan
	// Observe, when set, is called once the workloads are ready with each
	// one's base URL (its /metrics included); the function it returns is
	// called after the report, while they still run.
	Observe func(ctx context.Context, urls map[string]string) func()
	// Bots adds this many scripted scalper accounts to the crowd, from one
	// client network (loadtest.Bots); the sale then asks joins for a proof
	// of work (PowDifficulty, default botsPowDifficulty) whose difficulty
	// rises for a network that joins a lot.
	Bots int
	// PowDifficulty asks every join for a proof of work of this many bits
	// (0: none unless there are bots).
	PowDifficulty int
	// JoinLimit, when set, is the queue's limit on joins per identity and
	// rate-limit window (0: the queue's default).
	JoinLimit int
	// Phases runs a presale before the general sale (phases.go's
	// salePhases): members and code holders from the opening, everyone
	// PresaleFor later, members then weighted 3 to 1. Members and
	// CodeHolders are their shares of the crowd (the profile's members and
	// codeholders override them). false: one general queue.
	Phases               bool
	PresaleFor           time.Duration
	Members, CodeHolders float64
	// Door mails the tickets through a real SMTP server (Mailpit) and
	// scans buyers at the gates after the sale (door.go).
	Door bool
	// Kafka is the broker the sale starts without KafkaBrokers: KafkaEmbedded
	// (the in-process kfake imitation, no Java) or KafkaApache (Apache
	// Kafka in KRaft mode, a host process from bin/kafka).
	Kafka string
	// KafkaNodes is the size of the Apache Kafka cluster (combined
	// controller and broker nodes); above 1 its topics have three
	// replicas and min.insync.replicas 2, so a node can die mid-sale.
	KafkaNodes int
	// Seating is what the sale seeds Seats places as: SeatingVenue (""
	// too: a standing floor and seated stands, venueFor) or
	// SeatingSections (the shorthand's four priced sections).
	Seating string
	// BestAvailable is the share of the crowd who ask for best available
	// rather than pick seats (the profile's bestavailable overrides it).
	BestAvailable float64
}

// The brokers a sale can start.
const (
	KafkaEmbedded = "embedded"
	KafkaApache   = "apache"
)

// DefaultOptions finish in about two minutes on a 2-core machine.
func DefaultOptions() Options {
	return Options{
		Customers: 100000, Seats: 5000, MaxActive: 2000, AdmitRate: 500,
		OpensIn: 8 * time.Second, HoldTTL: 20 * time.Second, EventID: 1,
		Phases: true, PresaleFor: 2 * time.Second, Members: 0.1, CodeHolders: 0.02, CrowdNice: DefaultCrowdNice,
		Deadline: 20 * time.Minute, Seed: uint64(time.Now().UnixNano()), Out: os.Stdout, Door: true, Kafka: KafkaEmbedded, KafkaNodes: 1,
		Seating: SeatingVenue, BestAvailable: loadtest.DefaultProfile().BestAvailable,
	}
}

const (
	identityIssuer   = "ticketfair-demo-identity"
	identityAudience = "ticketfair"
)

// WorkloadsBinary is the ticketfair service binary the sale's workloads
// run from: "ticketfair" next to this executable (make demo builds both
// into bin/), else the one on PATH.
func WorkloadsBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		bin := filepath.Join(filepath.Dir(exe), "ticketfair")
		if st, err := os.Stat(bin); err == nil && !st.IsDir() {
			return bin, nil
		}
	}
	bin, err := exec.LookPath("ticketfair")
	if err != nil {
		return "", errors.New("demo: no ticketfair binary next to this one or on PATH (build ./workloads/cmd/ticketfair, or pass --workloads-binary)")
	}
	return bin, nil
}

// Run performs the sale and returns its report. The error is non-nil when
// the sale could not run or its audit failed.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	// The progress line, the fault plan and the sale write from their own goroutines.
	o.Out = &syncWriter{w: o.Out}
	if o.Binary == "" {
		bin, err := WorkloadsBinary()
		if err != nil {
			return nil, err
		}
		o.Binary = bin
	}
	base := loadtest.DefaultProfile()
	if o.Phases {
		base.Members, base.CodeHolders = o.Members, o.CodeHolders
	}
	base.BestAvailable = o.BestAvailable
	if o.Seating != "" && o.Seating != SeatingVenue && o.Seating != SeatingSections {
		return nil, fmt.Errorf("seating %q: %s or %s", o.Seating, SeatingVenue, SeatingSections)
	}
	profile, err := loadtest.ParseProfile(base, o.Profile)
	if err != nil {
		return nil, err
	}
	profile.Customers = o.Customers
	if err := profile.Validate(); err != nil {
		return nil, err
	}
	if o.Faults != nil && (o.RedisURL != "" || o.DatabaseURL != "" || len(o.KafkaBrokers) > 0) {
		return nil, errors.New("a fault plan restarts the sale's own servers: it cannot run with --redis-url, --database-url or --kafka-brokers")
	}
	if o.Kafka == "" {
		o.Kafka = KafkaEmbedded
	}
	if o.Kafka != KafkaEmbedded && o.Kafka != KafkaApache {
		return nil, fmt.Errorf("kafka %q: %s or %s", o.Kafka, KafkaEmbedded, KafkaApache)
	}
	o.KafkaNodes = max(o.KafkaNodes, 1)
	if o.KafkaNodes > 1 && (o.Kafka != KafkaApache || len(o.KafkaBrokers) > 0) {
		return nil, fmt.Errorf("kafka-nodes %d: a cluster of several nodes is Apache Kafka's (--kafka apache)", o.KafkaNodes)
	}
	if o.Faults != nil && o.Faults.BrokerNodes() > o.KafkaNodes {
		return nil, fmt.Errorf("the fault plan takes Kafka node %d down, but the sale has %d (run it with --kafka apache --kafka-nodes 3)", o.Faults.BrokerNodes(), o.KafkaNodes)
	}
	if o.Faults != nil && o.Faults.NeedsSentinel() && o.RedisMode != "sentinel" {
		return nil, errors.New("redis-failover kills a Sentinel set-up's master: run it with --redis-mode sentinel")
	}
	if o.Faults != nil && o.RedisMode == "sentinel" && o.Faults.StandaloneRedisOnly() {
		return nil, errors.New("redis-restart, redis-restart-aof and faults on queue-redis break a single Redis server: on Sentinel use redis-failover")
	}
	fmt.Fprintf(o.Out, "seed        %d (replay with --seed %d)\n", o.Seed, o.Seed)
	stopProfile := func() {}
	if o.CPUProfiles != "" {
		if stopProfile, err = startSelfProfile(o.CPUProfiles); err != nil {
			return nil, err
		}
		defer stopProfile()
	}
	dir, err := os.MkdirTemp("", "ticketfair-demo-")
	if err != nil {
		return nil, err
	}
	s := &sale{o: o, dir: dir}
	defer s.cleanup()
	if err := s.startServers(ctx); err != nil {
		return nil, err
	}
	if err := s.startWorkloads(ctx, profile); err != nil {
		return nil, err
	}
	if o.Faults == nil {
		if err := yieldCPU(o.CrowdNice); err != nil {
			return nil, err
		}
	}
	done := func() {}
	if o.Observe != nil {
		urls := map[string]string{}
		for name, p := range s.procs {
			urls[name] = p.url
		}
		done = o.Observe(ctx, urls)
	}
	rep, err := s.run(ctx, profile)
	done()
	if rep == nil {
		return nil, err
	}
	if o.CPUProfiles != "" {
		rep.CPU = s.whereCPU(ctx, stopProfile)
		rep.CPU.print(o.Out)
	}
	if o.ReportJSON != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if werr := os.WriteFile(o.ReportJSON, b, 0o644); werr != nil {
			return rep, errors.Join(err, werr)
		}
		s.logf("report written to %s", filepath.Clean(o.ReportJSON))
	}
	return rep, err
}

// sale is the state of one local sale.
type sale struct {
	o       Options
	dir     string
	stops   []func()
	procs   map[string]*proc
	redis   string
	db      string
	brokers []string
	broker  string // which broker the sale started, for the report
	open    time.Time
	seating string        // the shorthand, with SeatingSections
	venue   *config.Venue // else the venue
	seats   int
	edgeURL string
	// cacheURL is nginx in front of the queue, the CDN stand-in the crowd
	// reads the queue's public state through.
	cacheURL string
	cache    *localsvc.Server

	identitySecret, webhookSecret string
	// mailpit receives the ticket mails (Options.Door); gateSecret
	// derives the gates' credentials.
	mailpit    *localsvc.Mailpit
	gateSecret string
	queue      config.Queue
	booking    config.Booking
	// phases are the sale's phases (Options.Phases), accessCodes the
	// codes issued for its presale.
	phases      []config.Phase
	accessCodes []string

	faults faultState // only with Options.Faults
	// redisAtStart is Redis's commandstats as the crowd started: the
	// audit's and where the CPU went's zero.
	redisAtStart redisCounters
}

func (s *sale) logf(format string, args ...any) { fmt.Fprintf(s.o.Out, format+"\n", args...) }

func (s *sale) cleanup() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	if s.o.Keep {
		s.logf("kept logs and data in %s", s.dir)
		return
	}
	_ = os.RemoveAll(s.dir)
}

func (s *sale) startServers(ctx context.Context) error {
	s.redis = s.o.RedisURL
	if s.o.RedisMode == "sentinel" && s.o.RedisMaster == "" {
		s.o.RedisMaster = "ticketfair"
	}
	if s.redis == "" && s.o.RedisMode == "sentinel" {
		h, err := localsvc.StartRedisSentinel(ctx, s.o.RedisMaster, 3, 5*time.Second)
		if err != nil {
			return err
		}
		s.stops = append(s.stops, h.Stop)
		s.faults.sentinel = h
		s.redis = h.URL
		s.logf("redis       master %s, replica %s, sentinels %s (master name %q)", h.Master.Addr, h.Replica.Addr, h.URL, h.MasterName)
	}
	if s.redis == "" {
		r, err := localsvc.StartRedis(ctx)
		if err != nil {
			return err
		}
		r.Keep = s.o.Keep
		s.faults.redis = r
		s.stops = append(s.stops, func() { _ = s.faults.redisServer().Stop() })
		s.redis = r.URL
		s.logf("redis       %s", r.Addr)
	}
	s.db = s.o.DatabaseURL
	if s.db == "" {
		var settings []string
		if s.o.CPUProfiles != "" {
			settings = append(settings, pgStatStatements)
		}
		pg, err := localsvc.StartPostgresWith(ctx, "", "", settings...)
		if err != nil {
			return err
		}
		pg.Keep = s.o.Keep
		s.faults.pg = pg
		s.stops = append(s.stops, func() { _ = s.faults.postgresServer().Stop() })
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			return err
		}
		_, err = conn.Exec(ctx, "CREATE DATABASE ticketfair")
		conn.Close(ctx)
		if err != nil {
			return fmt.Errorf("create database: %w", err)
		}
		s.db = strings.Replace(pg.URL, "/postgres?", "/ticketfair?", 1)
		if s.o.CPUProfiles != "" {
			if err := createStatStatements(ctx, s.db); err != nil {
				return err
			}
		}
		s.logf("postgresql  %s", pg.Addr)
	}
	if s.o.Door {
		m, err := localsvc.StartMailpit(ctx)
		if err != nil {
			return fmt.Errorf("the mail server: %w", err)
		}
		s.stops = append(s.stops, func() { _ = m.Close() })
		s.mailpit = m
		s.logf("mailbox     %s  (Mailpit: the buyers' ticket mails; SMTP %s)", m.APIURL, m.SMTPAddr())
	}
	s.brokers = s.o.KafkaBrokers
	if len(s.brokers) > 0 {
		s.broker = "the brokers given (--kafka-brokers)"
	}
	if len(s.brokers) == 0 && s.o.Kafka == KafkaApache {
		k, err := localsvc.StartApacheKafka(ctx, localsvc.ApacheKafkaConfig{
			Nodes:  s.o.KafkaNodes,
			Topics: []string{events.TopicTicketIssued, events.TopicRefundRequested},
			Dir:    filepath.Join(s.dir, "kafka"),
		})
		if err != nil {
			return err
		}
		s.faults.apache = k
		s.stops = append(s.stops, k.Stop)
		s.brokers = k.Brokers
		s.broker = fmt.Sprintf("Apache Kafka %s (KRaft, host process)", localsvc.KafkaVersion)
		if s.o.KafkaNodes > 1 {
			s.broker = fmt.Sprintf("Apache Kafka %s (KRaft, %d host processes, 3 replicas, min.insync.replicas 2)", localsvc.KafkaVersion, s.o.KafkaNodes)
		}
		s.logf("kafka       %s (%s)", strings.Join(k.Brokers, ","), s.broker)
	}
	if len(s.brokers) == 0 {
		dataDir := ""
		if s.o.Faults != nil {
			// A broker outage restarts it with its log.
			dataDir = filepath.Join(s.dir, "kafka")
		}
		k, err := localsvc.StartEmbeddedKafka(0, dataDir, events.TopicTicketIssued, events.TopicRefundRequested)
		if err != nil {
			return err
		}
		s.faults.kafka, s.faults.kafkaDir = k, dataDir
		s.stops = append(s.stops, func() { s.faults.kafkaBroker().Stop() })
		s.brokers = k.Brokers
		s.broker = "embedded Kafka-protocol broker (kfake)"
		s.logf("kafka proto %s (embedded)", strings.Join(k.Brokers, ","))
	}
	return nil
}

// seatingText describes what the sale seeded, for its log.
func (s *sale) seatingText() string {
	if s.venue == nil {
		return s.seating
	}
	var parts []string
	for _, sec := range s.venue.Sections {
		if sec.Kind == config.SectionStanding {
			parts = append(parts, fmt.Sprintf("%s standing %d", sec.Name, sec.Capacity))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d rows of %d to %d", sec.Name, len(sec.Rows), sec.Rows[0].Seats, sec.Rows[len(sec.Rows)-1].Seats))
	}
	var cats []string
	for _, c := range s.venue.Categories {
		cats = append(cats, c.Name+" "+c.Price)
	}
	return strings.Join(parts, ", ") + "; categories " + strings.Join(cats, ", ")
}

// seatingFor splits seats into four priced sections.
func seatingFor(seats int) (string, int) {
	prices := []string{"120.00", "89.50", "59.00", "35.00"}
	names := []string{"A", "B", "C", "D"}
	per := seats / len(names)
	if per < 1 {
		per = 1
	}
	perRow := 50
	if per < perRow {
		perRow = per
	}
	rows := int(math.Ceil(float64(per) / float64(perRow)))
	var parts []string
	for i, n := range names {
		parts = append(parts, fmt.Sprintf("%s:%s:%d:%d", n, prices[i], rows, perRow))
	}
	return strings.Join(parts, ";"), rows * perRow * len(names)
}

func secret() string {
	k, _ := accesstoken.GenerateKey("x")
	return strings.TrimPrefix(k, "x:")
}

func (s *sale) startWorkloads(ctx context.Context, profile loadtest.Profile) error {
	s.procs = map[string]*proc{}
	s.identitySecret, s.webhookSecret = secret(), secret()
	accessKeys, _ := accesstoken.GenerateKey("demo-1")
	ticketKeys, _ := accesstoken.GenerateKey("tickets-1")
	serviceToken := secret()
	if s.o.Seating == SeatingSections {
		s.seating, s.seats = seatingFor(s.o.Seats)
	} else {
		v := venueFor(s.o.Seats)
		s.venue, s.seats = &v, int(v.Places())
	}
	s.open = time.Now().Add(s.o.OpensIn).Truncate(time.Second)

	// The defaults first: the tier claim the members' tokens carry is one.
	identity := config.DefaultsOf[config.Identity]()
	identity.IdentityHMACSecret, identity.IdentityIssuer, identity.IdentityAudience = s.identitySecret, identityIssuer, identityAudience
	kafka := config.Kafka{Brokers: s.brokers, TopicTicketIssued: events.TopicTicketIssued, TopicRefundRequested: events.TopicRefundRequested}

	names := []string{"queue", "booking", "relay", "tickets"}
	if s.o.Faults != nil {
		names = append(names, "queue-2", "booking-2")
	}
	ports := map[string]int{}
	for _, n := range names {
		p, err := localsvc.FreePort()
		if err != nil {
			return err
		}
		ports[n] = p
	}
	addr := func(n string) string { return fmt.Sprintf("127.0.0.1:%d", ports[n]) }

	var b config.Booking
	if err := config.Defaults(&b); err != nil {
		return err
	}
	b.HTTPAddr, b.EventID, b.DatabaseURL, b.Redis = addr("booking"), s.o.EventID, s.db, s.redisConfig()
	b.Identity, b.AccessTokenKeys, b.HoldTTL = identity, accessKeys, s.o.HoldTTL
	b.WebhookSecrets, b.ServiceToken, b.Seating = s.webhookSecret, serviceToken, s.seating
	if s.venue != nil {
		// Migrate seeds it, booking sells it.
		j, err := json.Marshal(s.venue)
		if err != nil {
			return err
		}
		b.Venue = string(j)
	}
	s.booking = b

	// Migrate and seed first, as the operator's Job does.
	mig, err := startProc(s.o.Binary, s.dir, "migrate", "migrate", envOf(&b), 0)
	if err != nil {
		return err
	}
	mctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := mig.wait(mctx); err != nil {
		return err
	}
	s.logf("seeded      %d places (%s)", s.seats, s.seatingText())

	var q config.Queue
	if err := config.Defaults(&q); err != nil {
		return err
	}
	q.HTTPAddr, q.EventID, q.Redis, q.Identity, q.AccessTokenKeys = addr("queue"), s.o.EventID, s.redisConfig(), identity, accessKeys
	q.SalesOpenAt = s.open.UTC().Format(time.RFC3339)
	q.MaxActive, q.RatePerSecond = s.o.MaxActive, s.o.AdmitRate
	q.LeaderElection = false
	q.TokenTTL = 10 * time.Minute
	// A sale of minutes: the crowd claims within seconds of its turn and
	// picks seats within a second of its claim.
	q.ClaimTimeout = 20 * time.Second
	q.SelectionWindow = 30 * time.Second
	s.botProtection(&q)
	if err := s.presale(&q, profile); err != nil {
		return err
	}
	s.queue = q
	// Booking knows the phases its access tokens name (it reads their
	// limits and sections and ignores the queues).
	b.Phases = q.Phases

	var r config.Relay
	if err := config.Defaults(&r); err != nil {
		return err
	}
	r.HTTPAddr, r.DatabaseURL, r.Kafka, r.CreateTopics = addr("relay"), s.db, kafka, true
	r.PollInterval = 200 * time.Millisecond

	var t config.Tickets
	if err := config.Defaults(&t); err != nil {
		return err
	}
	t.HTTPAddr, t.DatabaseURL, t.Kafka, t.Identity, t.TicketKeys = addr("tickets"), s.db, kafka, identity, ticketKeys
	t.EventName, t.Venue, t.StartsAt = "ticketfair local sale", "Local Arena", s.open.Add(6*time.Hour).UTC().Format(time.RFC3339)
	if s.mailpit != nil {
		t.SMTPHost, t.SMTPPort, t.SMTPTLS, t.From = s.mailpit.SMTPHost, s.mailpit.SMTPPort, "none", "tickets@"+mailDomain
		s.gateSecret = secret()
		t.GateSecret = s.gateSecret
	}

	type workload struct {
		name, sub string
		cfg       any
	}
	workloads := []workload{{"queue", "queue", &q}, {"booking", "booking", &b}, {"relay", "relay", &r}, {"tickets", "tickets", &t}}
	if s.o.Faults != nil {
		q2, b2, err := s.replicas(&q, &b, addr("queue-2"), addr("booking-2"))
		if err != nil {
			return err
		}
		workloads = append(workloads, workload{"queue-2", "queue", q2}, workload{"booking-2", "booking", b2})
	}
	for _, w := range workloads {
		p, err := startProc(s.o.Binary, s.dir, w.name, w.sub, append(envOf(w.cfg), s.profileEnv(w.name)...), ports[w.name])
		if err != nil {
			return err
		}
		s.procs[w.name] = p
		name := w.name
		s.stops = append(s.stops, func() { s.proc(name).stop() })
	}
	rctx, cancel2 := context.WithTimeout(ctx, time.Minute)
	defer cancel2()
	for _, n := range names {
		if err := s.procs[n].waitReady(rctx); err != nil {
			return err
		}
		s.logf("%-11s %s", n, s.procs[n].url)
	}
	ng, err := localsvc.StartNginx(ctx, s.procs["queue"].url)
	if err != nil {
		return fmt.Errorf("the cache in front of the queue: %w", err)
	}
	ng.Keep = s.o.Keep
	s.stops = append(s.stops, func() { _ = ng.Stop() })
	s.cacheURL, s.cache = ng.URL, ng
	s.logf("%-11s %s (nginx proxy_cache in front of the queue)", "cache", ng.URL)
	return s.startEdge(ctx)
}

// startEdge serves the web pages and proxies the APIs on one origin, with
// the simulated identity and payment providers, so a person can join the
// crowd from a browser.
func (s *sale) startEdge(ctx context.Context) error {
	edge := web.NewEdge(web.EdgeConfig{
		QueueURL: s.procs["queue"].url, BookingURL: s.procs["booking"].url, TicketsURL: s.procs["tickets"].url,
		EventID: s.o.EventID, IdentitySecret: s.identitySecret, IdentityIssuer: identityIssuer,
		IdentityAudience: identityAudience, WebhookSecret: s.webhookSecret,
	})
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ready := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- httpapi.Serve(ectx, "127.0.0.1:0", edge, 5*time.Second, func(a net.Addr) { ready <- a })
	}()
	select {
	case a := <-ready:
		s.edgeURL = "http://" + a.String()
		s.stops = append(s.stops, func() { cancel(); <-errc })
	case err := <-errc:
		cancel()
		return fmt.Errorf("web edge: %w", err)
	}
	return nil
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *sale) run(ctx context.Context, profile loadtest.Profile) (*Report, error) {
	s.logf("\nwaiting room: %s/  (open it in a browser to join the crowd; sales open at %s)\n", s.edgeURL, s.open.Format(time.TimeOnly))
	s.redisAtStart, _ = s.redisCounters(ctx)
	originBefore, _ := queueRequests(ctx, s.procs["queue"].url)
	progress := newProgressLine(s.o.Out)
	cfg := loadtest.Config{
		QueueURL: s.procs["queue"].url, BookingURL: s.procs["booking"].url, TicketsURL: s.procs["tickets"].url,
		StateURL: s.cacheURL,
		EventID:  s.o.EventID, IdentitySecret: s.identitySecret, IdentityIssuer: identityIssuer, IdentityAudience: identityAudience,
		WebhookSecret: s.webhookSecret, SalesOpenAt: s.open, Profile: profile, Seed: s.o.Seed,
		Progress: progress.update, Deadline: s.o.Deadline,
		Networks: crowdNetworks(profile.Customers), Bots: loadtest.Bots{Count: s.o.Bots},
		AccessCodes: s.accessCodes, Venue: s.venue,
	}
	if s.mailpit != nil {
		cfg.EmailClaim = s.booking.EmailClaim
	}
	waitFaults := s.startFaults(ctx, &cfg)
	res, runErr := loadtest.Run(ctx, cfg)
	progress.done()
	windows := waitFaults()
	if res == nil {
		return nil, runErr
	}
	after, _ := s.redisCounters(ctx)
	originAfter, _ := queueRequests(ctx, s.procs["queue"].url)
	// Let the relay and the tickets consumer finish the last orders.
	actx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	rep, err := s.audit(actx, res, s.redisAtStart.calls, after.calls)
	if err != nil {
		return nil, err
	}
	rep.waitingFigures(originBefore, originAfter, s.redisAtStart.calls, after.calls)
	s.auditFaults(rep, windows)
	if s.mailpit != nil {
		dctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
		defer cancel()
		if err := s.door(dctx, rep); err != nil {
			rep.Problems = append(rep.Problems, "the door: "+err.Error())
		}
		rep.Door.check(rep)
	}
	rep.Print(s.o.Out)
	if runErr != nil {
		rep.Problems = append(rep.Problems, runErr.Error())
	}
	if len(rep.Problems) > 0 {
		msg := "the sale's audit failed: " + strings.Join(rep.Problems, "; ")
		if s.o.Faults != nil {
			msg += fmt.Sprintf("\nreplay with --seed %d and this fault plan:\n%s", s.o.Seed, s.o.Faults)
		}
		return rep, errors.New(msg)
	}
	return rep, nil
}

// redisConfig is how the services reach the sale's Redis.
func (s *sale) redisConfig() config.Redis {
	c := config.DefaultsOf[config.Redis]()
	c.RedisURL = s.redis
	if s.o.RedisMode == "sentinel" {
		c.RedisMode, c.RedisMasterName = "sentinel", s.o.RedisMaster
	}
	return c
}
