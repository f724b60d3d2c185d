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

package pow

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

// Solution is the proof of work a join carries: {"challenge", "nonce"}.
type Solution struct {
	Challenge string `json:"challenge"`
	Nonce     string `json:"nonce"`
}

// ChallengeView is the JSON of GET /events/{eventId}/queue/challenge.
type ChallengeView struct {
	Challenge  string    `json:"challenge"`
	Difficulty int       `json:"difficulty"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// Rates tells the gate how many joins a client network and a subject
// prefix made in the rate limiter's current window (one Redis call); nil
// or an error leaves the difficulty at its base.
type Rates func(ctx context.Context, network, prefix string) (int64, int64, error)

// Gate is the queue's proof-of-work gate for one event.
type Gate struct {
	cfg     config.ProofOfWork
	keys    *Keys
	eventID int64
	rates   Rates
}

// NewGate returns the gate of cfg, or nil when cfg turns it off
// (difficulty 0). A gate needs keys. cfg's rules are config.Queue's
// (Validate), which the queue checks first.
func NewGate(cfg config.ProofOfWork, eventID int64, rates Rates) (*Gate, error) {
	if cfg.PowDifficulty <= 0 {
		return nil, nil
	}
	keys, err := ParseKeys(cfg.PowKeys)
	if err != nil {
		return nil, err
	}
	if cfg.PowAdaptiveThreshold <= 0 {
		rates = nil
	}
	return &Gate{cfg: cfg, keys: keys, eventID: eventID, rates: rates}, nil
}

// ChallengePath is where a client fetches a challenge for event.
func ChallengePath(eventPath string) string { return eventPath + "/queue/challenge" }

// Prefix is subject's prefix whose join rate raises the difficulty, ""
// when prefixes are not counted.
func (g *Gate) Prefix(subject string) string {
	if g == nil || g.cfg.PowSubjectPrefix <= 0 || g.cfg.PowAdaptiveThreshold <= 0 {
		return ""
	}
	return prefixOf(subject, g.cfg.PowSubjectPrefix)
}

// prefixOf is the first n runes of s.
func prefixOf(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Difficulty is the difficulty handed to a client of network with subject
// prefix: the base, raised by steps with their join rates.
func (g *Gate) Difficulty(ctx context.Context, network, prefix string) int {
	d := g.cfg.PowDifficulty
	if g.rates == nil {
		return d
	}
	n, p, err := g.rates(ctx, network, prefix)
	if err != nil {
		return d
	}
	maxD := max(g.cfg.PowMaxDifficulty, d)
	t := int64(g.cfg.PowAdaptiveThreshold)
	return max(Adaptive(d, g.cfg.PowAdaptiveStep, maxD, t, n), Adaptive(d, g.cfg.PowAdaptiveStep, maxD, t, p))
}

// Issue hands subject, on network, a challenge.
func (g *Gate) Issue(ctx context.Context, subject, network string) (ChallengeView, error) {
	c, err := g.keys.Issue(g.eventID, subject, g.Difficulty(ctx, network, g.Prefix(subject)), time.Now(), g.cfg.PowTTL)
	if err != nil {
		return ChallengeView{}, err
	}
	return ChallengeView{Challenge: c.Token, Difficulty: c.Difficulty, ExpiresAt: c.ExpiresAt.UTC()}, nil
}

// Check verifies the proof of work of subject's join. A nil gate needs
// none. It returns the spent challenge (its ID and expiry make it
// single-use in the join script) or a 403: pow_required without a
// solution, pow_invalid with one that fails; both say where to fetch a
// challenge.
func (g *Gate) Check(sol *Solution, subject, challengeURL string) (Challenge, error) {
	if g == nil {
		return Challenge{}, nil
	}
	if sol == nil || sol.Challenge == "" {
		return Challenge{}, &httpapi.Error{Status: http.StatusForbidden, Code: "pow_required",
			Message: "this sale asks for a proof of work: fetch a challenge and send its solution with the join",
			Extra:   map[string]any{"challengeUrl": challengeURL}}
	}
	c, err := g.keys.Verify(sol.Challenge, sol.Nonce, g.eventID, subject, time.Now())
	if err != nil {
		return Challenge{}, &httpapi.Error{Status: http.StatusForbidden, Code: "pow_invalid",
			Message: reason(err) + "; fetch a new challenge",
			Extra:   map[string]any{"challengeUrl": challengeURL}, Err: err}
	}
	return c, nil
}

func reason(err error) string {
	switch {
	case errors.Is(err, ErrExpired):
		return "the challenge expired"
	case errors.Is(err, ErrSignature):
		return "the challenge was not issued to this identity for this event"
	case errors.Is(err, ErrBadNonce):
		return "the nonce must be 1 to 64 printable ASCII characters"
	case errors.Is(err, ErrInsufficient):
		return "the nonce does not solve the challenge"
	}
	return "the challenge is malformed"
}
