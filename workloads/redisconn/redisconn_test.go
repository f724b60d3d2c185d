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

package redisconn_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func defaults(t *testing.T) config.Redis {
	t.Helper()
	var c config.Redis
	if err := config.LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOptions(t *testing.T) {
	c := defaults(t)
	c.RedisURL = "redis://u:p%40ss@r1:7000/3"
	o, err := redisconn.Options(c)
	if err != nil || o.Addrs[0] != "r1:7000" || o.DB != 3 || o.Username != "u" || o.Password != "p@ss" || o.TLSConfig != nil {
		t.Fatalf("standalone: %+v %v", o, err)
	}
	c.RedisPassword = "from-secret"
	if o, _ := redisconn.Options(c); o.Password != "from-secret" || o.Username != "u" {
		t.Fatalf("the password setting must win over the URL's: %q", o.Password)
	}

	c = defaults(t)
	c.RedisURL, c.RedisMode, c.RedisMasterName = "redis://s1:26379?addr=s2:26379&addr=s3:26379", redisconn.Sentinel, "mymaster"
	c.RedisSentinelPassword = "sp"
	o, err = redisconn.Options(c)
	if err != nil || strings.Join(o.Addrs, ",") != "s1:26379,s2:26379,s3:26379" || o.MasterName != "mymaster" || o.SentinelPassword != "sp" {
		t.Fatalf("sentinel: %+v %v", o, err)
	}

	c = defaults(t)
	c.RedisURL, c.RedisMode, c.RedisTLS = "redis://cfg.example:6379", redisconn.Cluster, true
	c.RedisTLSServerName = "cfg.example"
	o, err = redisconn.Options(c)
	if err != nil || o.TLSConfig == nil || o.TLSConfig.ServerName != "cfg.example" {
		t.Fatalf("cluster: %+v %v", o, err)
	}

	for name, bad := range map[string]func(*config.Redis){
		"not a URL":           func(c *config.Redis) { c.RedisURL = "r1:6379" },
		"unknown parameter":   func(c *config.Redis) { c.RedisURL = "redis://r1?read_timeout=3" },
		"two standalone":      func(c *config.Redis) { c.RedisURL = "redis://r1?addr=r2:6379" },
		"sentinel no master":  func(c *config.Redis) { c.RedisMode = redisconn.Sentinel },
		"master not sentinel": func(c *config.Redis) { c.RedisMasterName = "m" },
		"cluster db":          func(c *config.Redis) { c.RedisMode, c.RedisURL = redisconn.Cluster, "redis://r1/2" },
		"unknown mode":        func(c *config.Redis) { c.RedisMode = "ring" },
		"CA without TLS":      func(c *config.Redis) { c.RedisTLSCA = "x" },
		"bad CA":              func(c *config.Redis) { c.RedisTLS, c.RedisTLSCA = true, "not pem" },
		"cert without key":    func(c *config.Redis) { c.RedisTLS, c.RedisTLSCert = true, "x" },
	} {
		c := defaults(t)
		c.RedisURL = "redis://user:hunter2@r1:6379/0"
		bad(&c)
		_, err := redisconn.Options(c)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error quotes the password: %v", name, err)
		}
	}
}

// TestTLSAndACL runs against a redis-server that speaks only TLS, requires
// a client certificate and knows only one ACL user.
func TestTLSAndACL(t *testing.T) {
	cfg, certs := testenv.RedisSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ping := func(c config.Redis) error {
		rdb, err := redisconn.New(c)
		if err != nil {
			return err
		}
		defer rdb.Close()
		if err := rdb.Set(ctx, "tf:{1}:probe", "ok", 0).Err(); err != nil {
			return err
		}
		return rdb.Get(ctx, "tf:{1}:probe").Err()
	}
	if err := ping(cfg); err != nil {
		t.Fatalf("TLS with client certificate and ACL user: %v", err)
	}
	for name, change := range map[string]func(*config.Redis){
		"wrong password":        func(c *config.Redis) { c.RedisPassword = "wrong" },
		"default user":          func(c *config.Redis) { c.RedisUsername = "" },
		"no client certificate": func(c *config.Redis) { c.RedisTLSCert, c.RedisTLSKey = "", "" },
		"system CAs":            func(c *config.Redis) { c.RedisTLSCA = "" },
		"wrong server name":     func(c *config.Redis) { c.RedisTLSServerName = "redis.example" },
		"plain TCP": func(c *config.Redis) {
			c.RedisURL = strings.Replace(c.RedisURL, "rediss://", "redis://", 1)
			c.RedisTLSCA, c.RedisTLSCert, c.RedisTLSKey = "", "", ""
		},
	} {
		c := cfg
		change(&c)
		start := time.Now()
		err := ping(c)
		if err == nil {
			t.Errorf("%s: connected", name)
			continue
		}
		// A refused connection is an error within the timeouts, not a hang.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: failed only after %v", name, d)
		}
		t.Logf("%s: %v", name, err)
	}
	// The certificate is checked against the CA, not merely present.
	other := testenv.NewCerts(t)
	c := cfg
	c.RedisTLSCA = other.CA
	if err := ping(c); err == nil {
		t.Error("a server certificate of another CA was accepted")
	}
	_ = certs
}

// TestSentinel connects through the sentinels by master name and follows
// a failover.
func TestSentinel(t *testing.T) {
	h, cfg := testenv.RedisSentinel(t, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb, err := redisconn.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if err := rdb.Set(ctx, "tf:{1}:k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// WAIT: the replica has the write before the master dies.
	if n, err := rdb.Do(ctx, "WAIT", 1, 1000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas, %v", n, err)
	}
	if _, ok := rdb.(*redis.Client); !ok {
		t.Fatalf("sentinel mode built a %T", rdb)
	}
	master, err := h.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := master.Addr
	start := time.Now()
	// A read may succeed before the sentinels promote anyone (from the
	// replica, while the client still looks for the master): what is
	// checked is the client after the promotion.
	for h.MasterAddr(ctx) == old {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the sentinels still name %s 30s after its SIGKILL", old)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var v string
	for {
		if v, err = rdb.Get(ctx, "tf:{1}:k").Result(); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no master 30s after SIGKILL: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v != "before" || h.MasterAddr(ctx) == old {
		t.Fatalf("after failover: %q from %s (was %s)", v, h.MasterAddr(ctx), old)
	}
	if err := rdb.Set(ctx, "tf:{1}:k", "after", 0).Err(); err != nil {
		t.Fatalf("write to the promoted replica: %v", err)
	}
	t.Logf("reads and writes again %v after SIGKILL of the master (down-after 1s)", time.Since(start).Round(10*time.Millisecond))
}

// TestClusterRedirects: cluster mode finds each key's node.
func TestClusterRedirects(t *testing.T) {
	_, cfg := testenv.RedisCluster(t, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rdb, err := redisconn.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("cluster mode built a %T", rdb)
	}
	slots := map[int64]bool{}
	for i := range 30 {
		k := "tf:{" + string(rune('a'+i%26)) + "}:" + string(rune('0'+i%10))
		if err := c.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		s, _ := c.ClusterKeySlot(ctx, k).Result()
		slots[s] = true
	}
	var masters atomic.Int32 // ForEachMaster calls fn on every master at once
	_ = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if n, _ := m.DBSize(ctx).Result(); n > 0 {
			masters.Add(1)
		}
		return nil
	})
	if masters.Load() != 3 {
		t.Fatalf("keys of %d slots landed on %d masters, want all 3", len(slots), masters.Load())
	}
	if err := c.Get(ctx, "nope").Err(); !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
}
