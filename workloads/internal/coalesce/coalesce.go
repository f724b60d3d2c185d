// Package coalesce sends the requests that arrive together as one call:
// while a call is in flight the next requests gather, and the first of
// them starts the next call as soon as it returns. An idle caller waits
// for nothing but its own call; under load the cost is one round trip per
// batch, not per request.
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
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-b.reqs:
			batch = append(batch[:0], p)
		}
	gather:
		for len(batch) < b.max {
			select {
			case p := <-b.reqs:
				batch = append(batch, p)
			default:
				break gather
			}
		}
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
