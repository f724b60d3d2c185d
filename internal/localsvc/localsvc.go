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

// Package localsvc starts throwaway Redis, PostgreSQL, Apache Kafka (or the
// embedded Kafka-protocol imitation), Mailpit and nginx
// servers on free loopback ports, for tests and for the local sale. Each
// server lives in its own temporary directory and dies with the process that
// started it.
package localsvc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrMissing reports that a server binary is not installed.
var ErrMissing = errors.New("server binary not installed")

// Server is a running child process.
type Server struct {
	Name string
	Addr string // host:port
	URL  string // connection URL for clients
	Dir  string // temporary directory, removed by Stop unless Keep is set
	Port int

	// PostgreSQL only: the server binaries and the cluster's data directory.
	bindir, data string
	cred         *syscall.Credential
	pgArgs       []string // server options beyond the defaults (TLS, settings), kept by a restart

	Keep bool

	cmd  *exec.Cmd
	done chan error
}

// Stop terminates the server and removes its directory.
func (s *Server) Stop() error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	Terminate(s.cmd.Process, s.done, 10*time.Second)
	if !s.Keep && s.Dir != "" {
		return os.RemoveAll(s.Dir)
	}
	return nil
}

// FreePort asks the kernel for a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(name string, cmd *exec.Cmd, logPath string) (*Server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// The server dies with us, even when a test binary is killed.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &Server{Name: name, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); logf.Close() }()
	return s, nil
}

// waitTCP waits until addr accepts connections or the server exits.
func (s *Server) waitTCP(ctx context.Context, logPath string) error {
	for {
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-s.done:
			s.done <- err
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("%s exited before it was ready: %v\n%s", s.Name, err, out)
		case <-ctx.Done():
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("%s not ready: %w\n%s", s.Name, ctx.Err(), out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// StartRedis starts redis-server without persistence.
func StartRedis(ctx context.Context) (*Server, error) { return StartRedisWith(ctx, RedisConfig{}) }

// RedisConfig says how to start a Redis server.
type RedisConfig struct {
	Port       int    // 0: a free port
	Dir        string // "": a new temporary directory
	AppendOnly bool   // persist every write to an append-only file
}

// StartRedisWith starts redis-server as c says. A server started again
// with the port and directory of a stopped one takes its place, and with
// AppendOnly reloads its data.
func StartRedisWith(ctx context.Context, c RedisConfig) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server: %w (apt-get install -y redis-server)", ErrMissing)
	}
	dir := c.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ticketfair-redis-"); err != nil {
			return nil, err
		}
	}
	port := c.Port
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	aof := "no"
	if c.AppendOnly {
		aof = "yes"
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", aof, "--appendfsync", "everysec", "--dir", dir, "--databases", "4096",
		"--maxclients", "20000", "--protected-mode", "yes")
	logPath := filepath.Join(dir, "redis.log")
	if c.Dir != "" {
		logPath = filepath.Join(dir, fmt.Sprintf("redis-%d.log", time.Now().UnixNano()))
	}
	s, err := start("redis", cmd, logPath)
	if err != nil {
		return nil, err
	}
	s.Dir, s.Port = dir, port
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = "redis://" + s.Addr + "/0"
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.waitTCP(wctx, logPath); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// Wait waits until the server's process has exited.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case err := <-s.done:
		s.done <- err
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PostgresBinDir finds the PostgreSQL 15 server binaries.
func PostgresBinDir() (string, error) {
	for _, d := range []string{os.Getenv("TICKETFAIR_PG_BINDIR"), "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("postgres: %w (apt-get install -y postgresql-15)", ErrMissing)
}

// StartPostgres initialises a cluster in a temporary directory and starts
// postgres on a free port, trusting local connections. As root it runs the
// server as the postgres user, because initdb refuses to run as root.
func StartPostgres(ctx context.Context) (*Server, error) {
	return StartPostgresWith(ctx, "", "")
}

// postgresDir finds the server binaries and makes a server's directory,
// owned by the user the server runs as.
func postgresDir(prefix string) (bindir, dir string, cred *syscall.Credential, err error) {
	if bindir, err = PostgresBinDir(); err != nil {
		return "", "", nil, err
	}
	if dir, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", nil, err
	}
	if cred, err = postgresCredential(dir); err != nil {
		return "", "", nil, err
	}
	return bindir, dir, cred, nil
}

// StartPostgresWith is StartPostgres, serving TLS (besides plain
// connections) with the PEM certificate and key when given, and with extra
// server settings ("name=value").
func StartPostgresWith(ctx context.Context, certPEM, keyPEM string, settings ...string) (*Server, error) {
	bindir, dir, cred, err := postgresDir("ticketfair-pg-")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bindir, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	var args []string
	if certPEM != "" {
		// The server reads its key only when its owner alone may.
		for name, body := range map[string]string{"server.crt": certPEM, "server.key": keyPEM} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				return nil, err
			}
			if cred != nil {
				if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
					return nil, err
				}
			}
		}
		args = append(args, "-c", "ssl=on", "-c", "ssl_cert_file="+filepath.Join(dir, "server.crt"),
			"-c", "ssl_key_file="+filepath.Join(dir, "server.key"))
	}
	for _, kv := range settings {
		args = append(args, "-c", kv)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return startPostgres(ctx, bindir, dir, port, cred, args)
}

// RestartPostgres restarts s as `pg_ctl restart -m fast` does: a fast
// shutdown (sessions are disconnected, open transactions roll back, a
// checkpoint is written), then the same cluster again on the same port.
func (s *Server) RestartPostgres(ctx context.Context) (*Server, error) {
	stop := exec.CommandContext(ctx, filepath.Join(s.bindir, "pg_ctl"), "stop", "-D", s.data, "-m", "fast", "-w", "-t", "60")
	stop.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := stop.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_ctl stop -m fast: %w\n%s", err, out)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Wait(wctx); err != nil {
		return nil, fmt.Errorf("postgres did not exit after pg_ctl stop: %w", err)
	}
	n, err := startPostgres(ctx, s.bindir, s.Dir, s.Port, s.cred, s.pgArgs)
	if n != nil {
		n.Keep = s.Keep
	}
	return n, err
}

func startPostgres(ctx context.Context, bindir, dir string, port int, cred *syscall.Credential, args []string) (*Server, error) {
	data := filepath.Join(dir, "data")
	cmd := exec.Command(filepath.Join(bindir, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "shared_buffers=256MB")
	cmd.Args = append(cmd.Args, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	logPath := filepath.Join(dir, "postgres.log")
	if _, err := os.Stat(logPath); err == nil {
		logPath = filepath.Join(dir, fmt.Sprintf("postgres-%d.log", time.Now().UnixNano()))
	}
	s, err := start("postgres", cmd, logPath)
	if err != nil {
		return nil, err
	}
	s.Dir, s.Port, s.bindir, s.data, s.cred, s.pgArgs = dir, port, bindir, data, cred, args
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", s.Addr)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := s.waitTCP(wctx, logPath); err != nil {
		_ = s.Stop()
		return nil, err
	}
	// The port opens before recovery ends ("the database system is starting up").
	for {
		conn, err := pgx.Connect(wctx, s.URL)
		if err == nil {
			conn.Close(wctx)
			return s, nil
		}
		select {
		case <-wctx.Done():
			_ = s.Stop()
			return nil, fmt.Errorf("postgres not ready: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// postgresCredential returns the identity to run PostgreSQL as, and hands
// dir to it. Nil means the current user.
func postgresCredential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres user (apt-get install -y postgresql-15): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Terminate stops a process as the kubelet or a service manager does:
// SIGTERM, up to grace to exit (done yields once it has), then SIGKILL. It
// reports whether the process exited within the grace period.
func Terminate[T any](p *os.Process, done <-chan T, grace time.Duration) bool {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return true
	case <-time.After(grace):
		_ = p.Kill()
		<-done
		return false
	}
}

// Kill stops the server at once with SIGKILL, as a crashed machine would,
// keeping its directory (Stop removes it).
func (s *Server) Kill() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	err := <-s.done
	s.done <- err
}

// DataDir is a PostgreSQL server's data directory.
func (s *Server) DataDir() string { return filepath.Join(s.Dir, "data") }

// StartPostgresStandby clones primary with pg_basebackup and starts it as a
// streaming replica (standby.signal, primary_conninfo with the application
// name "standby") on a free port.
func StartPostgresStandby(ctx context.Context, primary *Server) (*Server, error) {
	bindir, dir, cred, err := postgresDir("ticketfair-pg-standby-")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	host, port, _ := net.SplitHostPort(primary.Addr)
	bb := exec.CommandContext(ctx, filepath.Join(bindir, "pg_basebackup"), "-h", host, "-p", port, "-U", "postgres",
		"-D", data, "-R", "-X", "stream", "-d", "application_name=standby")
	bb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := bb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	sport, err := FreePort()
	if err != nil {
		return nil, err
	}
	// A standby needs at least the primary's max_connections.
	cmd := exec.Command(filepath.Join(bindir, "postgres"), "-D", data, "-p", strconv.Itoa(sport),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "max_connections=400", "-c", "shared_buffers=256MB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	logPath := filepath.Join(dir, "postgres.log")
	s, err := start("postgres-standby", cmd, logPath)
	if err != nil {
		return nil, err
	}
	s.Dir = dir
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sport))
	s.URL = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", s.Addr)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := s.waitTCP(wctx, logPath); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// Promote makes a standby the primary (pg_ctl promote, waiting until it
// accepts writes).
func (s *Server) Promote(ctx context.Context) error {
	bindir, err := PostgresBinDir()
	if err != nil {
		return err
	}
	cred, err := postgresCredential(s.Dir)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bindir, "pg_ctl"), "promote", "-w", "-D", s.DataDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl promote: %w\n%s", err, out)
	}
	return nil
}

// Pid is the server's process id (0 when it is not running).
func (s *Server) Pid() int {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
