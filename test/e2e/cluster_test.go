//go:build e2e

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

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/queuestats"
)

// env reads a setting hack/e2e.sh passes to the test.
func env(t *testing.T, name, def string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	if def == "" {
		t.Fatalf("%s is not set: run the test through `make e2e`", name)
	}
	return def
}

// cli runs the cluster's command-line tools the way a person would.
type cli struct {
	t          *testing.T
	kubectl    string
	helm       string
	kubeconfig string
}

func (c *cli) run(ctx context.Context, stdin string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), nil
}

// k runs kubectl and fails the test on an error; a minute at most.
func (c *cli) k(args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.run(ctx, "", c.kubectl, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// kLong runs kubectl that waits itself (wait, rollout status): its own
// --timeout plus a margin bounds it.
func (c *cli) kLong(timeout time.Duration, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	out, err := c.run(ctx, "", c.kubectl, append(args, "--timeout="+timeout.String())...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

func (c *cli) apply(manifest string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.run(ctx, manifest, c.kubectl, "apply", "-f", "-"); err != nil {
		c.t.Fatal(err)
	}
}

// getJSON decodes `kubectl get ... -o json`.
func (c *cli) getJSON(dst any, args ...string) {
	c.t.Helper()
	if err := json.Unmarshal([]byte(c.k(append(args, "-o", "json")...)), dst); err != nil {
		c.t.Fatal(err)
	}
}

// eventually retries f every 250 ms until it succeeds or the timeout.
func eventually(t *testing.T, what string, timeout time.Duration, f func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < timeout {
		if err = f(); err == nil {
			return time.Since(start)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: not after %v: %v", what, timeout, err)
	return 0
}

// services are the managed services outside the cluster, on the node IP.
type services struct {
	redisURL, databaseURL string
	brokers               []string
	// mail is the SMTP server the tickets pods send to, smtp its address
	// on the node IP.
	mail *localsvc.Mailpit
	smtp string
}

// startServices runs Redis, PostgreSQL and Apache Kafka as a
// cloud's managed services would be: outside the cluster, reached by pods
// at an address of the node's network. Redis and PostgreSQL listen on
// loopback (localsvc), behind a TCP forwarder on the node IP; the broker
// listens on the node IP itself, because it advertises its own address.
func startServices(t *testing.T, nodeIP string) services {
	t.Helper()
	ctx := context.Background()
	r, err := localsvc.StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	pg, err := localsvc.StartPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	db, err := exec.Command("psql", pg.URL, "-qc", "CREATE DATABASE ticketfair").CombinedOutput()
	if err != nil {
		t.Fatalf("create database: %v\n%s", err, db)
	}
	redisAddr := forward(t, nodeIP, r.Addr)
	pgAddr := forward(t, nodeIP, pg.Addr)
	// Apache Kafka (KRaft) as a host process, its client listener on the
	// node IP: it advertises that address, which pods reach directly.
	k, err := localsvc.StartApacheKafka(ctx, localsvc.ApacheKafkaConfig{
		Topics: []string{"ticket-issued", "refund-requested"},
		Host:   nodeIP,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	t.Logf("kafka: Apache Kafka %s (KRaft, host process) at %s", localsvc.KafkaVersion, strings.Join(k.Brokers, ","))
	m, err := localsvc.StartMailpit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return services{
		redisURL:    "redis://" + redisAddr + "/0",
		databaseURL: fmt.Sprintf("postgres://postgres@%s/ticketfair?sslmode=disable", pgAddr),
		brokers:     k.Brokers,
		mail:        m,
		smtp:        forward(t, nodeIP, m.SMTPAddr()),
	}
}

// forward accepts on host and relays each connection to target.
func forward(t *testing.T, host, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	track := func(c net.Conn, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			conns[c] = true
		} else {
			delete(conns, c)
		}
	}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			track(in, true)
			track(out, true)
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
				track(dst, false)
				track(src, false)
			}
			go pipe(out, in)
			go pipe(in, out)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// statsPoller samples the queue's GET /stats, as the operator does, so
// the test sees admissions move over time.
type statsPoller struct {
	mu      sync.Mutex
	samples []statsSample
}

type statsSample struct {
	at time.Time
	queuestats.Stats
}

func (p *statsPoller) run(ctx context.Context, url string) {
	c := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		resp, err := c.Get(url)
		if err != nil {
			continue
		}
		var s queuestats.Stats
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			continue
		}
		p.mu.Lock()
		p.samples = append(p.samples, statsSample{at: time.Now(), Stats: s})
		p.mu.Unlock()
	}
}

func (p *statsPoller) last() statsSample {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.samples) == 0 {
		return statsSample{}
	}
	return p.samples[len(p.samples)-1]
}

// admissionGap is the longest time between two samples with a rise of
// admittedTotal, among those in [from, to]; it is the pause of admission.
func (p *statsPoller) admissionGap(from, to time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var gap time.Duration
	lastRise := time.Time{}
	var prev int64 = -1
	for _, s := range p.samples {
		if s.at.Before(from) {
			if prev < 0 || s.AdmittedTotal > prev {
				lastRise = s.at
			}
			prev = s.AdmittedTotal
			continue
		}
		if s.at.After(to) {
			break
		}
		if prev >= 0 && s.AdmittedTotal > prev {
			if !lastRise.IsZero() && s.at.Sub(lastRise) > gap {
				gap = s.at.Sub(lastRise)
			}
			lastRise = s.at
		}
		prev = s.AdmittedTotal
	}
	return gap
}

// usage samples the cgroup v1 files of pods: peak RSS and peak CPU (cores
// over each one-second interval), per pod.
type usage struct {
	mu    sync.Mutex
	peaks map[string]*podPeak // pod name -> peaks
}

type podPeak struct {
	component string
	rss       int64
	cpu       float64
	cpuTotal  float64 // core-seconds while sampled
	lastCPU   int64
	lastAt    time.Time
}

// podRef is what usage needs to find a pod's cgroup.
type podRef struct{ name, uid, component string }

func (u *usage) sample(pods []podRef) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.peaks == nil {
		u.peaks = map[string]*podPeak{}
	}
	now := time.Now()
	for _, p := range pods {
		mem := cgroupDir("memory", p.uid)
		cpu := cgroupDir("cpuacct", p.uid)
		if mem == "" || cpu == "" {
			continue
		}
		pk := u.peaks[p.name]
		if pk == nil {
			pk = &podPeak{component: p.component}
			u.peaks[p.name] = pk
		}
		if rss := memoryStat(mem, "total_rss"); rss > pk.rss {
			pk.rss = rss
		}
		b, err := os.ReadFile(filepath.Join(cpu, "cpuacct.usage"))
		if err != nil {
			continue
		}
		ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if !pk.lastAt.IsZero() {
			if c := float64(ns-pk.lastCPU) / float64(now.Sub(pk.lastAt).Nanoseconds()); c > pk.cpu {
				pk.cpu = c
			}
			pk.cpuTotal += float64(ns-pk.lastCPU) / 1e9
		}
		pk.lastCPU, pk.lastAt = ns, now
	}
}

// cgroupDir finds a pod's cgroup under the kubelet's kubepods hierarchy
// (cgroupfs driver: kubepods/[burstable|besteffort/]pod<uid>).
func cgroupDir(controller, uid string) string {
	for _, qos := range []string{"", "burstable/", "besteffort/"} {
		d := filepath.Join("/sys/fs/cgroup", controller, "kubepods", qos+"pod"+uid)
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	return ""
}

func memoryStat(dir, key string) int64 {
	f, err := os.Open(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// byComponent is the highest peak among a component's pods, and their
// CPU time together.
func (u *usage) byComponent() map[string]podPeak {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := map[string]podPeak{}
	for _, p := range u.peaks {
		cur := out[p.component]
		if p.rss > cur.rss {
			cur.rss = p.rss
		}
		if p.cpu > cur.cpu {
			cur.cpu = p.cpu
		}
		cur.cpuTotal += p.cpuTotal
		cur.component = p.component
		out[p.component] = cur
	}
	return out
}
