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
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// DefaultCrowdNice is the scheduling niceness the demo's own process (the
// crowd, the broker, the edge) takes once the sale's servers and
// workloads are running. Two million browsers are not on the machine
// that serves them: on a shared 2-core machine the crowd simulator's
// ~40% of the CPU otherwise delays booking and PostgreSQL between every
// round trip, and the hold's tail measures that wait. At nice 5 the crowd
// still gets about a quarter of a contended core's time and all of an
// idle one's.
const DefaultCrowdNice = 5

// yieldCPU raises every thread of this process to at least nice n. Threads the Go
// runtime starts later inherit the value from the thread that starts
// them, and so do processes started after it (a fault plan's restarts,
// which is why a sale with faults does not call it). Two passes catch a
// thread started during the first.
func yieldCPU(n int) error {
	if n == 0 {
		return nil
	}
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("crowd niceness: %w", err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			// Linux's getpriority returns 20 - nice. A thread already
			// nicer (the demo itself started under nice) keeps its value.
			if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-p >= n {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && err != syscall.ESRCH {
				return fmt.Errorf("crowd niceness %d on thread %d: %w", n, tid, err)
			}
		}
	}
	return nil
}
