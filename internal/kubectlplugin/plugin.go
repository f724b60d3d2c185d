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

// Package kubectlplugin is kubectl-ticketfair, the kubectl plugin that
// shows and steers a sale through its TicketEvent: status, pause, resume,
// open-now, gate-credential. It reads and merge-patches the TicketEvent
// only, as field manager kubectl-ticketfair (gate-credential also reads the
// Secret holding the gate secret), and never talks to the sale's pods.
package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
)

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1 // the command failed: not found, forbidden, refused, unreachable
	ExitUsage = 2 // the command line is wrong: unknown command or flag, missing NAME
)

// usageError is a mistake in the command line of the command at path
// (e.g. "kubectl ticketfair pause"), whose --help is pointed to.
type usageError struct {
	error
	path string
}

// Run runs the plugin with args (without the program name) and returns its
// exit code. Output goes to stdout, errors and API warnings to stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	p := &plugin{kube: newKube(stderr), out: stdout, now: time.Now}
	root := p.command()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ran := false
	root.PersistentPreRun = func(*cobra.Command, []string) { ran = true }
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "error:", err)
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(stderr, "See '%s --help'.\n", usage.path)
		return ExitUsage
	}
	if !ran { // cobra rejected the command line (unknown command or flag) before any run
		fmt.Fprintf(stderr, "See '%s --help'.\n", root.CommandPath())
		return ExitUsage
	}
	return ExitError
}

// plugin is what every command shares.
type plugin struct {
	kube *kube
	out  io.Writer
	now  func() time.Time
}

// command is the command tree. Each command is built by its own function
// from the shared plugin, so a group such as "codes issue" is one more
// AddCommand of a parent holding its subcommands.
func (p *plugin) command() *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-ticketfair",
		Short: "Show and steer ticketfair sales (TicketEvents)",
		Long: `kubectl ticketfair shows how a sale stands and steers its waiting room
through the TicketEvent: it reads and patches tickets.ticketfair.io/v1alpha1
TicketEvents and nothing else, but for gate-credential, which reads the
Secret holding the sale's gate secret. The operator carries changes to the
running services within seconds.`,
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ticketfair"},
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err, c.CommandPath()}
	})
	p.kube.bindFlags(root.PersistentFlags())
	root.AddCommand(
		p.statusCommand(),
		p.pauseCommand(true),
		p.pauseCommand(false),
		p.openNowCommand(),
		p.gateCredentialCommand(),
	)
	return root
}

// oneName accepts exactly one argument, the TicketEvent's name.
func oneName(c *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Errorf("%s takes exactly one TicketEvent NAME, got %d arguments", c.Name(), len(args)), c.CommandPath()}
	}
	return nil
}
