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
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/faultproxy"
	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/chaos"
	"github.com/ticketfair/ticketfair/workloads/internal/events"
	"github.com/ticketfair/ticketfair/workloads/internal/loadtest"
	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// faultState is what a fault plan needs of the sale: the servers it
// restarts, the proxies it degrades, the admission log of every Redis
// lifetime, and the requests it watched.
type faultState struct {
	mu       sync.Mutex
	redis    *localsvc.Server
	sentinel *localsvc.RedisSentinel // with --redis-mode sentinel
	pg       *localsvc.Server
	kafka    *localsvc.EmbeddedKafka
	kafkaDir string
	apache   *localsvc.ApacheKafka // with Options.Kafka apache, instead of kafka
	proxies  map[string]*faultproxy.Proxy
	// admitLogs holds the admission log of each Redis lifetime that ended
	// without persistence, read just before the shutdown.
	admitLogs [][]string
	lost      []string
	recorder  *chaos.Recorder
	// down are the processes a fault killed and will start again; crashes
	// counts the others that exited on their own and were started again,
	// as Kubernetes restarts a pod's container.
	down    map[string]bool
	crashes map[string]int
	// kills are when a fault SIGKILLed each process.
	kills map[string][]time.Time
}

// killsOf is when faults SIGKILLed the process name.
func (f *faultState) killsOf(name string) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.kills[name]...)
}

func (f *faultState) redisServer() *localsvc.Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.redis
}

func (f *faultState) postgresServer() *localsvc.Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pg
}

func (f *faultState) kafkaBroker() *localsvc.EmbeddedKafka {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kafka
}

// proc returns the current process of a workload (a restart replaces it).
func (s *sale) proc(name string) *proc {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.procs[name]
}

// replicas configures the second queue and booking replicas and puts the
// fault proxies between the queue and Redis and between booking and
// PostgreSQL. Both queue replicas run the admitter without election: the
// fencing epoch lets only the newest tick, and a fenced one takes over
// again when the other is gone.
func (s *sale) replicas(q *config.Queue, b *config.Booking, q2Addr, b2Addr string) (*config.Queue, *config.Booking, error) {
	s.faults.proxies = map[string]*faultproxy.Proxy{}
	links := map[string]string{chaos.QueueRedis: s.redis, chaos.BookingPostgres: s.db}
	if s.o.RedisMode == "sentinel" {
		// The sentinels hand out the master's own address: no proxy can
		// stand in the queue's path to it.
		delete(links, chaos.QueueRedis)
	}
	for link, url := range links {
		host, err := hostOf(url)
		if err != nil {
			return nil, nil, err
		}
		p, err := faultproxy.Start(host)
		if err != nil {
			return nil, nil, err
		}
		s.faults.proxies[link] = p
		s.stops = append(s.stops, func() { _ = p.Close() })
	}
	viaQ := s.redis
	if p := s.faults.proxies[chaos.QueueRedis]; p != nil {
		var err error
		if viaQ, err = replaceHost(s.redis, p.Addr()); err != nil {
			return nil, nil, err
		}
	}
	viaB, err := replaceHost(s.db, s.faults.proxies[chaos.BookingPostgres].Addr())
	if err != nil {
		return nil, nil, err
	}
	s.queue.RedisURL, s.booking.DatabaseURL = viaQ, viaB
	q.RedisURL, b.DatabaseURL = viaQ, viaB
	q2, b2 := *q, *b
	q2.HTTPAddr, b2.HTTPAddr = q2Addr, b2Addr
	return &q2, &b2, nil
}

func hostOf(url string) (string, error) {
	_, rest, ok := strings.Cut(url, "://")
	if !ok {
		return "", fmt.Errorf("no scheme in %q", url)
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	host, _, _ := strings.Cut(rest, "/")
	return host, nil
}

func replaceHost(url, host string) (string, error) {
	old, err := hostOf(url)
	if err != nil {
		return "", err
	}
	return strings.Replace(url, old, host, 1), nil
}

// balancer spreads the crowd's connections over a service's replicas, as
// a Kubernetes Service does: round robin, and the next replica when one
// refuses the connection (it is down).
type balancer struct {
	groups map[string][]string // first replica's host:port -> every replica's
	n      atomic.Uint64
	d      net.Dialer
}

func (b *balancer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	replicas := b.groups[addr]
	dial := loadtest.SourceDialer(&b.d) // from the crowd's client network
	if len(replicas) == 0 {
		return dial(ctx, network, addr)
	}
	start := b.n.Add(1)
	var err error
	for i := range replicas {
		var c net.Conn
		if c, err = dial(ctx, network, replicas[(int(start)+i)%len(replicas)]); err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// startFaults, with a fault plan, spreads the crowd over the replicas,
// records its requests and runs the plan; the returned function waits for
// the plan's end and returns its windows.
func (s *sale) startFaults(ctx context.Context, cfg *loadtest.Config) func() []chaos.Window {
	if s.o.Faults == nil {
		return func() []chaos.Window { return nil }
	}
	hostport := func(n string) string { return strings.TrimPrefix(s.proc(n).url, "http://") }
	b := &balancer{groups: map[string][]string{
		hostport("queue"):   {hostport("queue"), hostport("queue-2")},
		hostport("booking"): {hostport("booking"), hostport("booking-2")},
	}, d: net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}}
	cfg.DialContext = b.dial
	s.faults.recorder = chaos.NewRecorder()
	cfg.Observe = s.faults.recorder.Observe
	s.logf("fault plan  seed %d, %d faults over %s after opening:\n%s", s.o.Seed, len(s.o.Faults.Faults), s.o.Faults.End(), indent(s.o.Faults.String()))
	s.faults.down, s.faults.crashes = map[string]bool{}, map[string]int{}
	sctx, stopSupervisor := context.WithCancel(ctx)
	supervised := make(chan struct{})
	go func() { s.supervise(sctx); close(supervised) }()
	s.stops = append(s.stops, func() { stopSupervisor(); <-supervised })
	done := make(chan []chaos.Window, 1)
	go func() { done <- chaos.Run(ctx, *s.o.Faults, s.open, s, s.logf) }()
	return func() []chaos.Window { return <-done }
}

func indent(s string) string {
	return "            " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n            ")
}

// Admitter implements chaos.Target: the queue replica whose admitter runs.
// A fenced admitter waits a few seconds before it takes over, so both may
// be idle for a moment: ask again for up to 15 s.
func (s *sale) Admitter(ctx context.Context) (string, error) {
	for range 30 {
		if n, ok := s.admitter(ctx); ok {
			return n, nil
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return "", err
		}
	}
	return "", errors.New("no queue replica runs the admitter")
}

func (s *sale) admitter(ctx context.Context) (string, bool) {
	client := &http.Client{Timeout: 2 * time.Second}
	for _, n := range []string{"queue", "queue-2"} {
		families, err := scrape.Metrics(ctx, client, s.proc(n).url)
		if err == nil && scrape.Sum(families["ticketfair_queue_leader"], "") == 1 {
			return n, true
		}
	}
	return "", false
}

// Kill implements chaos.Target.
func (s *sale) Kill(name string) error {
	p := s.proc(name)
	if p == nil {
		return fmt.Errorf("no process %q", name)
	}
	s.faults.mu.Lock()
	s.faults.down[name] = true
	if s.faults.kills == nil {
		s.faults.kills = map[string][]time.Time{}
	}
	s.faults.kills[name] = append(s.faults.kills[name], time.Now())
	s.faults.mu.Unlock()
	p.kill()
	return nil
}

// supervise starts again, every second, a workload that exited on its own.
func (s *sale) supervise(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		for _, n := range []string{"queue", "queue-2", "booking", "booking-2", "relay", "tickets"} {
			s.faults.mu.Lock()
			p, down := s.procs[n], s.faults.down[n]
			s.faults.mu.Unlock()
			if down || p == nil || !p.exited() {
				continue
			}
			s.logf("%s exited on its own: starting it again; last log lines:\n%s", n, tail(p.log, 5))
			s.faults.mu.Lock()
			s.faults.down[n] = true
			s.faults.crashes[n]++
			s.faults.mu.Unlock()
			if err := s.Restart(ctx, n); err != nil {
				s.logf("%s: %v", n, err)
			}
		}
	}
}

// Restart implements chaos.Target.
func (s *sale) Restart(ctx context.Context, name string) error {
	n, err := s.proc(name).again()
	if err != nil {
		return err
	}
	s.faults.mu.Lock()
	s.procs[name] = n
	delete(s.faults.down, name)
	s.faults.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return n.waitReady(rctx)
}

// RestartRedis implements chaos.Target: SHUTDOWN NOSAVE, then a new server
// on the same port and directory. With appendOnly the append-only file is
// turned on first, so the new server reloads everything; without, what was
// lost is counted and the admission log read just before is kept for the
// audit.
func (s *sale) RestartRedis(ctx context.Context, appendOnly bool, pause time.Duration) (string, error) {
	old := s.faults.redisServer()
	opt, err := redis.ParseURL(old.URL)
	if err != nil {
		return "", err
	}
	opt.MaxRetries = -1 // SHUTDOWN closes the connection: nothing to retry
	c := redis.NewClient(opt)
	defer c.Close()
	note := ""
	if appendOnly {
		if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
			return "", err
		}
		if err := waitAOF(ctx, c); err != nil {
			return "", err
		}
		note = "append-only file on: nothing lost"
	} else {
		// Writes pause (scripts included) so the log read is the last one.
		if err := c.Do(ctx, "CLIENT", "PAUSE", "5000", "WRITE").Err(); err != nil {
			return "", err
		}
		entries, err := c.LRange(ctx, zone.AdmitLogKey(s.o.EventID), 0, -1).Result()
		if err != nil {
			return "", err
		}
		waiting, _ := c.ZCard(ctx, zone.Prefix(s.o.EventID)+"queue").Result()
		sessions, _ := c.ZCount(ctx, zone.ActiveKey(s.o.EventID), "("+strconv.FormatInt(time.Now().UnixMilli(), 10), "+inf").Result()
		s.faults.mu.Lock()
		s.faults.admitLogs = append(s.faults.admitLogs, entries)
		s.faults.mu.Unlock()
		note = fmt.Sprintf("lost %d waiting places, %d sessions, %d admission log entries", waiting, sessions, len(entries))
		s.faults.mu.Lock()
		s.faults.lost = append(s.faults.lost, note)
		s.faults.mu.Unlock()
	}
	// The connection drops as the server exits: no reply to wait for.
	_ = c.Do(ctx, "SHUTDOWN", "NOSAVE").Err()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := old.Wait(wctx); err != nil {
		return note, fmt.Errorf("redis did not exit: %w", err)
	}
	if err := sleep(ctx, pause); err != nil {
		return note, err
	}
	n, err := localsvc.StartRedisWith(context.WithoutCancel(ctx), localsvc.RedisConfig{Port: old.Port, Dir: old.Dir, AppendOnly: appendOnly})
	if err != nil {
		return note, err
	}
	n.Keep = old.Keep
	s.faults.mu.Lock()
	s.faults.redis = n
	s.faults.mu.Unlock()
	return note, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitAOF waits until the append-only file turned on by CONFIG SET has
// been written in full.
func waitAOF(ctx context.Context, c *redis.Client) error {
	for {
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			return err
		}
		if strings.Contains(info, "aof_enabled:1") && strings.Contains(info, "aof_rewrite_in_progress:0") &&
			strings.Contains(info, "aof_rewrite_scheduled:0") {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// RestartPostgres implements chaos.Target: pg_ctl stop -m fast, then the
// same cluster on the same port.
// FailoverRedis SIGKILLs the master the sentinels name and waits until
// they name the replica instead.
func (s *sale) FailoverRedis(ctx context.Context) (string, error) {
	h := s.faults.sentinel
	if h == nil {
		return "", errors.New("redis-failover needs --redis-mode sentinel")
	}
	master, err := h.KillMaster(ctx)
	if err != nil {
		return "", err
	}
	old := master.Addr
	killed := time.Now()
	for {
		if now := h.MasterAddr(ctx); now != "" && now != old {
			return fmt.Sprintf("master %s killed; sentinels promoted %s after %.1fs", old, now, time.Since(killed).Seconds()), nil
		}
		if time.Since(killed) > time.Minute {
			return "", fmt.Errorf("master %s killed; the sentinels promoted nobody within a minute", old)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return "", err
		}
	}
}

func (s *sale) RestartPostgres(ctx context.Context) error {
	n, err := s.faults.postgresServer().RestartPostgres(ctx)
	if err != nil {
		return err
	}
	s.faults.mu.Lock()
	s.faults.pg = n
	s.faults.mu.Unlock()
	return nil
}

// StopBroker implements chaos.Target.
func (s *sale) StopBroker(n int) error {
	if a := s.faults.apache; a != nil {
		if n > a.NodeCount() {
			return fmt.Errorf("kafka-%d: the cluster has %d nodes", n, a.NodeCount())
		}
		// SIGKILL, as a crashed broker machine; the logs stay.
		for i := range a.NodeCount() {
			if n == 0 || i == n-1 {
				a.Kill(i)
			}
		}
		return nil
	}
	if n > 1 {
		return fmt.Errorf("kafka-%d: the embedded broker is one node", n)
	}
	k := s.faults.kafkaBroker()
	if k == nil {
		return errors.New("the broker is not this sale's own")
	}
	k.Stop()
	return nil
}

// StartBroker implements chaos.Target: the same port, the same log.
func (s *sale) StartBroker(ctx context.Context, n int) error {
	if a := s.faults.apache; a != nil {
		return a.RestartAll(ctx)
	}
	_, port, err := net.SplitHostPort(s.brokers[0])
	if err != nil {
		return err
	}
	p, _ := strconv.Atoi(port)
	var k *localsvc.EmbeddedKafka
	for range 50 { // the old listener may take a moment to release the port
		if k, err = localsvc.StartEmbeddedKafka(p, s.faults.kafkaDir, events.TopicTicketIssued, events.TopicRefundRequested); err == nil {
			break
		}
		if serr := sleep(ctx, 200*time.Millisecond); serr != nil {
			return serr
		}
	}
	if err != nil {
		return err
	}
	s.faults.mu.Lock()
	s.faults.kafka = k
	s.faults.mu.Unlock()
	return nil
}

// Proxy implements chaos.Target.
func (s *sale) Proxy(link string) *faultproxy.Proxy { return s.faults.proxies[link] }

// auditFaults adds the plan's windows, with the requests each failed, to
// the report, and re-checks it.
func (s *sale) auditFaults(rep *Report, windows []chaos.Window) {
	if s.o.Faults == nil {
		return
	}
	rep.Faults = &FaultsReport{Plan: s.o.Faults.String(), Seed: s.o.Seed, Windows: s.faults.recorder.Windows(s.open, windows)}
	s.faults.mu.Lock()
	rep.Faults.ExitedOnTheirOwn = maps.Clone(s.faults.crashes)
	s.faults.mu.Unlock()
	for _, w := range rep.Faults.Windows {
		if w.Error != "" {
			rep.Problems = append(rep.Problems, fmt.Sprintf("fault %q could not be injected: %s", w.Fault, w.Error))
		}
	}
}
