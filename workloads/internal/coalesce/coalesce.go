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

// Package coalesce sends the requests that arrive together as one call:
// while a call is in flight the next requests gather, and the first of
// them starts the next call as soon as it returns. An idle caller waits
// for nothing but its own call; under load the cost is one round trip per
// batch, not per request. With a linger, a call after one that carried
// several requests also gathers for up to the linger, until it holds as
// many: under a spike that fills batches for a millisecond or two of
// waiting. It is the one batcher of the queue's joins, the zone's session
// checks and the rate limiter.
package coalesce

import (
	"context"
	"fmt"
	"time"
)

// Batcher gathers requests of type T and answers each with an R.
type Batcher[T, R any] struct {
	call    func(context.Context, []T) ([]R, error)
	max     int
	timeout time.Duration
	linger  time.Duration
	reqs    chan *pending[T, R]
}

type pending[T, R any] struct {
	req  T
	done chan result[R] // buffered: the batcher never blocks on a gone caller
}

type result[R any] struct {
	r   R
	err error
}

// New returns a batcher that calls call with at most max requests at a
// time, each call bounded by timeout. call returns one answer per
// request, in order, or an error that answers them all. Run must be
// running for Do to answer.
func New[T, R any](max int, timeout time.Duration, call func(context.Context, []T) ([]R, error)) *Batcher[T, R] {
	return &Batcher[T, R]{call: call, max: max, timeout: timeout, reqs: make(chan *pending[T, R], 4*max)}
}

// WithLinger sets how long a call may wait for more requests while it
// holds fewer than the last call carried (0, the default: never). Call it
// before Run.
func (b *Batcher[T, R]) WithLinger(d time.Duration) *Batcher[T, R] {
	b.linger = d
	return b
}

// Do queues req for the next call and waits for its answer.
func (b *Batcher[T, R]) Do(ctx context.Context, req T) (R, error) {
	var zero R
	p := &pending[T, R]{req: req, done: make(chan result[R], 1)}
	select {
	case b.reqs <- p:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case r := <-p.done:
		return r.r, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Run sends the batches until ctx ends. Calls are not cancelled by the
// callers' contexts: a caller that gives up leaves its answer unread.
func (b *Batcher[T, R]) Run(ctx context.Context) {
	batch := make([]*pending[T, R], 0, b.max)
	reqs := make([]T, 0, b.max)
	last := 0 // requests in the last call
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-b.reqs:
			batch = append(batch[:0], p)
		}
		// Linger only while requests arrive together (the last call
		// carried several), and only until as many as then are waiting:
		// more arrive with the next call. Waiting longer filled batches,
		// but held every request back by the whole linger once clients
		// waited on their answers to send more.
		enough := 0
		if last > 1 {
			enough = last
		}
		batch = b.gather(batch, enough)
		last = len(batch)
		reqs = reqs[:0]
		for _, p := range batch {
			reqs = append(reqs, p.req)
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.timeout)
		rs, err := b.call(cctx, reqs)
		cancel()
		if err == nil && len(rs) != len(batch) {
			err = fmt.Errorf("coalesce: %d answers for %d requests", len(rs), len(batch))
		}
		for i, p := range batch {
			if err != nil {
				p.done <- result[R]{err: err}
			} else {
				p.done <- result[R]{r: rs[i]}
			}
		}
		clear(reqs) // drop the references until the next batch
	}
}

// gather adds the requests already waiting to batch, then, while it holds
// fewer than enough, goes on gathering for at most the linger.
func (b *Batcher[T, R]) gather(batch []*pending[T, R], enough int) []*pending[T, R] {
waiting:
	for len(batch) < b.max {
		select {
		case p := <-b.reqs:
			batch = append(batch, p)
		default:
			break waiting
		}
	}
	enough = min(enough, b.max)
	if len(batch) >= enough || b.linger <= 0 {
		return batch
	}
	deadline := time.NewTimer(b.linger)
	defer deadline.Stop()
	for len(batch) < enough {
		select {
		case p := <-b.reqs:
			batch = append(batch, p)
		case <-deadline.C:
			return batch
		}
	}
	return batch
}
