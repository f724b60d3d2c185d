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
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaVersion is the Apache Kafka release hack/kafka/pom.xml pins.
const KafkaVersion = "4.4.0"

// KafkaHome finds the fetched Apache Kafka: TICKETFAIR_KAFKA_HOME, else
// bin/kafka of the module (make kafka links it to the cache there). It holds
// libs/ with the broker's jars.
func KafkaHome() (string, error) {
	if h := os.Getenv("TICKETFAIR_KAFKA_HOME"); h != "" {
		return h, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	h := filepath.Join(root, "bin", "kafka")
	if _, err := os.Stat(filepath.Join(h, "libs", "kafka_2.13-"+KafkaVersion+".jar")); err != nil {
		return "", fmt.Errorf("apache kafka %s: %w (make kafka)", KafkaVersion, ErrMissing)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("java: %w (hack/install-deps.sh)", ErrMissing)
	}
	return h, nil
}

// KafkaSCRAMUser is a SASL/SCRAM user created when the storage is formatted.
type KafkaSCRAMUser struct {
	Mechanism string // SCRAM-SHA-256 or SCRAM-SHA-512
	Name      string
	Password  string
}

// ApacheKafkaConfig describes a real Apache Kafka cluster in KRaft mode:
// every node is both controller and broker.
type ApacheKafkaConfig struct {
	Nodes int // 1 (default) or more

	// Topics are created with Partitions partitions (default 3) and
	// min(3, Nodes) replicas; MinInsyncReplicas (default: replicas-1, at
	// least 1) is set on them.
	Topics            []string
	Partitions        int
	MinInsyncReplicas int

	// Extra listeners beside the PLAINTEXT one, each on its own port:
	// TLS adds an SSL listener (CertPEM/KeyPEM the broker's certificate and
	// PKCS#8 key, CAPEM what it trusts for client certificates); SCRAM users
	// add a SASL_PLAINTEXT listener, and a SASL_SSL one with TLS.
	CertPEM, KeyPEM, CAPEM string
	RequireClientCert      bool
	SCRAMUsers             []KafkaSCRAMUser

	// HeapMB is each JVM's heap (default 384): three nodes and the tests
	// fit beside each other on a small machine.
	HeapMB int
	// Settings are extra server.properties lines (key=value).
	Settings []string
	// Dir keeps the nodes' logs and data (default: a temporary directory
	// that Stop removes).
	Dir string
	// Host is the address the client listeners bind to and advertise
	// (default 127.0.0.1): a node's IP lets pods reach the brokers, as a
	// managed Kafka outside the cluster. The controllers stay on loopback.
	Host string
}

// ApacheKafka is a running Apache Kafka cluster of host processes on
// loopback.
type ApacheKafka struct {
	// Brokers are the PLAINTEXT bootstrap addresses; TLSBrokers,
	// SASLBrokers and SASLTLSBrokers those of the extra listeners.
	Brokers, TLSBrokers, SASLBrokers, SASLTLSBrokers []string

	cfg       ApacheKafkaConfig
	home, dir string
	keep      bool
	nodes     []*kafkaNode
}

type kafkaNode struct {
	id         int
	props, log string
	data       string
	listeners  map[string]int // listener name -> port

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan error
}

// StartApacheKafka formats the nodes' storage and starts them, waiting
// until every node is a registered broker and the topics exist.
func StartApacheKafka(ctx context.Context, c ApacheKafkaConfig) (*ApacheKafka, error) {
	home, err := KafkaHome()
	if err != nil {
		return nil, err
	}
	if c.Nodes <= 0 {
		c.Nodes = 1
	}
	if c.Partitions <= 0 {
		c.Partitions = 3
	}
	if c.HeapMB <= 0 {
		c.HeapMB = 384
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	k := &ApacheKafka{cfg: c, home: home, dir: c.Dir, keep: c.Dir != ""}
	if k.dir == "" {
		if k.dir, err = os.MkdirTemp("", "ticketfair-kafka-"); err != nil {
			return nil, err
		}
	}
	if err := k.configure(); err != nil {
		k.Stop()
		return nil, err
	}
	for _, n := range k.nodes {
		if err := k.format(ctx, n); err != nil {
			k.Stop()
			return nil, err
		}
	}
	for _, n := range k.nodes {
		if err := k.startNode(n); err != nil {
			k.Stop()
			return nil, err
		}
	}
	if err := k.WaitReady(ctx); err != nil {
		k.Stop()
		return nil, err
	}
	if err := k.CreateTopics(ctx, c.Topics...); err != nil {
		k.Stop()
		return nil, err
	}
	return k, nil
}

// configure picks the ports and writes each node's server.properties.
func (k *ApacheKafka) configure() error {
	c := k.cfg
	names := []string{"PLAINTEXT", "CONTROLLER"}
	if c.CertPEM != "" {
		names = append(names, "SSL")
	}
	if len(c.SCRAMUsers) > 0 {
		names = append(names, "SASL_PLAINTEXT")
		if c.CertPEM != "" {
			names = append(names, "SASL_SSL")
		}
	}
	for i := 1; i <= c.Nodes; i++ {
		n := &kafkaNode{id: i, listeners: map[string]int{}, done: make(chan error, 1)}
		for _, name := range names {
			p, err := FreePort()
			if err != nil {
				return err
			}
			n.listeners[name] = p
		}
		nd := filepath.Join(k.dir, fmt.Sprintf("node-%d", i))
		n.data, n.props, n.log = filepath.Join(nd, "data"), filepath.Join(nd, "server.properties"), filepath.Join(nd, "server.log")
		if err := os.MkdirAll(n.data, 0o755); err != nil {
			return err
		}
		k.nodes = append(k.nodes, n)
	}
	var voters []string
	for _, n := range k.nodes {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.listeners["CONTROLLER"]))
	}
	replicas := min(3, c.Nodes)
	minISR := c.MinInsyncReplicas
	if minISR <= 0 {
		minISR = max(1, replicas-1)
	}
	for _, n := range k.nodes {
		var ls, adv, proto []string
		for _, name := range names {
			host := c.Host
			if name == "CONTROLLER" {
				host = "127.0.0.1"
			}
			addr := net.JoinHostPort(host, strconv.Itoa(n.listeners[name]))
			ls = append(ls, name+"://"+addr)
			if name != "CONTROLLER" {
				adv = append(adv, name+"://"+addr)
			}
			p := name
			if name == "CONTROLLER" {
				p = "PLAINTEXT"
			}
			proto = append(proto, name+":"+p)
			switch name {
			case "PLAINTEXT":
				k.Brokers = append(k.Brokers, addr)
			case "SSL":
				k.TLSBrokers = append(k.TLSBrokers, addr)
			case "SASL_PLAINTEXT":
				k.SASLBrokers = append(k.SASLBrokers, addr)
			case "SASL_SSL":
				k.SASLTLSBrokers = append(k.SASLTLSBrokers, addr)
			}
		}
		props := []string{
			"process.roles=broker,controller",
			"node.id=" + strconv.Itoa(n.id),
			"controller.quorum.voters=" + strings.Join(voters, ","),
			"controller.listener.names=CONTROLLER",
			"inter.broker.listener.name=PLAINTEXT",
			"listeners=" + strings.Join(ls, ","),
			"advertised.listeners=" + strings.Join(adv, ","),
			"listener.security.protocol.map=" + strings.Join(proto, ","),
			"log.dirs=" + n.data,
			"num.partitions=" + strconv.Itoa(c.Partitions),
			"default.replication.factor=" + strconv.Itoa(replicas),
			"min.insync.replicas=" + strconv.Itoa(minISR),
			"offsets.topic.replication.factor=" + strconv.Itoa(replicas),
			"offsets.topic.num.partitions=" + strconv.Itoa(c.Partitions),
			"transaction.state.log.replication.factor=" + strconv.Itoa(replicas),
			"transaction.state.log.min.isr=" + strconv.Itoa(minISR),
			"share.coordinator.state.topic.replication.factor=" + strconv.Itoa(replicas),
			"share.coordinator.state.topic.min.isr=" + strconv.Itoa(minISR),
			// Tests and local sales start consumers right away.
			"group.initial.rebalance.delay.ms=0",
			"auto.create.topics.enable=false",
			// A killed node's partitions move within seconds, and a restarted
			// one takes its leaderships back.
			"broker.session.timeout.ms=6000",
			"broker.heartbeat.interval.ms=1000",
			"leader.imbalance.check.interval.seconds=5",
			"log.flush.interval.messages=1",
		}
		if c.CertPEM != "" {
			key, err := pkcs8PEM(c.KeyPEM)
			if err != nil {
				return err
			}
			pemFile := filepath.Join(filepath.Dir(n.props), "broker.pem")
			if err := os.WriteFile(pemFile, []byte(key+c.CertPEM), 0o600); err != nil {
				return err
			}
			props = append(props, "ssl.keystore.type=PEM", "ssl.keystore.location="+pemFile)
			if c.CAPEM != "" {
				ca := filepath.Join(filepath.Dir(n.props), "ca.pem")
				if err := os.WriteFile(ca, []byte(c.CAPEM), 0o600); err != nil {
					return err
				}
				props = append(props, "ssl.truststore.type=PEM", "ssl.truststore.location="+ca)
			}
			if c.RequireClientCert {
				props = append(props, "listener.name.ssl.ssl.client.auth=required")
			}
		}
		if len(c.SCRAMUsers) > 0 {
			props = append(props, "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512")
			for _, l := range []string{"sasl_plaintext", "sasl_ssl"} {
				for _, m := range []string{"scram-sha-256", "scram-sha-512"} {
					props = append(props, fmt.Sprintf("listener.name.%s.%s.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;", l, m))
				}
			}
		}
		props = append(props, c.Settings...)
		if err := os.WriteFile(n.props, []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(k.dir, "log4j2.properties"), []byte(kafkaLog4j), 0o644)
}

// pkcs8PEM re-encodes a SEC1 (EC) or PKCS#1 (RSA) private key as PKCS#8,
// the only form a PEM keystore of the broker reads.
func pkcs8PEM(keyPEM string) (string, error) {
	b, _ := pem.Decode([]byte(keyPEM))
	if b == nil {
		return "", errors.New("kafka TLS key: no PEM block")
	}
	var key any
	var err error
	switch b.Type {
	case "PRIVATE KEY":
		return string(pem.EncodeToMemory(b)), nil
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		return "", fmt.Errorf("kafka TLS key: unsupported PEM block %q", b.Type)
	}
	if err != nil {
		return "", fmt.Errorf("kafka TLS key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// The broker logs warnings and its start/stop lines only: a full INFO log
// costs CPU the tests need.
const kafkaLog4j = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = OUT
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
`

func (k *ApacheKafka) java(args ...string) *exec.Cmd {
	return exec.Command("java", append(k.jvmArgs(), args...)...)
}

// Tool returns a command that runs a main class of the Kafka jars (a
// command-line tool, e.g. org.apache.kafka.tools.ProducerPerformance, what
// kafka-producer-perf-test.sh runs) with the JVM settings Kafka's own
// scripts give it (kafka-run-class.sh's defaults, a 512 MiB heap), not the
// brokers' trimmed ones: a baseline runs as shipped. It is killed when ctx
// ends, or when this process dies.
func (k *ApacheKafka) Tool(ctx context.Context, class string, args ...string) *exec.Cmd {
	jvm := []string{
		"-Xmx512m", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
		"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(k.dir, "log4j2.properties"),
		"-cp", filepath.Join(k.home, "libs", "*"),
	}
	cmd := exec.CommandContext(ctx, "java", append(append(jvm, class), args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

func (k *ApacheKafka) jvmArgs() []string {
	return []string{
		fmt.Sprintf("-Xms%dm", k.cfg.HeapMB/2), fmt.Sprintf("-Xmx%dm", k.cfg.HeapMB),
		"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:+ExitOnOutOfMemoryError",
		// Two cores: no JIT or GC threads beyond them, and a quick start.
		"-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=2", "-XX:ParallelGCThreads=2", "-XX:ConcGCThreads=1",
		"-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(k.dir, "log4j2.properties"),
		"-cp", filepath.Join(k.home, "libs", "*"),
	}
}

// clusterID is the cluster's id in storage: 16 random bytes, base64url.
func (k *ApacheKafka) clusterID() (string, error) {
	p := filepath.Join(k.dir, "cluster.id")
	if b, err := os.ReadFile(p); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	// As Kafka's own Uuid.randomUuid: an id that starts with '-' would be
	// read as an option by the storage tool's command line.
	var id string
	for id == "" || id[0] == '-' {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		id = base64.RawURLEncoding.EncodeToString(b)
	}
	return id, os.WriteFile(p, []byte(id), 0o644)
}

func (k *ApacheKafka) format(ctx context.Context, n *kafkaNode) error {
	id, err := k.clusterID()
	if err != nil {
		return err
	}
	args := []string{"kafka.tools.StorageTool", "format", "--ignore-formatted", "-t", id, "-c", n.props}
	for _, u := range k.cfg.SCRAMUsers {
		args = append(args, "--add-scram", fmt.Sprintf("%s=[name=%s,password=%s]", u.Mechanism, u.Name, u.Password))
	}
	cmd := k.java(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runCtx(ctx, cmd); err != nil {
		return fmt.Errorf("format kafka node %d: %w\n%s", n.id, err, out.String())
	}
	return nil
}

func runCtx(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
}

func (k *ApacheKafka) startNode(n *kafkaNode) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return nil
	}
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := k.java("kafka.Kafka", n.props)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The broker dies with us, even when a test binary is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start kafka node %d: %w", n.id, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	n.cmd, n.done = cmd, done
	return nil
}

// NodeCount is the number of nodes.
func (k *ApacheKafka) NodeCount() int { return len(k.nodes) }

// Kill stops node i at once with SIGKILL, as a crashed machine would; its
// data stays for Restart.
func (k *ApacheKafka) Kill(i int) {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.done
	n.cmd = nil
}

// StopNode stops node i gracefully (SIGTERM, then SIGKILL after 20 s).
func (k *ApacheKafka) StopNode(i int) {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	Terminate(n.cmd.Process, n.done, 20*time.Second)
	n.cmd = nil
}

// Restart starts a stopped or killed node i again on the same ports with
// the same data, and waits until the cluster has all its brokers.
func (k *ApacheKafka) Restart(ctx context.Context, i int) error {
	if err := k.startNode(k.nodes[i]); err != nil {
		return err
	}
	return k.WaitReady(ctx)
}

// RestartAll starts every stopped or killed node again, then waits once
// for all of them: a KRaft quorum whose voters are all down has no
// controller until a majority is back, so nodes cannot be restarted and
// awaited one at a time.
func (k *ApacheKafka) RestartAll(ctx context.Context) error {
	for i, n := range k.nodes {
		if k.Running(i) {
			continue
		}
		if err := k.startNode(n); err != nil {
			return err
		}
	}
	return k.WaitReady(ctx)
}

// Running reports whether node i's process is up.
func (k *ApacheKafka) Running(i int) bool {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
}

// Stop stops every node and removes the directory (unless it was given).
func (k *ApacheKafka) Stop() {
	if k == nil {
		return
	}
	var wg sync.WaitGroup
	for i := range k.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); k.StopNode(i) }()
	}
	wg.Wait()
	if !k.keep && k.dir != "" {
		_ = os.RemoveAll(k.dir)
	}
}

// Logs returns the tail of every node's log, for a failing test's output.
func (k *ApacheKafka) Logs() string {
	var b strings.Builder
	for _, n := range k.nodes {
		out, _ := os.ReadFile(n.log)
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		fmt.Fprintf(&b, "--- kafka node %d (%s)\n%s\n", n.id, n.log, out)
	}
	return b.String()
}

func (k *ApacheKafka) admin() (*kadm.Client, *kgo.Client, error) {
	var seeds []string
	for i := range k.nodes {
		if k.Running(i) {
			seeds = append(seeds, k.Brokers[i])
		}
	}
	if len(seeds) == 0 {
		return nil, nil, errors.New("no kafka node is running")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequestRetries(2), kgo.DialTimeout(time.Second))
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}

// WaitReady waits until every running node is a registered broker that
// answers metadata, or a node exits, or ctx ends (default limit 60 s).
func (k *ApacheKafka) WaitReady(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
	}
	want := 0
	for i := range k.nodes {
		if k.Running(i) {
			want++
		}
	}
	var last error
	for {
		for i, n := range k.nodes {
			n.mu.Lock()
			if n.cmd != nil {
				select {
				case err := <-n.done:
					n.cmd = nil
					n.mu.Unlock()
					return fmt.Errorf("kafka node %d exited before it was ready: %v\n%s", i+1, err, k.Logs())
				default:
				}
			}
			n.mu.Unlock()
		}
		if last = k.brokersUp(ctx, want); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka not ready: %v (%w)\n%s", last, ctx.Err(), k.Logs())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (k *ApacheKafka) brokersUp(ctx context.Context, want int) error {
	adm, cl, err := k.admin()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	m, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	if len(m.Brokers) < want {
		return fmt.Errorf("%d of %d brokers registered", len(m.Brokers), want)
	}
	if m.Controller < 0 {
		return errors.New("no active controller")
	}
	return nil
}

// CreateTopics creates topics (the config's partitions, min(3, nodes)
// replicas and min.insync.replicas), accepting ones that exist, and waits
// until each partition has a leader.
func (k *ApacheKafka) CreateTopics(ctx context.Context, topics ...string) error {
	if len(topics) == 0 {
		return nil
	}
	adm, cl, err := k.admin()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	replicas := int16(min(3, len(k.nodes)))
	for {
		resp, err := adm.CreateTopics(ctx, int32(k.cfg.Partitions), replicas, nil, topics...)
		if err == nil {
			err = resp.Error()
		}
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("create topics %v: %w", topics, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		td, err := adm.ListTopics(ctx, topics...)
		ok := err == nil && len(td) == len(topics)
		for _, t := range td {
			if t.Err != nil || len(t.Partitions) != k.cfg.Partitions {
				ok = false
			}
			for _, p := range t.Partitions {
				if p.Leader < 0 || p.Err != nil {
					ok = false
				}
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v have no leaders: %v", topics, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Leaders maps each partition of topic to the 0-based index of the node
// leading it.
func (k *ApacheKafka) Leaders(ctx context.Context, topic string) (map[int32]int, error) {
	adm, cl, err := k.admin()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, err
	}
	t, ok := td[topic]
	if !ok || t.Err != nil {
		return nil, fmt.Errorf("topic %s: %v", topic, t.Err)
	}
	out := map[int32]int{}
	for _, p := range t.Partitions.Sorted() {
		out[p.Partition] = int(p.Leader) - 1
	}
	return out, nil
}
