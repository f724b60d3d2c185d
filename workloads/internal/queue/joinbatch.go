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
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/coalesce"
)

// JoinRequest is one join as the join scripts take it: the customer (the
// verified identity's subject), their tier claim, the queue chosen for
// them, the access code they redeem and the proof-of-work challenge they
// spend.
type JoinRequest struct {
	Customer string
	Tier     string
	// Queue is the queue to enter; "" is DefaultQueue.
	Queue string
	// CodeHash is the hex SHA-256 of the access code; "" without one.
	CodeHash string
	// ChallengeID names the proof-of-work challenge spent by the join,
	// marked used until ChallengeExpiry; "" without one.
	ChallengeID     string
	ChallengeExpiry time.Time
}

// plain reports whether r is a join joinManyScript serves: into
// DefaultQueue, with nothing to redeem.
func (r JoinRequest) plain() bool {
	return (r.Queue == "" || r.Queue == DefaultQueue) && r.CodeHash == "" && r.ChallengeID == ""
}

// joinRequests gives each of reqs a place (or returns theirs, or the
// reason it is refused) in one script call, in order: joinManyScript for
// an event with one queue and joins that redeem nothing, else
// joinQueuesScript.
func (s *store) joinRequests(ctx context.Context, reqs []JoinRequest, set Settings) ([]place, error) {
	plain := len(set.Phases) == 0
	for i := 0; plain && i < len(reqs); i++ {
		plain = reqs[i].plain()
	}
	if plain {
		customers := make([]string, len(reqs))
		for i, r := range reqs {
			customers[i] = r.Customer
		}
		return s.joinMany(ctx, customers, set)
	}
	return s.joinQueues(ctx, reqs, set)
}

// joinQueues is one call of joinQueuesScript (asking again with the
// pre-queue's random keys when it says NOKEYS).
func (s *store) joinQueues(ctx context.Context, reqs []JoinRequest, set Settings) ([]place, error) {
	now := time.Now()
	qs := set.queues(now)
	index := make(map[string]int, len(qs))
	for i, q := range qs {
		index[q.Name] = i + 1
	}
	for _, r := range reqs {
		// A queue the settings no longer list (a live change) still takes
		// the places chosen for it, as open.
		if name := cmp.Or(r.Queue, DefaultQueue); index[name] == 0 {
			qs = append(qs, queueDef{Name: name, Weight: 1})
			index[name] = len(qs)
		}
	}
	keys := make([]string, 0, 6+len(qs))
	keys = append(keys, s.k.customers, s.k.arrival, s.k.active, s.k.gen, s.k.codes, s.k.queue)
	_, mode := joinSettings(set)
	args := make([]any, 0, 6+2*len(qs)+3*len(reqs))
	args = append(args, mode, strconv.FormatInt(postOpenBase, 10), newGeneration(), len(reqs), len(qs), s.k.challengePrefix())
	withKeys := false
	for _, q := range qs {
		keys = append(keys, s.k.queueKey(q.Name))
		args = append(args, q.OpensAt.UnixMilli())
		withKeys = withKeys || (mode == "shuffle" && now.Before(q.OpensAt.Add(keysAfterOpening)))
	}
	for _, q := range qs {
		if q.Name == DefaultQueue {
			args = append(args, "")
		} else {
			args = append(args, q.Name)
		}
	}
	for _, r := range reqs {
		args = append(args, r.Customer)
	}
	var b strings.Builder
	for _, r := range reqs {
		b.Reset()
		b.WriteString(strconv.Itoa(index[cmp.Or(r.Queue, DefaultQueue)]))
		b.WriteByte('|')
		b.WriteString(r.CodeHash)
		b.WriteByte('|')
		if r.ChallengeID != "" {
			b.WriteString(r.ChallengeID)
			b.WriteByte('|')
			b.WriteString(strconv.FormatInt(r.ChallengeExpiry.UnixMilli(), 10))
		} else {
			b.WriteByte('|')
		}
		args = append(args, b.String())
	}
	run := func(withKeys bool) ([]any, error) {
		a := args
		if withKeys {
			a = append(a[:len(a):len(a)], make([]any, len(reqs))...)
			for i := len(args); i < len(a); i++ {
				a[i] = randomKey()
			}
		}
		return joinQueuesScript.Run(ctx, s.rdb, keys, a...).Slice()
	}
	res, err := run(withKeys)
	if err != nil && !withKeys && strings.HasPrefix(err.Error(), "NOKEYS") {
		res, err = run(true)
	}
	if err != nil {
		return nil, unavailable("join", err)
	}
	if len(res) != 4*len(reqs)+1 {
		return nil, fmt.Errorf("join script: %d values for %d joins", len(res), len(reqs))
	}
	gen := parseGeneration(res[len(res)-1])
	out := make([]place, len(reqs))
	for i := range out {
		r := res[4*i:]
		if toInt(r[0]) < 0 {
			out[i] = place{Refused: toString(r[1])}
			continue
		}
		out[i] = place{Created: toInt(r[0]) == 1, State: toString(r[1]), Score: toInt(r[2]), Gen: gen,
			Queue: cmp.Or(toString(r[3]), DefaultQueue)}
	}
	return out, nil
}

// joinMany gives each of customers a place in DefaultQueue (or returns
// theirs) in one script call, in order.
func (s *store) joinMany(ctx context.Context, customers []string, set Settings) ([]place, error) {
	openMs, mode := joinSettings(set)
	// The pre-queue's random keys go only while it may still take places
	// by this pod's clock, with a margin for Redis's; after that they are
	// n arguments Redis would parse for nothing. A script that needs them
	// all the same says so (NOKEYS), and the call goes again with them.
	keys := mode == "shuffle" && time.Now().Before(set.SalesOpenAt.Add(keysAfterOpening))
	res, err := s.runJoinMany(ctx, customers, openMs, mode, keys)
	if err != nil && !keys && strings.HasPrefix(err.Error(), "NOKEYS") {
		res, err = s.runJoinMany(ctx, customers, openMs, mode, true)
	}
	if err != nil {
		return nil, unavailable("join", err)
	}
	if len(res) != 3*len(customers)+1 {
		return nil, fmt.Errorf("join script: %d values for %d customers", len(res), len(customers))
	}
	gen := parseGeneration(res[len(res)-1])
	out := make([]place, len(customers))
	for i := range out {
		r := res[3*i:]
		out[i] = place{Created: toInt(r[0]) == 1, State: toString(r[1]), Score: toInt(r[2]), Gen: gen, Queue: DefaultQueue}
	}
	return out, nil
}

// keysAfterOpening is how long after opening, by a pod's clock, its joins
// still carry the pre-queue's random keys: more than the skew between a
// pod's clock and Redis's.
const keysAfterOpening = time.Minute

// runJoinMany is one call of joinManyScript, with the random keys or
// without them.
func (s *store) runJoinMany(ctx context.Context, customers []string, openMs int64, mode string, keys bool) ([]any, error) {
	args := make([]any, 0, 5+2*len(customers))
	args = append(args, openMs, mode, strconv.FormatInt(postOpenBase, 10), newGeneration(), len(customers))
	for _, c := range customers {
		args = append(args, c)
	}
	if keys {
		for range customers {
			args = append(args, randomKey())
		}
	}
	return joinManyScript.Run(ctx, s.rdb,
		s.k.joinKeys(), args...).Slice()
}

// newJoinBatcher coalesces the joins that reach a pod at the same moment
// into one script call: while one call is in flight the next joins gather,
// so under load each call carries many joins and Redis runs one script
// (one TIME, one round trip) for all of them. With linger, a call after one
// that carried several also gathers until it holds as many: under a spike
// that fills batches at the cost of a millisecond or two per join. Alone, a
// join goes at once.
func newJoinBatcher(st *store, live *liveSettings, max int, linger time.Duration) *coalesce.Batcher[JoinRequest, place] {
	return coalesce.New(min(max, maxJoinBatch), requestTimeout, func(ctx context.Context, reqs []JoinRequest) ([]place, error) {
		return st.joinRequests(ctx, reqs, live.Load())
	}).WithLinger(linger)
}

// maxJoinBatch bounds a batch: the script unpacks its places into one
// ZADD and one HSET, within Lua's stack.
const maxJoinBatch = 1000
