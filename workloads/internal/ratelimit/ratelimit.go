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

// Package ratelimit counts requests per identity and per client network in
// Redis and refuses those over a limit with 429 and Retry-After. A request
// is checked against all its counters in one script: it passes only if
// every counter is under its limit, and then all of them count it, so a
// refused request costs no quota. The counters of requests that reach a
// pod at the same moment go to Redis as one script call (while one call is
// in flight the next requests gather), so under load the limiter costs one
// round trip per batch, not per request.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/internal/coalesce"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// Rule is a fixed-window limit: at most Limit requests per Window, the
// window starting at a counter's first request. Limit 0 turns it off.
type Rule struct {
	Limit  int
	Window time.Duration
}

// Check is one counter a request is counted against.
type Check struct {
	Key   string // the counter's Redis key (Limiter.Key builds it)
	Scope string // what it counts, for the refusal: "identity" or "network"
	Rule  Rule
}

// Decision is a request's outcome.
type Decision struct {
	Allowed    bool
	Scope      string        // the refusing counter's scope
	RetryAfter time.Duration // until the refusing counter's window ends
}

// script counts a batch of requests in order. ARGV: the number of
// requests, then per request its number of counters and per counter its
// limit and window in ms; KEYS: every counter in that order. A request's
// counters are incremented until one goes over its limit; then the
// increments are taken back, so a refused request costs no quota (a
// passing one, the common case, costs an INCR per counter and a PEXPIRE
// per new one). It answers two values per request: -1 and 0 when it
// passed, else the index of the refusing counter within the request and
// its window's remaining ms.
var script = redis.NewScript(`
local n = tonumber(ARGV[1])
local a, k = 2, 1
local out = {}
for i = 1, n do
  local m = tonumber(ARGV[a]); a = a + 1
  local refused, wait = -1, 0
  for j = 0, m - 1 do
    local key, window = KEYS[k + j], ARGV[a + 2*j + 1]
    local c = redis.call('INCR', key)
    if c == 1 then
      redis.call('PEXPIRE', key, window)
    end
    if c > tonumber(ARGV[a + 2*j]) then
      refused = j
      for x = 0, j do
        redis.call('DECR', KEYS[k + x])
      end
      wait = redis.call('PTTL', key)
      if wait < 0 then
        -- a counter without expiry (not written by this script): give it one
        wait = tonumber(window)
        redis.call('PEXPIRE', key, wait)
      end
      break
    end
  end
  out[#out + 1] = refused
  out[#out + 1] = wait
  a = a + 2*m
  k = k + m
end
return out`)

// Client is what the limiter needs of a Redis client (a *redis.Client or a
// redis.UniversalClient).
type Client interface {
	redis.Scripter
	MGet(ctx context.Context, keys ...string) *redis.SliceCmd
}

// maxBatch bounds the requests of one call.
const maxBatch = 256

// Limiter checks requests against counters in one Redis.
type Limiter struct {
	rdb    Client
	prefix string
	calls  *coalesce.Batcher[[]Check, Decision]
}

// New returns a limiter whose counters are named prefix + op + ":" + scope +
// ":" + value. The prefix carries the event's hash tag (keyspace.Prefix),
// so every counter of a sale is in one Cluster slot and a batch is one
// script call. Run must be running for Allow to answer.
func New(rdb Client, prefix string) *Limiter {
	l := &Limiter{rdb: rdb, prefix: prefix + "rl:"}
	l.calls = coalesce.New(maxBatch, 2*time.Second, l.run)
	return l
}

// Key names the counter of op (join, poll, hold) for scope's value.
func (l *Limiter) Key(op, scope, value string) string {
	return l.prefix + op + ":" + scope + ":" + value
}

// Allow checks a request against checks (those with a zero limit are
// skipped) and counts it when it passes.
func (l *Limiter) Allow(ctx context.Context, checks ...Check) (Decision, error) {
	live := make([]Check, 0, len(checks))
	for _, c := range checks {
		if c.Rule.Limit > 0 && c.Rule.Window > 0 {
			live = append(live, c)
		}
	}
	if len(live) == 0 {
		return Decision{Allowed: true}, nil
	}
	return l.calls.Do(ctx, live)
}

// Run sends the batches until ctx ends.
func (l *Limiter) Run(ctx context.Context) { l.calls.Run(ctx) }

// ErrUnavailable wraps a failed script call.
var ErrUnavailable = errors.New("ratelimit: redis unavailable")

// run checks a batch of requests, each against its checks, in one call.
func (l *Limiter) run(ctx context.Context, batch [][]Check) ([]Decision, error) {
	n := 0
	for _, checks := range batch {
		n += len(checks)
	}
	keys := make([]string, 0, n)
	args := make([]any, 0, 1+len(batch)+2*n)
	args = append(args, len(batch))
	for _, checks := range batch {
		args = append(args, len(checks))
		for _, c := range checks {
			keys = append(keys, c.Key)
			args = append(args, c.Rule.Limit, c.Rule.Window.Milliseconds())
		}
	}
	res, err := script.Run(ctx, l.rdb, keys, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if len(res) != 2*len(batch) {
		return nil, fmt.Errorf("ratelimit: %d values for %d requests", len(res), len(batch))
	}
	out := make([]Decision, len(batch))
	for i, checks := range batch {
		j, wait := res[2*i], res[2*i+1]
		if j < 0 {
			out[i] = Decision{Allowed: true}
			continue
		}
		out[i] = Decision{Scope: checks[j].Scope, RetryAfter: time.Duration(wait) * time.Millisecond}
	}
	return out, nil
}

// Refusal is the 429 of a refused decision: Retry-After in whole seconds
// (at least one), and the scope in the JSON body.
func Refusal(d Decision) *httpapi.Error {
	return &httpapi.Error{Status: http.StatusTooManyRequests, Code: "rate_limited",
		Message:    "too many requests from this " + d.Scope + "; retry after " + strconv.Itoa(retrySeconds(d.RetryAfter)) + " s",
		RetryAfter: time.Duration(retrySeconds(d.RetryAfter)) * time.Second,
		Extra:      map[string]any{"scope": d.Scope}}
}

func retrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
