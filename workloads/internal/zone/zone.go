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

// Package zone is the contract between the queue and the booking service
// about the seat-selection zone in Redis: which sessions are active, how a
// session is released, and how much inventory remains. The queue service
// owns these keys; the booking service only checks and releases sessions
// and publishes the inventory (remaining, held and sold seats).
//
// All keys of one event share the hash tag {eventId}, so the queue's Lua
// scripts touch a single Redis Cluster slot.
package zone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/internal/coalesce"
	"github.com/ticketfair/ticketfair/workloads/keyspace"
)

// Prefix returns the key prefix of an event: "tf:{42}:".
func Prefix(eventID int64) string { return keyspace.Prefix(eventID) }

// ActiveKey is a sorted set of active session ids scored by their expiry
// (Unix milliseconds). A session is active while its score is in the future.
func ActiveKey(eventID int64) string { return Prefix(eventID) + "active" }

// RemainingKey holds the number of seats still AVAILABLE or HELD, written by
// the booking service; 0 means sold out.
func RemainingKey(eventID int64) string { return Prefix(eventID) + "remaining" }

// InventoryKey is a hash with fields "held" (seats HELD), "sold" (seats
// SOLD) and "holds" (orders holding seats), written by the booking service
// together with RemainingKey in one MULTI/EXEC (PublishInventory), so they
// always agree. The queue reports held and sold in its stats and admits no
// more people than the seats still free (see the queue's admitScript); a
// missing field means not published yet.
func InventoryKey(eventID int64) string { return Prefix(eventID) + "inventory" }

// Inventory counts an event's seats by status.
type Inventory struct {
	Available int64 // AVAILABLE
	Held      int64 // HELD
	Sold      int64 // SOLD
	Holds     int64 // orders holding the HELD seats
}

// Remaining is what RemainingKey holds: the seats not SOLD (AVAILABLE or
// HELD), what the queue may still admit people for; 0 means sold out.
func (i Inventory) Remaining() int64 { return i.Available + i.Held }

// ErrUnavailable wraps Redis failures.
var ErrUnavailable = errors.New("redis unavailable")

// sessionsActiveScript compares sessions' expiries with Redis's clock,
// the one the queue's scripts set them by, so a booking replica whose own
// clock runs ahead or behind judges sessions exactly as the queue does.
// KEYS: active. ARGV: session ids. Returns 1 (active) or 0 for each.
var sessionsActiveScript = redis.NewScript(`
local exp = redis.call('ZMSCORE', KEYS[1], unpack(ARGV))
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #ARGV do
  if exp[i] and tonumber(exp[i]) > now then out[i] = 1 else out[i] = 0 end
end
return out
`)

// sessionsActive reports, for each of sids, whether it is active.
func sessionsActive(ctx context.Context, rdb redis.Scripter, eventID int64, sids []string) ([]bool, error) {
	args := make([]any, len(sids))
	for i, sid := range sids {
		args[i] = sid
	}
	res, err := sessionsActiveScript.Run(ctx, rdb, []string{ActiveKey(eventID)}, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("%w: check session: %v", ErrUnavailable, err)
	}
	if len(res) != len(sids) {
		return nil, fmt.Errorf("%w: check session: %d answers for %d sessions", ErrUnavailable, len(res), len(sids))
	}
	out := make([]bool, len(res))
	for i, n := range res {
		out[i] = n == 1
	}
	return out, nil
}

// SessionActive reports whether session sid of the event is still active.
func SessionActive(ctx context.Context, rdb redis.Scripter, eventID int64, sid string) (bool, error) {
	active, err := sessionsActive(ctx, rdb, eventID, []string{sid})
	if err != nil {
		return false, err
	}
	return active[0], nil
}

// Sessions checks the sessions of one event for a hot path (every hold
// checks its session): the checks that arrive together go to Redis as
// one script call, so under load a booking replica pays one round trip
// per batch, not per hold. Run must be running for Active to answer.
type Sessions struct {
	calls *coalesce.Batcher[string, bool]
}

// maxSessionBatch bounds the sessions of one call.
const maxSessionBatch = 256

// NewSessions returns the checker of eventID's sessions.
func NewSessions(rdb redis.Scripter, eventID int64) *Sessions {
	return &Sessions{calls: coalesce.New(maxSessionBatch, 2*time.Second,
		func(ctx context.Context, sids []string) ([]bool, error) {
			return sessionsActive(ctx, rdb, eventID, sids)
		})}
}

// Active reports whether session sid is still active.
func (s *Sessions) Active(ctx context.Context, sid string) (bool, error) {
	return s.calls.Do(ctx, sid)
}

// Run sends the batches until ctx ends.
func (s *Sessions) Run(ctx context.Context) { s.calls.Run(ctx) }

// ReleaseSession frees the slots of sessions at once (after a purchase,
// when the customer leaves, when their hold expired unpaid). Releasing
// twice is harmless.
func ReleaseSession(ctx context.Context, rdb redis.UniversalClient, eventID int64, sids ...string) error {
	if len(sids) == 0 {
		return nil
	}
	members := make([]any, len(sids))
	for i, sid := range sids {
		members[i] = sid
	}
	if err := rdb.ZRem(ctx, ActiveKey(eventID), members...).Err(); err != nil {
		return fmt.Errorf("%w: release session: %v", ErrUnavailable, err)
	}
	return nil
}

// PublishInventory records inv: RemainingKey = inv.Remaining() and the
// "held", "sold" and "holds" fields of InventoryKey, in one MULTI/EXEC so a reader
// never sees one without the other.
func PublishInventory(ctx context.Context, rdb redis.UniversalClient, eventID int64, inv Inventory) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, RemainingKey(eventID), inv.Remaining(), 0)
		p.HSet(ctx, InventoryKey(eventID), "held", inv.Held, "sold", inv.Sold, "holds", inv.Holds)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: publish inventory: %v", ErrUnavailable, err)
	}
	return nil
}

// AdmitLogKey is a list of "customerId|arrivalSeq|queueSeq|cohort", one
// entry per admission in admission order, appended by the queue's admitter:
// the fairness audit of a sale. arrivalSeq is the order of the customer's
// first join; queueSeq is the place in the queue (the shuffled rank for the
// pre-queue cohort, the place's number after opening); cohort is "p" for a
// place given before opening, "f" for one after (the queue's own clock
// decides, not the client's).
func AdmitLogKey(eventID int64) string { return Prefix(eventID) + "admitlog" }

// HealthKey is a hash of booking's health figures, one field per booking
// replica (its instance id), written about once a second by each replica
// (PublishHealth) and read by the queue's admitter to tune its rate
// (ReadHealth). Each value carries the time Redis stored it, so a replica
// that stops publishing drops out of the reading; the whole key expires
// once no replica publishes.
func HealthKey(eventID int64) string { return Prefix(eventID) + "health" }

// Health is what one booking replica measured over its recent window.
type Health struct {
	// HoldP99 is the 99th percentile of the server-side hold: from the
	// checks to the answer, the wait in the transaction gate included.
	HoldP99 time.Duration `json:"holdP99"`
	// GateWaitP99 is the 99th percentile of the wait in the gate.
	GateWaitP99 time.Duration `json:"gateWaitP99"`
	// GateQueue is the transactions waiting in the gate now.
	GateQueue int64 `json:"gateQueue"`
	// HoldsPerSecond is the holds the window saw, per second.
	HoldsPerSecond float64 `json:"holdsPerSecond"`
	// Holds is how many holds the window saw: a p99 of a few means little.
	Holds int64 `json:"holds"`
}

// HealthFresh is how old a replica's figures may be and still count.
const HealthFresh = 5 * time.Second

// healthTTL is how long the hash outlives the last publish, and how old a
// field gets before a publish of another replica removes it.
const healthTTL = 30 * time.Second

// publishHealthScript stores one replica's figures stamped with Redis's
// clock, the one ReadHealth judges them by, and drops the fields of
// replicas gone for longer than the TTL.
// KEYS: health. ARGV: instance id, JSON figures, TTL in milliseconds.
var publishHealthScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local at = tonumber(string.match(all[i + 1], '^(%d+) '))
  if all[i] ~= ARGV[1] and (not at or at < now - ttl) then redis.call('HDEL', KEYS[1], all[i]) end
end
redis.call('HSET', KEYS[1], ARGV[1], now .. ' ' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
return now
`)

// readHealthScript returns Redis's clock and the health hash.
// KEYS: health.
var readHealthScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = redis.call('HGETALL', KEYS[1])
table.insert(out, 1, now)
return out
`)

// PublishHealth records the figures of booking replica instance.
func PublishHealth(ctx context.Context, rdb redis.Scripter, eventID int64, instance string, h Health) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := publishHealthScript.Run(ctx, rdb, []string{HealthKey(eventID)}, instance, b, healthTTL.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("%w: publish health: %v", ErrUnavailable, err)
	}
	return nil
}

// ReadHealth combines the figures of the replicas that published within
// HealthFresh: the worst percentiles (the admitter must not overload the
// slowest replica, where the queue's people land as much as anywhere),
// the gate queues and holds added up. ok is false when no replica's
// figures are fresh: booking is not publishing, and nothing is known.
func ReadHealth(ctx context.Context, rdb redis.Scripter, eventID int64) (h Health, ok bool, err error) {
	res, err := readHealthScript.Run(ctx, rdb, []string{HealthKey(eventID)}).Slice()
	if err != nil {
		return Health{}, false, fmt.Errorf("%w: read health: %v", ErrUnavailable, err)
	}
	if len(res) == 0 {
		return Health{}, false, fmt.Errorf("%w: read health: empty reply", ErrUnavailable)
	}
	now, _ := res[0].(int64)
	for i := 1; i+1 < len(res); i += 2 {
		v, _ := res[i+1].(string)
		stamp, body, found := strings.Cut(v, " ")
		at, perr := strconv.ParseInt(stamp, 10, 64)
		if !found || perr != nil || now-at > HealthFresh.Milliseconds() {
			continue
		}
		var r Health
		if json.Unmarshal([]byte(body), &r) != nil {
			continue
		}
		h.HoldP99 = max(h.HoldP99, r.HoldP99)
		h.GateWaitP99 = max(h.GateWaitP99, r.GateWaitP99)
		h.GateQueue += r.GateQueue
		h.HoldsPerSecond += r.HoldsPerSecond
		h.Holds += r.Holds
		ok = true
	}
	return h, ok, nil
}
