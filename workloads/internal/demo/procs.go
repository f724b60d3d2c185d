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

package demo

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// proc is one ticketfair workload running as a child process.
type proc struct {
	name string
	cmd  *exec.Cmd
	url  string
	log  string
	done chan error

	binary, dir, sub string
	env              []string
	port             int
}

// envOf renders a workload's configuration as the environment of its
// process, the same variables the operator puts into a pod.
func envOf(cfg any) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TICKETFAIR_LOG_FORMAT=json"}
	for _, v := range config.Render(cfg) {
		env = append(env, v.Name+"="+v.Value)
	}
	return env
}

// startProc runs `binary <sub>` with env, logging to dir/<name>.log.
func startProc(binary, dir, name, sub string, env []string, port int) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	// Appends: a restarted process continues its predecessor's log.
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, sub)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan error, 1), binary: binary, dir: dir, sub: sub, env: env, port: port}
	if port > 0 {
		p.url = "http://127.0.0.1:" + strconv.Itoa(port)
	}
	go func() { p.done <- cmd.Wait(); f.Close() }()
	return p, nil
}

// waitReady polls /readyz until it answers 200, the process dies or ctx ends.
func (p *proc) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(p.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited: %v; last log lines:\n%s", p.name, err, tail(p.log, 15))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w; last log lines:\n%s", p.name, ctx.Err(), tail(p.log, 15))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// wait runs a process to completion (migrate).
func (p *proc) wait(ctx context.Context) error {
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("%s failed: %w; last log lines:\n%s", p.name, err, tail(p.log, 15))
		}
		return nil
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		return ctx.Err()
	}
}

// stop sends SIGTERM and waits for a graceful exit; a process that has
// exited is left as it is, so stop may be called again.
func (p *proc) stop() {
	if p.cmd.Process == nil || p.exited() {
		return
	}
	localsvc.Terminate(p.cmd.Process, p.done, 15*time.Second)
	p.done <- nil
}

// kill SIGKILLs the process, as the OOM killer or a lost node does, and
// waits for it to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
}

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// again starts the same workload anew, with the same environment and port.
func (p *proc) again() (*proc, error) {
	return startProc(p.binary, p.dir, p.name, p.sub, p.env, p.port)
}

// peakRSS is the process's peak resident memory (VmHWM) in bytes.
func (p *proc) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fields := strings.Fields(v)
			if len(fields) > 0 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
