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

package ratelimit

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// The operations limited, as they name their counters.
const (
	Join = "join"
	Poll = "poll"
	Hold = "hold"
)

// Scopes of the counters.
const (
	ScopeIdentity = "identity"
	ScopeNetwork  = "network"
	// ScopePrefix counts joins per subject prefix for the proof of work's
	// difficulty; it never refuses.
	ScopePrefix = "prefix"
)

// Policy applies a service's configured limits to its requests.
type Policy struct {
	L   *Limiter
	Cfg config.RateLimits
	// CountJoins counts every join of a network even with no limit on
	// them: the proof of work's adaptive difficulty reads the counts.
	CountJoins bool
}

func (p *Policy) rules(op string) (identity, network Rule) {
	w := p.Cfg.RateLimitWindow
	switch op {
	case Join:
		return Rule{p.Cfg.JoinPerIdentity, w}, Rule{p.Cfg.JoinPerNetwork, w}
	case Poll:
		return Rule{p.Cfg.PollPerIdentity, w}, Rule{p.Cfg.PollPerNetwork, w}
	case Hold:
		return Rule{p.Cfg.HoldPerIdentity, w}, Rule{p.Cfg.HoldPerNetwork, w}
	}
	return Rule{}, Rule{}
}

// Check counts r, of subject, against op's limits for its identity and its
// client network (and, when prefix is not "", counts the join of that
// subject prefix). It returns a 429 *httpapi.Error when a limit refuses,
// and a 503 when Redis cannot be asked.
func (p *Policy) Check(ctx context.Context, op, subject, prefix string, r *http.Request) error {
	if p == nil {
		return nil
	}
	idRule, netRule := p.rules(op)
	checks := make([]Check, 0, 3)
	checks = append(checks, Check{Key: p.L.Key(op, ScopeIdentity, subject), Scope: ScopeIdentity, Rule: idRule})
	if op == Join && p.CountJoins && netRule.Limit <= 0 {
		netRule.Limit = math.MaxInt32
	}
	if n := Network(ClientAddr(r, p.Cfg.ClientAddrHeader)); n != "" {
		checks = append(checks, Check{Key: p.L.Key(op, ScopeNetwork, n), Scope: ScopeNetwork, Rule: netRule})
	} else if netRule.Limit > 0 {
		// No address (not TCP): count under one unknown network.
		checks = append(checks, Check{Key: p.L.Key(op, ScopeNetwork, "unknown"), Scope: ScopeNetwork, Rule: netRule})
	}
	if prefix != "" && p.Cfg.RateLimitWindow > 0 {
		checks = append(checks, Check{Key: p.L.Key(op, ScopePrefix, prefix), Scope: ScopePrefix,
			Rule: Rule{Limit: math.MaxInt32, Window: p.Cfg.RateLimitWindow}})
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d, err := p.L.Allow(ctx, checks...)
	if err != nil {
		return httpapi.Unavailable("the rate limiter", err)
	}
	if !d.Allowed {
		return Refusal(d)
	}
	return nil
}

// JoinRates reads how many joins network and prefix made in their current
// windows (one MGET), for the proof of work's difficulty.
func (p *Policy) JoinRates(ctx context.Context, network, prefix string) (int64, int64, error) {
	keys := []string{p.L.Key(Join, ScopeNetwork, network), p.L.Key(Join, ScopePrefix, prefix)}
	vals, err := p.L.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return 0, 0, err
	}
	n := [2]int64{}
	for i, v := range vals {
		if s, ok := v.(string); ok {
			n[i], _ = strconv.ParseInt(s, 10, 64)
		}
	}
	return n[0], n[1], nil
}
