package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// joinMany gives each of customers a place (or returns theirs) in one
// script call, in order.
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
		out[i] = place{Created: toInt(r[0]) == 1, State: toString(r[1]), Score: toInt(r[2]), Gen: gen}
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

// joinBatcher coalesces the joins that reach a pod at the same moment into
// one script call: while one call is in flight the next joins gather, so
// under load each call carries many joins and Redis runs one script
// (one TIME, one round trip) for all of them. Once a call carried several,
// the next one also gathers for up to linger, until it holds as many: under
// a spike that fills batches at the cost of a millisecond or two per join.
// Alone, a join goes at once.
type joinBatcher struct {
	st     *store
	live   *liveSettings
	max    int
	linger time.Duration
	reqs   chan *joinReq
}

type joinReq struct {
	customer string
	done     chan joinRes // buffered: the batcher never blocks on a gone caller
}

type joinRes struct {
	p   place
	err error
}

// maxJoinBatch bounds a batch: the script unpacks its places into one
// ZADD and one HSET, within Lua's stack.
const maxJoinBatch = 1000

func newJoinBatcher(st *store, live *liveSettings, max int, linger time.Duration) *joinBatcher {
	max = min(max, maxJoinBatch)
	return &joinBatcher{st: st, live: live, max: max, linger: linger, reqs: make(chan *joinReq, 4*max)}
}

// join queues customer's join and waits for its batch.
func (b *joinBatcher) join(ctx context.Context, customer string) (place, error) {
	r := &joinReq{customer: customer, done: make(chan joinRes, 1)}
	select {
	case b.reqs <- r:
	case <-ctx.Done():
		return place{}, ctx.Err()
	}
	select {
	case res := <-r.done:
		return res.p, res.err
	case <-ctx.Done():
		return place{}, ctx.Err()
	}
}

// gather adds the joins already waiting to batch, then, while the batch
// holds fewer than enough, goes on gathering for at most b.linger.
func (b *joinBatcher) gather(batch *[]*joinReq, enough int) {
waiting:
	for len(*batch) < b.max {
		select {
		case r := <-b.reqs:
			*batch = append(*batch, r)
		default:
			break waiting
		}
	}
	enough = min(enough, b.max)
	if len(*batch) >= enough || b.linger <= 0 {
		return
	}
	deadline := time.NewTimer(b.linger)
	defer deadline.Stop()
	for len(*batch) < enough {
		select {
		case r := <-b.reqs:
			*batch = append(*batch, r)
		case <-deadline.C:
			return
		}
	}
}

// run sends batches until ctx is cancelled.
func (b *joinBatcher) run(ctx context.Context) {
	batch := make([]*joinReq, 0, b.max)
	customers := make([]string, 0, b.max)
	last := 0 // joins in the last call
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-b.reqs:
			batch = append(batch[:0], r)
		}
		// Linger only while joins arrive together (the last call carried
		// several), and only until as many as then are waiting: more
		// arrive with the next call. Waiting longer filled batches, but
		// held every join back by the whole linger once clients waited
		// on their answers to send more.
		enough := 0
		if last > 1 {
			enough = last
		}
		b.gather(&batch, enough)
		last = len(batch)
		customers = customers[:0]
		for _, r := range batch {
			customers = append(customers, r.customer)
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		places, err := b.st.joinMany(cctx, customers, b.live.Load())
		cancel()
		for i, r := range batch {
			if err != nil {
				r.done <- joinRes{err: err}
			} else {
				r.done <- joinRes{p: places[i]}
			}
		}
	}
}
