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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/keyspace"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// limiter returns a running limiter on a fresh Redis database.
func limiter(t testing.TB) (*Limiter, *redis.Client) {
	t.Helper()
	rdb := testenv.Redis(t)
	l := New(rdb, keyspace.Prefix(42))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l, rdb
}

func TestLimitAndRetryAfter(t *testing.T) {
	l, rdb := limiter(t)
	ctx := context.Background()
	rule := Rule{Limit: 3, Window: 5 * time.Second}
	c := Check{Key: l.Key("join", "identity", "alice"), Scope: "identity", Rule: rule}
	if c.Key != "tf:{42}:rl:join:identity:alice" {
		t.Fatalf("key %q", c.Key)
	}
	for i := 0; i < 3; i++ {
		d, err := l.Allow(ctx, c)
		if err != nil || !d.Allowed {
			t.Fatalf("request %d: %+v %v", i+1, d, err)
		}
	}
	d, err := l.Allow(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Scope != "identity" || d.RetryAfter <= 4*time.Second || d.RetryAfter > 5*time.Second {
		t.Fatalf("4th request: %+v, want refused with about 5s to wait", d)
	}
	// A refused request costs no quota.
	if n, _ := rdb.Get(ctx, c.Key).Int(); n != 3 {
		t.Fatalf("counter %d after a refusal, want 3", n)
	}
	ttl, _ := rdb.PTTL(ctx, c.Key).Result()
	if ttl <= 0 || ttl > 5*time.Second {
		t.Fatalf("counter's TTL %s", ttl)
	}
	// Another identity has its own counter.
	if d, _ := l.Allow(ctx, Check{Key: l.Key("join", "identity", "bob"), Scope: "identity", Rule: rule}); !d.Allowed {
		t.Fatal("bob refused by alice's counter")
	}
}

func TestWindowEnds(t *testing.T) {
	l, _ := limiter(t)
	ctx := context.Background()
	c := Check{Key: l.Key("poll", "identity", "alice"), Scope: "identity", Rule: Rule{Limit: 2, Window: 300 * time.Millisecond}}
	for i := 0; i < 2; i++ {
		if d, _ := l.Allow(ctx, c); !d.Allowed {
			t.Fatal("refused under the limit")
		}
	}
	d, _ := l.Allow(ctx, c)
	if d.Allowed {
		t.Fatal("3rd allowed in the window")
	}
	time.Sleep(d.RetryAfter + 20*time.Millisecond)
	for i := 0; i < 2; i++ {
		if d, _ := l.Allow(ctx, c); !d.Allowed {
			t.Fatalf("request %d of the next window refused: %+v", i+1, d)
		}
	}
	if d, _ := l.Allow(ctx, c); d.Allowed {
		t.Fatal("the next window has the same limit")
	}
}

// TestAllCountersOrNone: a request passes only when every counter has
// room, and a refusal by one counter leaves the others untouched.
func TestAllCountersOrNone(t *testing.T) {
	l, rdb := limiter(t)
	ctx := context.Background()
	netCheck := Check{Key: l.Key("join", "network", "10.0.0.0/24"), Scope: "network", Rule: Rule{Limit: 2, Window: time.Minute}}
	id := func(s string) Check {
		return Check{Key: l.Key("join", "identity", s), Scope: "identity", Rule: Rule{Limit: 5, Window: time.Minute}}
	}
	for _, s := range []string{"a", "b"} {
		if d, _ := l.Allow(ctx, id(s), netCheck); !d.Allowed {
			t.Fatalf("%s refused", s)
		}
	}
	d, _ := l.Allow(ctx, id("c"), netCheck)
	if d.Allowed || d.Scope != "network" {
		t.Fatalf("third of the network: %+v, want refused by the network", d)
	}
	if n, _ := rdb.Get(ctx, id("c").Key).Int(); n != 0 {
		t.Fatalf("the refused request counted %d against its identity", n)
	}
	if n, _ := rdb.Get(ctx, netCheck.Key).Int(); n != 2 {
		t.Fatalf("the network's counter is %d after a refusal, want 2", n)
	}
	// A zero limit is off.
	if d, _ := l.Allow(ctx, Check{Key: l.Key("join", "network", "x"), Rule: Rule{}}); !d.Allowed {
		t.Fatal("a zero rule refused")
	}
}

// TestConcurrentNeverExceeds races many goroutines, each over its own
// limiter (as pods are) and through the batcher, at one limit: exactly the
// limit pass.
func TestConcurrentNeverExceeds(t *testing.T) {
	url := testenv.RedisURL(t)
	opt, _ := redis.ParseURL(url)
	const pods, perPod, limit = 4, 300, 500
	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for p := 0; p < pods; p++ {
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		l := New(rdb, keyspace.Prefix(42))
		go l.Run(ctx)
		for g := 0; g < perPod; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := Check{Key: l.Key("join", "network", "192.0.2.0/24"), Scope: "network", Rule: Rule{Limit: limit, Window: time.Minute}}
				for i := 0; i < 2; i++ {
					d, err := l.Allow(ctx, c)
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						allowed.Add(1)
					} else {
						refused.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	if allowed.Load() != limit || refused.Load() != pods*perPod*2-limit {
		t.Fatalf("%d allowed, %d refused; want exactly %d allowed of %d", allowed.Load(), refused.Load(), limit, pods*perPod*2)
	}
}

func TestNetwork(t *testing.T) {
	for in, want := range map[string]string{
		"198.51.100.7":                  "198.51.100.0/24",
		"198.51.100.255":                "198.51.100.0/24",
		"198.51.101.1":                  "198.51.101.0/24",
		"127.20.3.1":                    "127.20.3.0/24",
		"::ffff:198.51.100.7":           "198.51.100.0/24",
		"2001:db8:1:2:3:4:5:6":          "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff:ffff:1": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":               "2001:db8:1:3::/64",
		"fe80::1%eth0":                  "fe80::/64",
	} {
		if got := Network(netip.MustParseAddr(in)); got != want {
			t.Errorf("Network(%s) = %q, want %q", in, got, want)
		}
	}
	if got := Network(netip.Addr{}); got != "" {
		t.Errorf("Network(invalid) = %q", got)
	}
}

func TestClientAddr(t *testing.T) {
	req := func(remote string, xff ...string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		for _, v := range xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		return r
	}
	for _, tc := range []struct {
		r      *http.Request
		header string
		want   string
	}{
		{req("203.0.113.9:5555"), "", "203.0.113.9"},
		{req("[2001:db8::1]:443"), "", "2001:db8::1"},
		// The header is ignored unless the deployment trusts it.
		{req("203.0.113.9:5555", "198.51.100.1"), "", "203.0.113.9"},
		{req("203.0.113.9:5555", "198.51.100.1"), "X-Forwarded-For", "198.51.100.1"},
		// The last entry is the trusted proxy's: what the client wrote before it is not.
		{req("203.0.113.9:5555", "1.2.3.4, 198.51.100.1"), "X-Forwarded-For", "198.51.100.1"},
		{req("203.0.113.9:5555", "1.2.3.4", "198.51.100.2"), "X-Forwarded-For", "198.51.100.2"},
		{req("203.0.113.9:5555", "garbage"), "X-Forwarded-For", "203.0.113.9"},
	} {
		if got := ClientAddr(tc.r, tc.header); got.String() != tc.want {
			t.Errorf("ClientAddr(%s, %v) = %s, want %s", tc.r.RemoteAddr, tc.r.Header, got, tc.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	rec := httptest.NewRecorder()
	httpapi.WriteError(rec, httptest.NewRequest("GET", "/", nil), Refusal(Decision{Scope: "network", RetryAfter: 1500 * time.Millisecond}))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("%d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	var body struct {
		Error struct{ Code, Message, Scope string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != "rate_limited" || body.Error.Scope != "network" {
		t.Fatalf("body %s", rec.Body)
	}
	// Under a second still says one.
	if got := Refusal(Decision{RetryAfter: time.Millisecond}).RetryAfter; got != time.Second {
		t.Fatalf("Retry-After of 1ms = %s", got)
	}
}

// TestBatchesCoalesce: requests that arrive together share script calls.
func TestBatchesCoalesce(t *testing.T) {
	l, rdb := limiter(t)
	ctx := context.Background()
	before := commandCalls(t, rdb)
	var wg sync.WaitGroup
	for i := 0; i < 400; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Allow(ctx, Check{Key: l.Key("poll", "identity", strconv.Itoa(i)), Scope: "identity", Rule: Rule{Limit: 1, Window: time.Minute}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	calls := commandCalls(t, rdb) - before
	if calls >= 400 {
		t.Fatalf("%d script calls for 400 concurrent requests: not batched", calls)
	}
	t.Logf("400 concurrent requests in %d script calls", calls)
}

func commandCalls(t testing.TB, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
		if i := strings.Index(info, name); i >= 0 {
			s := info[i+len(name):]
			j := 0
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			v, _ := strconv.ParseInt(s[:j], 10, 64)
			n += v
		}
	}
	return n
}

func TestRedisDown(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	l := New(rdb, keyspace.Prefix(42))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Run(ctx)
	_, err := l.Allow(ctx, Check{Key: "k", Rule: Rule{Limit: 1, Window: time.Second}})
	if err == nil {
		t.Fatal("no error with Redis down")
	}
}

// BenchmarkAllow is one request's check through the batcher, from many
// goroutines at once.
func BenchmarkAllow(b *testing.B) {
	l, _ := limiter(b)
	ctx := context.Background()
	var i atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := strconv.FormatInt(i.Add(1), 10)
			if _, err := l.Allow(ctx,
				Check{Key: l.Key("join", "identity", n), Scope: "identity", Rule: Rule{Limit: 30, Window: time.Minute}},
				Check{Key: l.Key("join", "network", "10.0.0.0/24"), Scope: "network", Rule: Rule{Limit: 1 << 30, Window: time.Minute}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
