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

// Package subcmd is the command line of the ticketfair binaries: the first
// argument picks a subcommand, which parses its own flags. The service
// binary (workloads/cmd/ticketfair) and the development one
// (workloads/cmd/ticketfair-dev) share it.
package subcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sort"
	"sync"
	"syscall"
)

// Set is the subcommands of one binary.
type Set struct {
	// Name is the binary's name in messages.
	Name string
	// Footer ends the usage text.
	Footer   string
	commands map[string]command
	stderr   io.Writer
}

type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

// New returns an empty Set named name.
func New(name, footer string) *Set {
	return &Set{Name: name, Footer: footer, commands: map[string]command{}, stderr: os.Stderr}
}

// Register adds the subcommand name.
func (s *Set) Register(name, summary string, run func(ctx context.Context, args []string) error) {
	s.commands[name] = command{summary: summary, run: run}
}

// Names are the registered subcommands, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.commands))
	for n := range s.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *Set) usage() {
	fmt.Fprintf(s.stderr, "usage: %s <command> [flags]\n\ncommands:\n", s.Name)
	for _, n := range s.Names() {
		fmt.Fprintf(s.stderr, "  %-10s %s\n", n, s.commands[n].summary)
	}
	if s.Footer != "" {
		fmt.Fprintln(s.stderr, "\n"+s.Footer)
	}
}

// Run runs the subcommand args[0] with the rest of args and returns the
// exit code: 2 for no or an unknown subcommand, 1 when it failed. SIGTERM
// (Kubernetes) and SIGINT (Ctrl-C) cancel its context, which starts a
// graceful shutdown.
func (s *Set) Run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		s.usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := s.commands[args[0]]
	if !ok {
		fmt.Fprintf(s.stderr, "%s: unknown command %q\n\n", s.Name, args[0])
		s.usage()
		return 2
	}
	SetupLogging()
	if path := os.Getenv(CPUProfileEnv); path != "" {
		stopProfile, err := StartCPUProfile(path)
		if err != nil {
			slog.Error(s.Name+" "+args[0]+": "+CPUProfileEnv, "err", err)
			return 1
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := cmd.run(ctx, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		slog.Error(s.Name+" "+args[0]+" failed", "err", err)
		return 1
	}
	return 0
}

// CPUProfileEnv names a file to write a CPU profile of the whole command
// to (for go tool pprof), from its start until it returns, a service
// after its graceful shutdown. Unset, nothing is profiled.
const CPUProfileEnv = "TICKETFAIR_CPU_PROFILE"

// StartCPUProfile profiles this process into the file path until the
// function it returns is called (at most once has effect).
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return sync.OnceFunc(func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			slog.Error("closing the CPU profile", "path", path, "err", err)
		}
	}), nil
}

// SetupLogging logs JSON to stderr at TICKETFAIR_LOG_LEVEL (default info);
// TICKETFAIR_LOG_FORMAT=text gives human-readable lines.
func SetupLogging() {
	var level slog.Level
	if err := level.UnmarshalText([]byte(os.Getenv("TICKETFAIR_LOG_LEVEL"))); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(os.Stderr, opts)
	if os.Getenv("TICKETFAIR_LOG_FORMAT") == "text" {
		h = slog.NewTextHandler(os.Stderr, opts)
	}
	slog.SetDefault(slog.New(h))
}
