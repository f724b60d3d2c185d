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

package localsvc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// StartRedisNode starts redis-server on a free loopback port, without
// persistence, with extra arguments (TLS, ACL users, replicaof, cluster).
// With tls set the port serves TLS only (the arguments must name the
// certificate files).
func StartRedisNode(ctx context.Context, tls bool, args ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server: %w (apt-get install -y redis-server)", ErrMissing)
	}
	dir, err := os.MkdirTemp("", "ticketfair-redis-")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	// A replica syncs at once, not after the default 5 s wait for others.
	base := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir,
		"--repl-diskless-sync-delay", "0"}
	if tls {
		base[0], base[1] = "--port", "0"
		base = append(base, "--tls-port", strconv.Itoa(port))
	}
	return startRedisLike(ctx, "redis", bin, dir, port, append(base, args...))
}

func startRedisLike(ctx context.Context, name, bin, dir string, port int, args []string) (*Server, error) {
	logPath := filepath.Join(dir, name+".log")
	s, err := start(name, exec.Command(bin, args...), logPath)
	if err != nil {
		return nil, err
	}
	s.Dir = dir
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = "redis://" + s.Addr
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.waitTCP(wctx, logPath); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// RedisSentinel is a master, its replica and sentinels that monitor them.
type RedisSentinel struct {
	MasterName string
	Master     *Server
	Replica    *Server
	Sentinels  []*Server
	// URL names the sentinels, as config.Redis takes it in sentinel mode.
	URL string
}

// Stop stops every process.
func (h *RedisSentinel) Stop() {
	for _, s := range h.Sentinels {
		_ = s.Stop()
	}
	_ = h.Replica.Stop()
	_ = h.Master.Stop()
}

// Nodes are the master and the replica, in that order at start.
func (h *RedisSentinel) Nodes() []*Server { return []*Server{h.Master, h.Replica} }

// StartRedisSentinel starts a master, one replica and n sentinels (quorum
// n/2+1) on loopback. downAfter is how long the master may be silent before
// the sentinels fail over.
func StartRedisSentinel(ctx context.Context, masterName string, n int, downAfter time.Duration) (*RedisSentinel, error) {
	sbin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		return nil, fmt.Errorf("redis-sentinel: %w (apt-get install -y redis-sentinel)", ErrMissing)
	}
	h := &RedisSentinel{MasterName: masterName}
	fail := func(err error) (*RedisSentinel, error) {
		h.Stop()
		return nil, err
	}
	if h.Master, err = StartRedisNode(ctx, false); err != nil {
		return fail(err)
	}
	_, mport, _ := net.SplitHostPort(h.Master.Addr)
	if h.Replica, err = StartRedisNode(ctx, false, "--replicaof", "127.0.0.1", mport); err != nil {
		return fail(err)
	}
	var addrs []string
	for i := 0; i < n; i++ {
		dir, err := os.MkdirTemp("", "ticketfair-sentinel-")
		if err != nil {
			return fail(err)
		}
		port, err := FreePort()
		if err != nil {
			return fail(err)
		}
		conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %s %d\n"+
			"sentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s 10000\n"+
			"sentinel parallel-syncs %s 1\n",
			port, dir, masterName, mport, n/2+1, masterName, downAfter.Milliseconds(), masterName, masterName)
		path := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return fail(err)
		}
		s, err := startRedisLike(ctx, "sentinel", sbin, dir, port, []string{path})
		if err != nil {
			return fail(err)
		}
		h.Sentinels = append(h.Sentinels, s)
		addrs = append(addrs, s.Addr)
	}
	h.URL = "redis://" + addrs[0]
	for i, a := range addrs[1:] {
		if i == 0 {
			h.URL += "?addr=" + a
		} else {
			h.URL += "&addr=" + a
		}
	}
	// Ready when the replica is in sync and every sentinel knows the other
	// sentinels and the replica.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := strings.Contains(cli(ctx, h.Replica.Addr, "INFO", "replication"), "master_link_status:up")
		for _, s := range h.Sentinels {
			out := cli(ctx, s.Addr, "SENTINEL", "MASTER", masterName)
			ok = ok && field(out, "num-other-sentinels") == strconv.Itoa(n-1) && field(out, "num-slaves") == "1"
		}
		if ok {
			return h, nil
		}
		if time.Now().After(deadline) {
			return fail(errors.New("sentinels did not discover each other and the replica within 30s"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MasterAddr asks the sentinels which node is the master now.
func (h *RedisSentinel) MasterAddr(ctx context.Context) string {
	for _, s := range h.Sentinels {
		out := strings.Fields(cli(ctx, s.Addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", h.MasterName))
		if len(out) == 2 {
			return net.JoinHostPort(out[0], out[1])
		}
	}
	return ""
}

// KillMaster SIGKILLs the node the sentinels name as master now (after a
// spurious failover on a busy machine that may be the replica started
// second) and returns it.
func (h *RedisSentinel) KillMaster(ctx context.Context) (*Server, error) {
	addr := h.MasterAddr(ctx)
	for _, n := range h.Nodes() {
		if n.Addr == addr {
			n.Kill()
			return n, nil
		}
	}
	return nil, fmt.Errorf("the sentinels name %q as master, neither node", addr)
}

// RedisCluster is a Redis Cluster of masters, each with replicas.
type RedisCluster struct {
	Nodes []*Server
	// URL names every node, as config.Redis takes it in cluster mode.
	URL string
}

// Stop stops every node.
func (c *RedisCluster) Stop() {
	for _, s := range c.Nodes {
		_ = s.Stop()
	}
}

// StartRedisCluster starts masters × (1 + replicas) nodes and joins them
// with `redis-cli --cluster create`. nodeTimeout is the cluster's failure
// detection time.
func StartRedisCluster(ctx context.Context, masters, replicas int, nodeTimeout time.Duration) (*RedisCluster, error) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		return nil, fmt.Errorf("redis-cli: %w (apt-get install -y redis-tools)", ErrMissing)
	}
	c := &RedisCluster{}
	fail := func(err error) (*RedisCluster, error) {
		c.Stop()
		return nil, err
	}
	var addrs []string
	for i := 0; i < masters*(1+replicas); i++ {
		// The bus port is a free one of its own: the default, port+10000,
		// may be taken or beyond 65535.
		bus, err := FreePort()
		if err != nil {
			return fail(err)
		}
		s, err := StartRedisNode(ctx, false, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10))
		if err != nil {
			return fail(err)
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out))
	}
	c.URL = "redis://" + addrs[0]
	for i, a := range addrs[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		c.URL += sep + "addr=" + a
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Ready when every node sees the cluster ok and every replica is in
		// sync: a replica without its master's data may not take over.
		ok, synced := true, 0
		for _, s := range c.Nodes {
			ok = ok && strings.Contains(cli(ctx, s.Addr, "CLUSTER", "INFO"), "cluster_state:ok")
			if strings.Contains(cli(ctx, s.Addr, "INFO", "replication"), "master_link_status:up") {
				synced++
			}
		}
		ok = ok && synced == masters*replicas
		if ok {
			return c, nil
		}
		if time.Now().After(deadline) {
			return fail(errors.New("cluster not ok within 30s"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cli runs one redis-cli command against addr and returns its output (empty
// on failure).
func cli(ctx context.Context, addr string, args ...string) string {
	h, p, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", h, "-p", p}, args...)...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// field reads "name\nvalue\n" pairs of redis-cli's output of a map reply.
func field(out, name string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == name {
			return strings.TrimSpace(lines[i+1])
		}
	}
	return ""
}
