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

package queue

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/internal/zone"
)

// store runs the queue's Redis scripts for one event.
type store struct {
	rdb     redis.UniversalClient
	eventID int64
	k       keys
}

func newStore(rdb redis.UniversalClient, eventID int64) *store {
	return &store{rdb: rdb, eventID: eventID, k: keysFor(eventID)}
}

func unavailable(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", zone.ErrUnavailable, what, err)
}

// place is a customer's place in the queue.
type place struct {
	Created bool
	State   string // w, a or c
	Score   int64
	Gen     uint64 // the queue's generation (see joinScript)
	Queue   string // the queue the place is in
	// Refused, when set, is why the join got no place: code_used or
	// challenge_used.
	Refused string
}

// joinSettings is what the join scripts take from set: the opening in
// Unix milliseconds (0, open from the start, when none is set) and the
// pre-queue's mode.
func joinSettings(set Settings) (openMs int64, mode string) {
	if !set.SalesOpenAt.IsZero() {
		openMs = set.SalesOpenAt.UnixMilli()
	}
	mode = "shuffle"
	if set.PreQueue == "fifo" || set.PreQueue == "FIFO" {
		mode = "fifo"
	}
	return openMs, mode
}

// joinOne is one join alone: joinScript when it is plain, else the
// coalesced joins' script with one join.
func (s *store) joinOne(ctx context.Context, req JoinRequest, set Settings) (place, error) {
	if len(set.Phases) == 0 && req.plain() {
		return s.join(ctx, req.Customer, set)
	}
	ps, err := s.joinQueues(ctx, []JoinRequest{req}, set)
	if err != nil {
		return place{}, err
	}
	return ps[0], nil
}

// join gives customer a place in DefaultQueue, or returns the one they hold.
func (s *store) join(ctx context.Context, customer string, set Settings) (place, error) {
	openMs, mode := joinSettings(set)
	res, err := joinScript.Run(ctx, s.rdb,
		s.k.joinKeys(),
		customer, openMs, mode, randomKey(), strconv.FormatInt(postOpenBase, 10), newGeneration()).Slice()
	if err != nil {
		return place{}, unavailable("join", err)
	}
	if len(res) != 5 {
		return place{}, fmt.Errorf("join script: unexpected reply %v", res)
	}
	p := place{Created: toInt(res[0]) == 1, State: toString(res[1]), Score: toInt(res[3]), Gen: parseGeneration(res[4]), Queue: DefaultQueue}
	return p, nil
}

// randomKey draws a pre-queue member's place: uniform in [0, 2^52). Sorting
// the cohort by independent uniform keys is a uniformly random shuffle, done
// at join time so that opening costs nothing; the keys stay secret (the
// queueId is signed, and nobody learns a rank before opening).
func randomKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(binary.BigEndian.Uint64(b[:])%maxShuffleKey, 10)
}

// newGeneration draws a generation: a random non-zero 63-bit number.
func newGeneration() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(binary.BigEndian.Uint64(b[:])>>1|1, 10)
}

// parseGeneration reads a generation; 0 means none.
func parseGeneration(v any) uint64 {
	g, _ := strconv.ParseUint(toString(v), 10, 64)
	return g
}

// generation reads the queue's generation; 0 when Redis has none.
func (s *store) generation(ctx context.Context) (uint64, error) {
	v, err := s.rdb.Get(ctx, s.k.gen).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, unavailable("generation", err)
	}
	return parseGeneration(v), nil
}

// claim reads the session of an admitted customer; the first call starts
// the token's TTL.
type claimResult struct {
	Status    string // waiting, admitted, expired, left, none
	SessionID string
	Expiry    time.Time
}

func (s *store) claim(ctx context.Context, customer string, score int64, ttl time.Duration) (claimResult, error) {
	return s.claimIn(ctx, customer, DefaultQueue, score, ttl)
}

// claimIn is claim of a place in queue.
func (s *store) claimIn(ctx context.Context, customer, queue string, score int64, ttl time.Duration) (claimResult, error) {
	res, err := claimScript.Run(ctx, s.rdb, []string{s.k.customers, s.k.active, s.k.queueKey(queue)},
		customer, score, ttl.Milliseconds()).Slice()
	if err != nil {
		return claimResult{}, unavailable("claim", err)
	}
	if len(res) == 0 {
		return claimResult{}, errors.New("claim script: empty reply")
	}
	c := claimResult{Status: toString(res[0])}
	if c.Status == "admitted" && len(res) == 3 {
		c.SessionID = toString(res[1])
		c.Expiry = time.UnixMilli(toInt(res[2]))
	}
	return c, nil
}

// leave removes the customer's place or ends their session. It reports
// false when the place is not the customer's.
func (s *store) leave(ctx context.Context, customer string, score int64) (bool, error) {
	return s.leaveIn(ctx, customer, DefaultQueue, score)
}

// leaveIn is leave of a place in queue.
func (s *store) leaveIn(ctx context.Context, customer, queue string, score int64) (bool, error) {
	n, err := leaveScript.Run(ctx, s.rdb, []string{s.k.customers, s.k.queueKey(queue), s.k.active}, customer, score, postOpenBase).Int()
	if err != nil {
		return false, unavailable("leave", err)
	}
	return n == 1, nil
}

// takeEpoch increments the fencing epoch of an admitter without election:
// the caller becomes the only admitter whose ticks are accepted, and every
// earlier one is fenced off. A failover that loses the INCR can hand the
// same number out twice; elected admitters use the Lease's number instead.
func (s *store) takeEpoch(ctx context.Context) (int64, error) {
	e, err := s.rdb.Incr(ctx, s.k.epoch).Result()
	if err != nil {
		return 0, unavailable("take epoch", err)
	}
	return e, nil
}

// tickResult is what one admitter tick did.
type tickResult struct {
	Admitted int64
	Active   int64
	Fenced   bool
	Reason   string // "", paused, not_open, sold_out, all_held
	// Choosing is the people a tick that admitted counted as choosing
	// seats; -1 when it did not count them.
	Choosing int64
}

// tick runs one admission step atomically.
func (s *store) tick(ctx context.Context, epoch int64, set Settings, batch int64) (tickResult, error) {
	openMs := int64(0)
	if !set.SalesOpenAt.IsZero() {
		openMs = set.SalesOpenAt.UnixMilli()
	}
	paused := "0"
	if set.Paused {
		paused = "1"
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	keys := []string{s.k.epoch, s.k.active, s.k.queue, s.k.customers, s.k.remaining, s.k.preRank, s.k.watermark, s.k.admitted, s.k.admitLog, s.k.inventory}
	args := []any{epoch, set.MaxActive, batch, set.ClaimTimeout.Milliseconds(), paused, openMs, hex.EncodeToString(nonce[:]),
		strconv.FormatInt(postOpenBase, 10), set.TokenTTL.Milliseconds(), set.SelectionWindow.Milliseconds()}
	if len(set.Phases) > 0 {
		// Several queues, dealt by weight (see admitScript).
		qs := set.queues(time.Now())
		keys = append(keys, s.k.wrr, s.k.admittedQ)
		args = append(args, len(qs), DefaultQueue)
		for _, q := range qs {
			keys = append(keys, s.k.queueKey(q.Name), s.k.preRankKey(q.Name), s.k.watermarkKey(q.Name))
			args = append(args, q.Name, q.Weight, q.OpensAt.UnixMilli())
		}
	}
	res, err := admitScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return tickResult{}, unavailable("admit", err)
	}
	if len(res) != 3 && len(res) != 4 {
		return tickResult{}, fmt.Errorf("admit script: unexpected reply %v", res)
	}
	r := tickResult{Admitted: toInt(res[0]), Active: toInt(res[1]), Choosing: -1}
	if len(res) == 4 {
		r.Choosing = toInt(res[3])
	}
	if r.Admitted < 0 {
		return tickResult{Fenced: true, Choosing: -1}, nil
	}
	r.Reason = [...]string{"", "paused", "not_open", "sold_out", "all_held"}[min(max(toInt(res[2]), 0), 4)]
	return r, nil
}

// sample is a (rank, score) point of the waiting queue.
type sample struct {
	Rank  int64
	Score int64
}

// state is what the snapshot script reads.
type state struct {
	Waiting   int64
	Active    int64
	Admitted  int64
	Remaining int64  // -1 when unknown
	Held      int64  // seats HELD, -1 when unknown (booking has not published it)
	Sold      int64  // seats SOLD, -1 when unknown
	Watermark int64  // -1 before the first admission
	Gen       uint64 // the queue's generation; 0 when Redis has none (lost, or nobody joined yet)
	Now       time.Time
	Samples   []sample
	// Queues are the event's queues' figures when it has phases (then
	// Waiting is their sum); nil without phases.
	Queues []queueState
}

func (s *store) read(ctx context.Context, samples int) (state, error) {
	res, err := snapshotScript.Run(ctx, s.rdb,
		[]string{s.k.queue, s.k.active, s.k.admitted, s.k.remaining, s.k.watermark, s.k.inventory, s.k.gen}, samples).Slice()
	if err != nil {
		return state{}, unavailable("snapshot", err)
	}
	if len(res) < 9 {
		return state{}, fmt.Errorf("snapshot script: unexpected reply %v", res)
	}
	st := state{Waiting: toInt(res[0]), Active: toInt(res[1]), Admitted: toInt(res[2]),
		Remaining: optInt(res[3]), Held: optInt(res[6]), Sold: optInt(res[7]), Watermark: -1, Now: time.UnixMilli(toInt(res[5])),
		Gen: parseGeneration(res[8])}
	if v := toString(res[4]); v != "" {
		st.Watermark = toInt(v)
	}
	for i := 9; i+1 < len(res); i += 2 {
		st.Samples = append(st.Samples, sample{Rank: toInt(res[i]), Score: toInt(res[i+1])})
	}
	return st, nil
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(x, 64)
		return int64(f)
	}
	return 0
}

// optInt parses a figure the script returns as "" when its key or field is
// missing: -1 (unknown) then, or when it is not an integer.
func optInt(v any) int64 {
	if n, err := strconv.ParseInt(toString(v), 10, 64); err == nil {
		return n
	}
	return -1
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

// queueState is what the snapshot reads of one queue.
type queueState struct {
	Name      string
	Waiting   int64
	Watermark int64 // -1 before the queue's first admission
	Admitted  int64
	Samples   []sample
}

// readQueues reads each of names' figures in one round trip (a pipeline
// of queueSnapshotScript).
func (s *store) readQueues(ctx context.Context, samples int, names []string) ([]queueState, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(names))
	for i, n := range names {
		cmds[i] = queueSnapshotScript.Eval(ctx, pipe, []string{s.k.queueKey(n), s.k.watermarkKey(n), s.k.admittedQ}, samples, n)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, unavailable("snapshot", err)
	}
	out := make([]queueState, len(names))
	for i, c := range cmds {
		res, err := c.Slice()
		if err != nil || len(res) < 3 {
			return nil, unavailable("snapshot", fmt.Errorf("queue %s: %v %v", names[i], res, err))
		}
		q := queueState{Name: names[i], Waiting: toInt(res[0]), Watermark: optInt(res[1]), Admitted: toInt(res[2])}
		for j := 3; j+1 < len(res); j += 2 {
			q.Samples = append(q.Samples, sample{Rank: toInt(res[j]), Score: toInt(res[j+1])})
		}
		out[i] = q
	}
	return out, nil
}
