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
	"strconv"
	"strings"

	"github.com/ticketfair/ticketfair/internal/localsvc"
)

// clockTicks is the unit of the CPU times in /proc/<pid>/stat (USER_HZ,
// 100 on Linux).
const clockTicks = 100

// procStat is what the sale reads of /proc/<pid>/stat.
type procStat struct {
	ppid int
	// own is the process's user and system time; waited, that of the
	// children it has waited for (a PostgreSQL backend that ended, say).
	own, waited int64
}

// procTable is every process's stat and children, read once: the CPU a
// sale's processes used is summed over each one's tree (a PostgreSQL server
// is a postmaster and its backends; nginx, a master and its workers).
type procTable struct {
	stat     map[int]procStat
	children map[int][]int
}

func readProcStats() procTable {
	t := procTable{stat: map[int]procStat{}, children: map[int][]int{}}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return t
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name, field 2, is in parentheses and may hold spaces.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 15 { // state ppid … utime stime cutime cstime (fields 3-17)
			continue
		}
		st := procStat{}
		st.ppid, _ = strconv.Atoi(f[1])
		for i, k := range f[11:15] {
			n, _ := strconv.ParseInt(k, 10, 64)
			if i < 2 {
				st.own += n
			} else {
				st.waited += n
			}
		}
		t.stat[pid] = st
		t.children[st.ppid] = append(t.children[st.ppid], pid)
	}
	return t
}

// treeCPUSeconds is the CPU time of pid and its live descendants (and of
// the children they have waited for), in seconds.
func treeCPUSeconds(t procTable, pid int) float64 {
	if pid <= 0 {
		return 0
	}
	var ticks int64
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		ticks += t.stat[p].own + t.stat[p].waited
		todo = append(todo, t.children[p]...)
	}
	return float64(ticks) / clockTicks
}

// ownCPUSeconds is the CPU time of pid alone, in seconds.
func ownCPUSeconds(t procTable, pid int) float64 {
	return float64(t.stat[pid].own) / clockTicks
}

// cpuSeconds is where the sale's CPU went: each workload, the servers it
// started (a restarted one: its last life) and this process, which runs
// the crowd, the embedded broker and the web edge.
func (s *sale) cpuSeconds() map[string]float64 {
	stats := readProcStats()
	out := map[string]float64{"crowd, broker, edge (this process)": ownCPUSeconds(stats, os.Getpid())}
	for n, p := range s.procs {
		out[n] = treeCPUSeconds(stats, p.cmd.Process.Pid)
	}
	for n, srv := range map[string]*localsvc.Server{"redis": s.faults.redisServer(), "postgresql": s.faults.postgresServer(), "nginx": s.cache} {
		if pid := srv.Pid(); pid > 0 {
			out[n] = treeCPUSeconds(stats, pid)
		}
	}
	return out
}
