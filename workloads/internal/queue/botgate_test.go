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
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/pow"
)

// powConfig is a queue that asks joins for a proof of work of bits.
func powConfig(t testing.TB, bits int) config.Queue {
	cfg := testConfig(t, testenv.RedisURL(t))
	cfg.ProofOfWork = config.DefaultsOf[config.ProofOfWork]()
	cfg.PowDifficulty, cfg.PowKeys = bits, pow.GenerateKey()
	return cfg
}

// challenge fetches and solves a challenge for tok.
func challenge(t testing.TB, base, tok string) (pow.ChallengeView, string) {
	t.Helper()
	r := do(t, "GET", queueURL(base)+"/challenge", tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("challenge: %d %s", r.Status, r.Body)
	}
	var c pow.ChallengeView
	if err := json.Unmarshal(r.Body, &c); err != nil {
		t.Fatal(err)
	}
	nonce, _, err := pow.Solve(context.Background(), c.Challenge, c.Difficulty, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c, nonce
}

func powBody(challenge, nonce string) []byte {
	b, _ := json.Marshal(map[string]any{"pow": map[string]string{"challenge": challenge, "nonce": nonce}})
	return b
}

func errorField(t testing.TB, r reply, field string) any {
	t.Helper()
	var e map[string]map[string]any
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("not JSON: %s", r.Body)
	}
	return e["error"][field]
}

// TestJoinProofOfWork: a sale that asks for a proof of work refuses a join
// without one (403 pow_required) or with a bad one (403 pow_invalid),
// both saying where to fetch a challenge; a solved challenge joins, once.
func TestJoinProofOfWork(t *testing.T) {
	base := startService(t, powConfig(t, 10), nil)
	alice, bob := idToken(t, "alice"), idToken(t, "bob")

	for _, body := range [][]byte{nil, []byte("{}"), []byte(`{"pow":null}`), []byte(`{"pow":{"challenge":"","nonce":"1"}}`)} {
		r := do(t, "POST", queueURL(base), alice, body)
		if r.Status != http.StatusForbidden || r.errorCode(t) != "pow_required" {
			t.Fatalf("join with %q: %d %s, want 403 pow_required", body, r.Status, r.Body)
		}
		if u := errorField(t, r, "challengeUrl"); u != fmt.Sprintf("/events/%d/queue/challenge", testEvent) {
			t.Fatalf("challengeUrl %v", u)
		}
	}
	c, nonce := challenge(t, base, alice)
	if c.Difficulty != 10 || time.Until(c.ExpiresAt) <= 0 || time.Until(c.ExpiresAt) > 2*time.Minute {
		t.Fatalf("challenge %+v", c)
	}
	// The first counter that does not solve it.
	bad := "0"
	for i := 0; pow.LeadingZeroBits(c.Challenge, bad) >= 10; i++ {
		bad = strconv.Itoa(i)
	}
	for name, body := range map[string][]byte{
		"unsolved":       powBody(c.Challenge, bad),
		"tampered":       powBody(c.Challenge[:10]+strings.Repeat("A", 5)+c.Challenge[15:], nonce),
		"garbage":        powBody("garbage", nonce),
		"nonce too long": powBody(c.Challenge, strings.Repeat("1", 65)),
	} {
		r := do(t, "POST", queueURL(base), alice, body)
		if r.Status != http.StatusForbidden || r.errorCode(t) != "pow_invalid" {
			t.Fatalf("%s: %d %s, want 403 pow_invalid", name, r.Status, r.Body)
		}
	}
	// Bob cannot use alice's challenge: it is bound to her identity.
	if r := do(t, "POST", queueURL(base), bob, powBody(c.Challenge, nonce)); r.Status != http.StatusForbidden || r.errorCode(t) != "pow_invalid" {
		t.Fatalf("bob with alice's challenge: %d %s", r.Status, r.Body)
	}
	// Unknown fields are refused, not ignored.
	if r := do(t, "POST", queueURL(base), alice, []byte(`{"pow":{"challenge":"x","nonce":"1","extra":1}}`)); r.Status != http.StatusBadRequest {
		t.Fatalf("unknown field: %d %s", r.Status, r.Body)
	}
	r := do(t, "POST", queueURL(base), alice, powBody(c.Challenge, nonce))
	if r.Status != http.StatusCreated {
		t.Fatalf("solved: %d %s", r.Status, r.Body)
	}
	first := r.view(t).QueueID
	// The same solution again: the challenge is spent (or, where the
	// join script does not mark it, the same place: one per customer).
	r = do(t, "POST", queueURL(base), alice, powBody(c.Challenge, nonce))
	switch {
	case r.Status == http.StatusConflict && r.errorCode(t) == "challenge_used":
	case r.Status == http.StatusOK && r.view(t).QueueID == first:
	default:
		t.Fatalf("the solution again: %d %s", r.Status, r.Body)
	}
	// A new challenge gives the same place back.
	c2, nonce2 := challenge(t, base, alice)
	if c2.Challenge == c.Challenge {
		t.Fatal("the same challenge twice")
	}
	if r := do(t, "POST", queueURL(base), alice, powBody(c2.Challenge, nonce2)); r.Status != http.StatusOK || r.view(t).QueueID != first {
		t.Fatalf("join again: %d %s", r.Status, r.Body)
	}
	// The challenge endpoint needs an identity.
	if r := do(t, "GET", queueURL(base)+"/challenge", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("challenge without identity: %d", r.Status)
	}
}

// TestChallengeWithoutProofOfWork: a sale that asks for none says so, and
// joins as before.
func TestChallengeWithoutProofOfWork(t *testing.T) {
	base := startService(t, testConfig(t, testenv.RedisURL(t)), nil)
	tok := idToken(t, "alice")
	if r := do(t, "GET", queueURL(base)+"/challenge", tok, nil); r.Status != http.StatusNotFound || r.errorCode(t) != "pow_not_required" {
		t.Fatalf("challenge: %d %s", r.Status, r.Body)
	}
	if r := do(t, "POST", queueURL(base), tok, nil); r.Status != http.StatusCreated {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
}

// TestAdaptiveDifficulty: once a client network has joined past the
// threshold in the window, its challenges get harder by steps; another
// network's do not.
func TestAdaptiveDifficulty(t *testing.T) {
	cfg := powConfig(t, 4)
	cfg.RateLimits = config.RateLimits{RateLimitWindow: time.Minute}
	cfg.PowAdaptiveThreshold, cfg.PowAdaptiveStep, cfg.PowMaxDifficulty = 3, 2, 9
	base := startService(t, cfg, nil)
	busy, quiet := fromAddr("127.0.9.1"), fromAddr("127.0.10.1")
	defer busy.CloseIdleConnections()
	defer quiet.CloseIdleConnections()
	want := []int{4, 4, 4, 6, 6, 6, 8, 8, 8, 8, 8, 8, 9}
	for i, d := range want {
		tok := idToken(t, "n"+strconv.Itoa(i))
		c := rawChallenge(t, busy, base, tok)
		if c.Difficulty != d {
			t.Fatalf("after %d joins of the network: difficulty %d, want %d", i, c.Difficulty, d)
		}
		nonce, _, _ := pow.Solve(context.Background(), c.Challenge, c.Difficulty, 0)
		if st, body := rawDo(t, busy, "POST", queueURL(base), tok, powBody(c.Challenge, nonce)); st != http.StatusCreated {
			t.Fatalf("join %d: %d %s", i, st, body)
		}
	}
	if c := rawChallenge(t, quiet, base, idToken(t, "q")); c.Difficulty != 4 {
		t.Fatalf("a quiet network's difficulty %d, want 4", c.Difficulty)
	}
}

// TestJoinRateLimits: a join past the identity's limit, or past the
// network's, is 429 with Retry-After and a JSON body naming the limit;
// another network is not refused by the first one's counter.
func TestJoinRateLimits(t *testing.T) {
	cfg := testConfig(t, testenv.RedisURL(t))
	cfg.RateLimits = config.RateLimits{RateLimitWindow: time.Minute, JoinPerIdentity: 3, JoinPerNetwork: 5}
	base := startService(t, cfg, nil)
	a := fromAddr("127.0.11.1")
	defer a.CloseIdleConnections()
	alice := idToken(t, "alice")
	for i := 0; i < 3; i++ {
		if st, body := rawDo(t, a, "POST", queueURL(base), alice, nil); st != http.StatusCreated && st != http.StatusOK {
			t.Fatalf("join %d: %d %s", i+1, st, body)
		}
	}
	st, body, hdr := rawDoHeader(t, a, "POST", queueURL(base), alice, nil)
	if st != http.StatusTooManyRequests || !strings.Contains(body, `"rate_limited"`) || !strings.Contains(body, `"scope":"identity"`) {
		t.Fatalf("4th join of alice: %d %s", st, body)
	}
	if ra, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", hdr.Get("Retry-After"))
	}
	// The network has room for two more (alice's refused join cost none).
	for _, c := range []string{"bob", "carol"} {
		if st, body := rawDo(t, a, "POST", queueURL(base), idToken(t, c), nil); st != http.StatusCreated {
			t.Fatalf("%s: %d %s", c, st, body)
		}
	}
	st, body, _ = rawDoHeader(t, a, "POST", queueURL(base), idToken(t, "dave"), nil)
	if st != http.StatusTooManyRequests || !strings.Contains(body, `"scope":"network"`) {
		t.Fatalf("6th join of the network: %d %s", st, body)
	}
	b := fromAddr("127.0.12.1")
	defer b.CloseIdleConnections()
	if st, body := rawDo(t, b, "POST", queueURL(base), idToken(t, "dave"), nil); st != http.StatusCreated {
		t.Fatalf("dave from another network: %d %s", st, body)
	}
	// Through the validated client too: the 429 is in the API document.
	if r := do(t, "POST", queueURL(base), alice, nil); r.Status != http.StatusTooManyRequests || r.errorCode(t) != "rate_limited" {
		t.Fatalf("alice again: %d %s", r.Status, r.Body)
	}
}

// TestDefaultJoinLimit: with the default limits, the 31st join of one
// identity within the minute is refused, and people on one network are not.
func TestDefaultJoinLimit(t *testing.T) {
	cfg := testConfig(t, testenv.RedisURL(t))
	cfg.RateLimits = config.DefaultsOf[config.RateLimits]()
	base := startService(t, cfg, nil)
	alice := idToken(t, "alice")
	for i := 0; i < cfg.JoinPerIdentity; i++ {
		if r := do(t, "POST", queueURL(base), alice, nil); r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("join %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	if r := do(t, "POST", queueURL(base), alice, nil); r.Status != http.StatusTooManyRequests {
		t.Fatalf("join %d: %d, want 429", cfg.JoinPerIdentity+1, r.Status)
	}
	for i := 0; i < 200; i++ {
		if r := do(t, "POST", queueURL(base), idToken(t, "p"+strconv.Itoa(i)), nil); r.Status != http.StatusCreated {
			t.Fatalf("person %d of the network: %d %s", i, r.Status, r.Body)
		}
	}
}

// TestPollRateLimit: the poll past the identity's limit is 429 with
// Retry-After, through the real handler.
func TestPollRateLimit(t *testing.T) {
	cfg := testConfig(t, testenv.RedisURL(t))
	cfg.RateLimits = config.RateLimits{RateLimitWindow: time.Minute, PollPerIdentity: 4}
	base := startService(t, cfg, nil)
	tok := idToken(t, "alice")
	id := do(t, "POST", queueURL(base), tok, nil).view(t).QueueID
	for i := 0; i < 4; i++ {
		if r := do(t, "GET", queueURL(base)+"/"+id, tok, nil); r.Status != http.StatusOK {
			t.Fatalf("poll %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := do(t, "GET", queueURL(base)+"/"+id, tok, nil)
	if r.Status != http.StatusTooManyRequests || r.errorCode(t) != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("5th poll: %d %s", r.Status, r.Body)
	}
	// Another customer polls on.
	bob := idToken(t, "bob")
	bid := do(t, "POST", queueURL(base), bob, nil).view(t).QueueID
	if r := do(t, "GET", queueURL(base)+"/"+bid, bob, nil); r.Status != http.StatusOK {
		t.Fatalf("bob's poll: %d %s", r.Status, r.Body)
	}
}

// fromAddr is an HTTP client whose connections come from src: on loopback
// each 127.a.b.0/24 is a client network of its own.
func fromAddr(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

func rawDoHeader(t testing.TB, c *http.Client, method, url, tok string, body []byte) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func rawDo(t testing.TB, c *http.Client, method, url, tok string, body []byte) (int, string) {
	t.Helper()
	st, b, _ := rawDoHeader(t, c, method, url, tok, body)
	return st, b
}

func rawChallenge(t testing.TB, c *http.Client, base, tok string) pow.ChallengeView {
	t.Helper()
	st, body := rawDo(t, c, "GET", queueURL(base)+"/challenge", tok, nil)
	if st != http.StatusOK {
		t.Fatalf("challenge: %d %s", st, body)
	}
	var v pow.ChallengeView
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
