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
	"strings"
	"testing"
)

func TestCategory(t *testing.T) {
	for _, c := range []struct {
		stack []string // leaf first
		want  string
	}{
		{[]string{"runtime.memclrNoHeapPointers", "runtime.mallocgc", "encoding/json.Marshal", "net/http.(*conn).serve"}, catGC},
		{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, catGC},
		{[]string{"runtime.futex", "runtime.findRunnable", "runtime.schedule", "runtime.mcall"}, catScheduler},
		{[]string{"internal/runtime/syscall/linux.Syscall6", "syscall.write", "internal/poll.(*FD).Write", "net/http.(*conn).serve"}, catSyscalls},
		// The innermost frame of a known package names the time.
		{[]string{"runtime.memmove", "strconv.AppendInt", "encoding/json.(*encodeState).marshal", "github.com/ticketfair/ticketfair/workloads/internal/queue.(*service).join", "net/http.(*conn).serve"}, "JSON"},
		{[]string{"github.com/redis/go-redis/v9/internal/proto.(*Reader).ReadReply", "github.com/ticketfair/ticketfair/workloads/internal/queue.(*store).joinMany"}, "Redis client"},
		{[]string{"crypto/internal/fips140/edwards25519/field.feMul", "crypto/ed25519.Sign", "net/http.(*conn).serve"}, "crypto (tokens, signatures)"},
		{[]string{"sort.insertionSort", "github.com/ticketfair/ticketfair/workloads/internal/loadtest.taskHeap.Less", "runtime.main"}, "ticketfair code"},
		{[]string{"sort.insertionSort", "main.main", "runtime.main"}, catOther},
		{nil, catOther},
	} {
		if got := category(c.stack); got != c.want {
			t.Errorf("category(%v) = %q, want %q", c.stack, got, c.want)
		}
	}
}

// checkWhereCPU checks the breakdown a sale with CPU profiles reports.
func checkWhereCPU(t *testing.T, w *WhereCPU) {
	t.Helper()
	if w == nil {
		t.Fatal("no CPU breakdown")
	}
	procs := map[string]CPUBreakdown{}
	for _, p := range w.Processes {
		procs[p.Process] = p
		var sum float64
		for _, v := range p.Share {
			sum += v
		}
		if p.Error != "" || p.Seconds <= 0 || sum < 0.999 || sum > 1.001 || len(p.Top) == 0 {
			t.Errorf("%s: %+v (shares add up to %.3f)", p.Process, p, sum)
		}
	}
	for _, n := range []string{selfProfile, "queue", "booking", "relay", "tickets"} {
		if _, ok := procs[n]; !ok {
			t.Errorf("no profile of %s: %+v", n, w.Processes)
		}
	}
	if procs["queue"].Share["Redis client"] <= 0 || procs["booking"].Share["PostgreSQL client"] <= 0 {
		t.Errorf("queue's time in the Redis client %.3f, booking's in the PostgreSQL client %.3f",
			procs["queue"].Share["Redis client"], procs["booking"].Share["PostgreSQL client"])
	}
	has := func(ts []StatementTime, part string) bool {
		for _, st := range ts {
			if strings.Contains(st.Statement, part) && st.Calls > 0 && st.Seconds > 0 {
				return true
			}
		}
		return false
	}
	if w.RedisError != "" || !has(w.Redis, "evalsha") {
		t.Errorf("Redis commands: %+v %s", w.Redis, w.RedisError)
	}
	if w.PostgresError != "" || !has(w.Postgres, "hold_seats") {
		t.Errorf("PostgreSQL statements: %+v %s", w.Postgres, w.PostgresError)
	}
}
