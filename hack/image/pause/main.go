// Command pause is the sandbox process of a pod on the test node: it holds
// the pod's namespaces, reaps orphaned children and exits on SIGINT or
// SIGTERM. containerd's CRI runs it from the image `make image` builds,
// because no registry serves one here.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
