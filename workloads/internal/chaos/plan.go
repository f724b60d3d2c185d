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

// Package chaos runs a fault plan against a local sale while its crowd
// buys: it kills and restarts service processes, restarts Redis and
// PostgreSQL, takes the broker down and degrades the network between the
// services and their stores, records when each fault was in force, and
// tells which requests each fault failed.
package chaos

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind is what a fault does.
type Kind string

// The faults a plan can hold.
const (
	// Kill SIGKILLs a service process and starts it again after For.
	// Targets: queue-admitter (the queue replica whose admitter runs),
	// queue-2, booking, booking-2, relay, tickets.
	Kill Kind = "kill"
	// RedisRestart shuts Redis down without saving (SHUTDOWN NOSAVE) and
	// starts a new server on the same port after For: every place,
	// session and counter is lost.
	RedisRestart Kind = "redis-restart"
	// RedisRestartAOF turns the append-only file on, then does the same:
	// the new server reloads everything.
	RedisRestartAOF Kind = "redis-restart-aof"
	// RedisFailover SIGKILLs the Redis master of a Sentinel set-up
	// (demo --redis-mode sentinel); the sentinels promote the replica.
	RedisFailover Kind = "redis-failover"
	// PostgresRestart is `pg_ctl restart -m fast`.
	PostgresRestart Kind = "pg-restart"
	// BrokerOutage SIGKILLs the Kafka broker for For, then starts it again
	// on the same ports with its data. Without a target every node of the
	// cluster goes down; with kafka-<n> only node n (1-based) of a
	// multi-node Apache Kafka cluster (demo --kafka apache --kafka-nodes 3).
	BrokerOutage Kind = "broker-outage"
	// Latency adds Latency to every round trip through a proxy for For.
	Latency Kind = "latency"
	// Blackhole swallows every byte through a proxy for For.
	Blackhole Kind = "blackhole"
	// Reset resets every connection through a proxy, every 500 ms for For.
	Reset Kind = "reset"
)

// The proxied links network faults apply to.
const (
	BookingPostgres = "booking-postgres"
	QueueRedis      = "queue-redis"
)

// Fault is one line of a plan.
type Fault struct {
	At      time.Duration // after sales open
	Kind    Kind
	Target  string
	For     time.Duration
	Latency time.Duration
}

func (f Fault) String() string {
	s := fmt.Sprintf("%-6s %s", f.At, f.Kind)
	if f.Target != "" {
		s += " " + f.Target
	}
	if f.For > 0 {
		s += " for=" + f.For.String()
	}
	if f.Latency > 0 {
		s += " latency=" + f.Latency.String()
	}
	return s
}

// Plan is a list of faults in time order.
type Plan struct {
	Faults []Fault
}

// End is when the last fault is over, after sales open.
func (p Plan) End() time.Duration {
	var end time.Duration
	for _, f := range p.Faults {
		end = max(end, f.At+f.For)
	}
	return end
}

func (p Plan) String() string {
	var b strings.Builder
	for _, f := range p.Faults {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

var killTargets = map[string]bool{"queue-admitter": true, "queue": true, "queue-2": true, "booking": true, "booking-2": true, "relay": true, "tickets": true}

// Parse reads a plan: one fault a line, "<at> <fault> [target] [for=<d>]
// [latency=<d>]", at being the time after sales open; '#' starts a comment.
func Parse(text string) (Plan, error) {
	var p Plan
	sc := bufio.NewScanner(strings.NewReader(text))
	n := 0
	for sc.Scan() {
		n++
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 {
			return p, fmt.Errorf("plan line %d: want \"<at> <fault> [target] [for=<d>] [latency=<d>]\"", n)
		}
		at, err := time.ParseDuration(fields[0])
		if err != nil || at < 0 {
			return p, fmt.Errorf("plan line %d: %q is not a time after opening", n, fields[0])
		}
		f := Fault{At: at, Kind: Kind(fields[1])}
		for _, kv := range fields[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				if f.Target != "" {
					return p, fmt.Errorf("plan line %d: two targets %q and %q", n, f.Target, kv)
				}
				f.Target = kv
				continue
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return p, fmt.Errorf("plan line %d: %s=%q is not a positive duration", n, k, v)
			}
			switch k {
			case "for":
				f.For = d
			case "latency":
				f.Latency = d
			default:
				return p, fmt.Errorf("plan line %d: unknown setting %q", n, k)
			}
		}
		if err := f.validate(); err != nil {
			return p, fmt.Errorf("plan line %d: %w", n, err)
		}
		p.Faults = append(p.Faults, f)
	}
	sort.SliceStable(p.Faults, func(i, j int) bool { return p.Faults[i].At < p.Faults[j].At })
	return p, sc.Err()
}

func (f *Fault) validate() error {
	switch f.Kind {
	case Kill:
		if !killTargets[f.Target] {
			return fmt.Errorf("kill: target %q is none of queue-admitter, queue, queue-2, booking, booking-2, relay, tickets", f.Target)
		}
		if f.For == 0 {
			f.For = 2 * time.Second
		}
	case RedisRestart, RedisRestartAOF, RedisFailover, PostgresRestart:
		if f.Target != "" {
			return fmt.Errorf("%s takes no target", f.Kind)
		}
	case BrokerOutage:
		if _, err := f.BrokerNode(); err != nil {
			return err
		}
		if f.For == 0 {
			return fmt.Errorf("broker-outage needs for=<d>")
		}
	case Latency, Blackhole, Reset:
		if f.Target != BookingPostgres && f.Target != QueueRedis {
			return fmt.Errorf("%s: target %q is neither %s nor %s", f.Kind, f.Target, BookingPostgres, QueueRedis)
		}
		if f.For == 0 {
			return fmt.Errorf("%s needs for=<d>", f.Kind)
		}
		if f.Kind == Latency && f.Latency == 0 {
			return fmt.Errorf("latency needs latency=<d>")
		}
	default:
		return fmt.Errorf("unknown fault %q", f.Kind)
	}
	return nil
}

// BrokerNode is the 1-based Kafka node a broker-outage takes down, 0 for
// all of them (no target).
func (f Fault) BrokerNode() (int, error) {
	if f.Target == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(f.Target, "kafka-"))
	if !strings.HasPrefix(f.Target, "kafka-") || err != nil || n < 1 {
		return 0, fmt.Errorf("broker-outage: target %q is not kafka-<n> (a node from 1) or none (every node)", f.Target)
	}
	return n, nil
}

// BrokerNodes is the number of Kafka nodes the plan needs: the highest
// node a broker-outage names, 1 when none is named.
func (p Plan) BrokerNodes() int {
	need := 1
	for _, f := range p.Faults {
		if f.Kind == BrokerOutage {
			n, _ := f.BrokerNode()
			need = max(need, n)
		}
	}
	return need
}

// NeedsSentinel reports whether the plan kills a Sentinel set-up's master.
func (p Plan) NeedsSentinel() bool {
	for _, f := range p.Faults {
		if f.Kind == RedisFailover {
			return true
		}
	}
	return false
}

// StandaloneRedisOnly reports whether the plan restarts the queue's Redis
// or breaks its link through a proxy: faults of a single Redis server,
// which a Sentinel set-up (where the sentinels name the master) has not.
func (p Plan) StandaloneRedisOnly() bool {
	for _, f := range p.Faults {
		if f.Kind == RedisRestart || f.Kind == RedisRestartAOF || f.Target == QueueRedis {
			return true
		}
	}
	return false
}

// SentinelPlan is a sale on Sentinel (demo --redis-mode sentinel) whose
// master dies mid-sale: the sentinels promote the replica, the services
// follow them, and the audit must hold as ever.
const SentinelPlan = `# at   fault
10s    redis-failover                       # SIGKILL of the master; the sentinels promote the replica
`

// DefaultPlan holds every fault, one at a time, at full length: `make chaos`.
// Its fault at 30 s takes one node of three down, so it needs an Apache Kafka
// cluster of three (demo --kafka apache --kafka-nodes 3).
const DefaultPlan = `# at   fault              target            settings
5s     kill               queue-admitter    for=3s
15s    kill               booking           for=3s
25s    kill               relay             for=3s
30s    broker-outage      kafka-2           for=5s   # one of three nodes: its partitions move
35s    kill               tickets           for=3s
45s    redis-restart                        # SHUTDOWN NOSAVE, a new empty server
60s    pg-restart                           # pg_ctl restart -m fast
75s    broker-outage                        for=15s  # every Kafka node SIGKILLed
95s    latency            booking-postgres  for=10s latency=500ms
110s   blackhole          booking-postgres  for=10s
125s   reset              booking-postgres  for=5s
135s   latency            queue-redis       for=10s latency=500ms
150s   blackhole          queue-redis       for=10s
165s   reset              queue-redis       for=5s
175s   kill               booking-2         for=3s
185s   kill               queue-admitter    for=3s
195s   redis-restart-aof                    # with the append-only file: nothing is lost
`

// SmallPlan holds every fault once, shortened: the sale test in CI. As
// DefaultPlan it needs three Kafka nodes.
const SmallPlan = `# at   fault              target            settings
2s     kill               queue-admitter    for=1s
6s     kill               booking           for=1s
9s     kill               relay             for=1s
12s    kill               tickets           for=1s
15s    redis-restart
20s    pg-restart
25s    broker-outage                        for=5s
31s    latency            booking-postgres  for=3s latency=500ms
35s    blackhole          booking-postgres  for=3s
39s    reset              booking-postgres  for=2s
42s    latency            queue-redis       for=3s latency=500ms
46s    blackhole          queue-redis       for=3s
50s    reset              queue-redis       for=2s
53s    redis-restart-aof
56s    broker-outage      kafka-2           for=4s
`
