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
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/client-go/rest"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/accesstoken"
	"github.com/ticketfair/ticketfair/workloads/internal/identity"
	"github.com/ticketfair/ticketfair/workloads/internal/openapitest"
	"github.com/ticketfair/ticketfair/workloads/openapi"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

func TestMain(m *testing.M) { testenv.Main(m, queueAPI.AfterTests) }

// queueAPI checks every exchange of the tests against the served document.
var queueAPI = openapitest.MustLoad(openapi.Queue)

const (
	testEvent  = 42
	testSecret = "test-identity-secret"
	testIss    = "idp"
	testAud    = "ticketfair"
)

var testKeys = func() string {
	k, err := accesstoken.GenerateKey("k1")
	if err != nil {
		panic(err)
	}
	return k
}()

// testConfig is a queue configuration for tests: no election, no kube.
func testConfig(t testing.TB, redisURL string) config.Queue {
	t.Helper()
	var cfg config.Queue
	if err := config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.ShutdownGrace = 2 * time.Second
	cfg.EventID = testEvent
	cfg.RedisURL = redisURL
	cfg.IdentityHMACSecret, cfg.IdentityIssuer, cfg.IdentityAudience = testSecret, testIss, testAud
	cfg.AccessTokenKeys = testKeys
	cfg.LeaderElection = false
	cfg.Admitter = false
	// The rate limits are off but in their own tests (botgate_test.go):
	// the others join one customer a hundred times at once and count the
	// Redis calls of polls.
	cfg.RateLimits = config.RateLimits{}
	return cfg
}

// startService runs the queue in-process and returns its base URL.
func startService(t testing.TB, cfg config.Queue, kube *rest.Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, kube, func(a net.Addr) { addr <- a }) }()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a.String()
	case err := <-done:
		cancel()
		t.Fatalf("queue did not start: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("queue did not start in 30s")
	}
	t.Cleanup(func() {
		// Connections the client dialed but never used count as active for
		// 5 s in http.Server.Shutdown; close them first.
		httpClient.CloseIdleConnections()
		if tr, ok := benchClient.Transport.(*http.Transport); ok {
			tr.CloseIdleConnections()
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("queue Run: %v", err)
		}
	})
	// Wait for the first snapshot.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("queue not ready in 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func idToken(t testing.TB, customer string) string {
	t.Helper()
	tok, err := identity.SignHS256(testSecret, testIss, testAud, customer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r reply) view(t testing.TB) queueapi.Place {
	t.Helper()
	var v queueapi.Place
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return v
}

func (r reply) errorCode(t testing.TB) string {
	t.Helper()
	var e queueapi.ErrorBody
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.Code == "" {
		t.Fatalf("not a JSON error body: %q", r.Body)
	}
	return e.Error.Code
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func do(t testing.TB, method, url, token string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := queueAPI.Client(t).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func queueURL(base string) string { return base + "/events/" + strconv.Itoa(testEvent) + "/queue" }

// testSettings are admission settings for store-level tests.
func testSettings() Settings {
	s, _ := Settings{Admission: config.Admission{MaxActive: 100, RatePerSecond: 100, TickInterval: 10 * time.Millisecond,
		TokenTTL: time.Minute, ClaimTimeout: time.Minute, PreQueue: "shuffle"}}.validate()
	return s
}

// admitLog reads the fairness audit list.
func admitLog(t testing.TB, rdb *redis.Client) []string {
	t.Helper()
	l, err := rdb.LRange(context.Background(), keysFor(testEvent).admitLog, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// liveCount counts sessions with expiry in the future, by Redis's clock.
var liveCountScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')`)

func liveCount(t testing.TB, rdb *redis.Client) int64 {
	t.Helper()
	n, err := liveCountScript.Run(context.Background(), rdb, []string{keysFor(testEvent).active}).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
