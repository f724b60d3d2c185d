// Command kubectl-ticketfair is the kubectl plugin of ticketfair: with it
// on PATH, `kubectl ticketfair status|pause|resume|open-now` shows and
// steers sales through their TicketEvents (docs/kubectl-plugin.md).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ticketfair/ticketfair/internal/kubectlplugin"
)

func main() {
	// controller-runtime's client logs nothing a user needs; without a
	// logger it would complain on stderr that none was set.
	log.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kubectlplugin.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
