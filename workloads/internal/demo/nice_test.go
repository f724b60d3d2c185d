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
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// threadNices reads the niceness of every thread of this process
// (/proc/self/task/*/stat, field 19).
func threadNices(t *testing.T) map[string]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		// The command name may hold spaces: the fields start after its ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		n, err := strconv.Atoi(fields[16])
		if err != nil {
			t.Fatalf("stat of thread %s: %q", task.Name(), b)
		}
		out[task.Name()] = n
	}
	return out
}

// TestYieldCPU runs in a child process, whose niceness is its own: every
// thread, and a thread the runtime starts afterwards, runs at the given
// niceness.
func TestYieldCPU(t *testing.T) {
	if os.Getenv("TICKETFAIR_TEST_YIELD_CPU") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestYieldCPU$", "-test.v")
		cmd.Env = append(os.Environ(), "TICKETFAIR_TEST_YIELD_CPU=1")
		out, err := cmd.CombinedOutput()
		if err == nil && strings.Contains(string(out), "--- SKIP: TestYieldCPU") {
			t.Skipf("child:\n%s", out)
		}
		if err != nil || !strings.Contains(string(out), "--- PASS: TestYieldCPU") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	// The parent may already run niced (a sale in the same test binary
	// yields the CPU to its servers): the child starts where it does, and
	// asks for two steps more.
	start := -1
	for tid, n := range threadNices(t) {
		if start >= 0 && n != start {
			t.Fatalf("thread %s starts at nice %d, another at %d", tid, n, start)
		}
		start = n
	}
	want := min(start+2, 19)
	if want == start {
		t.Skipf("the test binary already runs at nice %d", start)
	}
	if err := yieldCPU(want); err != nil {
		t.Fatal(err)
	}
	// Goroutines locked to their threads while others block force the
	// runtime to start new threads.
	var wg sync.WaitGroup
	release := make(chan struct{})
	before := len(threadNices(t))
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			<-release
		}()
	}
	for len(threadNices(t)) < before+4 {
		runtime.Gosched()
	}
	nices := threadNices(t)
	close(release)
	wg.Wait()
	for tid, n := range nices {
		if n != want {
			t.Errorf("thread %s at nice %d, want %d", tid, n, want)
		}
	}
	// Asking for less never lowers a thread's niceness.
	if err := yieldCPU(want - 1); err != nil {
		t.Fatal(err)
	}
	for tid, n := range threadNices(t) {
		if n != want {
			t.Errorf("after asking for nice %d, thread %s at nice %d, want %d", want-1, tid, n, want)
		}
	}
	if len(nices) <= before {
		t.Fatalf("no new thread was started (%d threads before, %d after)", before, len(nices))
	}
}
