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

// Package redisconn builds the one Redis client every ticketfair process
// uses (queue, booking, the operator's --redis-cleanup, the local sale) from
// config.Redis: a single server, a master found through Sentinel, or a
// Redis Cluster, each optionally with TLS (a CA, a client certificate) and
// an ACL user and password.
//
// The three modes share one URL form,
//
//	redis[s]://[user:password@]host:port[/db][?addr=host:port&addr=...]
//
// whose hosts are the server (standalone), the sentinels (sentinel) or seed
// nodes (cluster). The URL's user and password are the data nodes' in every
// mode; the sentinels' own credentials, if they have any, are separate
// settings.
package redisconn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/tlsconf"
)

// Modes of config.Redis.RedisMode.
const (
	Standalone = "standalone"
	Sentinel   = "sentinel"
	Cluster    = "cluster"
)

// timeout bounds dialing, each read and write and the wait for a pooled
// connection: a Redis that is down or failing over costs a request a
// second and a 503, never a hang.
const timeout = time.Second

// clusterReload is how often a cluster client re-reads the slot map while
// it is in use: a failover is followed within about that.
const clusterReload = time.Second

// New returns the client cfg describes. It does not connect: the first
// command does.
func New(cfg config.Redis) (redis.UniversalClient, error) {
	o, err := Options(cfg)
	if err != nil {
		return nil, err
	}
	switch cfg.RedisMode {
	case Sentinel:
		return redis.NewFailoverClient(o.Failover()), nil
	case Cluster:
		co := o.Cluster()
		// The slot map is otherwise reloaded only on MOVED or once a
		// minute, and a dead master answers no MOVED: its slots would stay
		// unreachable long after a replica took them over.
		co.ClusterStateReloadInterval = clusterReload
		return redis.NewClusterClient(co), nil
	default:
		return redis.NewClient(o.Simple()), nil
	}
}

// Options returns the client options cfg describes. Its errors never
// quote the URL, which may carry a password.
func Options(cfg config.Redis) (*redis.UniversalOptions, error) {
	u, err := url.Parse(cfg.RedisURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, errors.New("redis: TICKETFAIR_REDIS_URL is not a redis:// or rediss:// URL with a host")
	}
	o := &redis.UniversalOptions{
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolTimeout: timeout,
		MaxRetries: 1,
	}
	o.Addrs = []string{hostPort(u.Host)}
	q := u.Query()
	for name, vs := range q {
		if name != "addr" {
			return nil, fmt.Errorf("redis: unknown URL parameter %q (only addr)", name)
		}
		for _, v := range vs {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return nil, fmt.Errorf("redis: URL parameter addr=%q is not host:port", v)
			}
			o.Addrs = append(o.Addrs, v)
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if o.DB, err = strconv.Atoi(db); err != nil || o.DB < 0 {
			return nil, fmt.Errorf("redis: URL path %q is not a database number", u.Path)
		}
	}
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	if cfg.RedisUsername != "" {
		o.Username = cfg.RedisUsername
	}
	if cfg.RedisPassword != "" {
		o.Password = cfg.RedisPassword
	}

	switch cfg.RedisMode {
	case Standalone, "":
		if len(o.Addrs) != 1 {
			return nil, fmt.Errorf("redis: standalone mode takes one server, the URL names %d (sentinels or a cluster need TICKETFAIR_REDIS_MODE)", len(o.Addrs))
		}
	case Sentinel:
		if cfg.RedisMasterName == "" {
			return nil, errors.New("redis: sentinel mode needs TICKETFAIR_REDIS_MASTER_NAME")
		}
		o.MasterName = cfg.RedisMasterName
		o.SentinelUsername, o.SentinelPassword = cfg.RedisSentinelUsername, cfg.RedisSentinelPassword
	case Cluster:
		if o.DB != 0 {
			return nil, errors.New("redis: a cluster has only database 0")
		}
	default:
		return nil, fmt.Errorf("redis: unknown mode %q (standalone, sentinel or cluster)", cfg.RedisMode)
	}
	if cfg.RedisMode != Sentinel && (cfg.RedisMasterName != "" || cfg.RedisSentinelUsername != "" || cfg.RedisSentinelPassword != "") {
		return nil, fmt.Errorf("redis: a master name and sentinel credentials apply to sentinel mode only, not %s", modeName(cfg.RedisMode))
	}

	useTLS := u.Scheme == "rediss" || cfg.RedisTLS
	if !useTLS && (cfg.RedisTLSCA != "" || cfg.RedisTLSCert != "" || cfg.RedisTLSKey != "" || cfg.RedisTLSServerName != "") {
		return nil, errors.New("redis: TLS settings are given but TLS is off (use a rediss:// URL or TICKETFAIR_REDIS_TLS=true)")
	}
	if useTLS {
		if o.TLSConfig, err = tlsconf.Client(cfg.RedisTLSCA, cfg.RedisTLSCert, cfg.RedisTLSKey, cfg.RedisTLSServerName); err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
	}
	return o, nil
}

func modeName(m string) string {
	if m == "" {
		return Standalone
	}
	return m
}

// hostPort adds Redis's default port to a host without one.
func hostPort(h string) string {
	if _, _, err := net.SplitHostPort(h); err == nil {
		return h
	}
	return net.JoinHostPort(strings.Trim(h, "[]"), "6379")
}
