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
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/google/pprof/profile"
	"github.com/jackc/pgx/v5"

	"github.com/ticketfair/ticketfair/workloads/internal/subcmd"
)

// Where the CPU goes. With Options.CPUProfiles every Go process of the
// sale writes a CPU profile: the workloads through subcmd.CPUProfileEnv,
// this process (the crowd, the embedded broker and the web edge) itself.
// After the sale the workloads are stopped, so their profiles are whole,
// and the report breaks each profile down by what the time was spent on,
// next to Redis's time per command (INFO commandstats) and PostgreSQL's per
// statement (pg_stat_statements, loaded into the sale's own server).

// selfProfile names this process's profile among the workloads'.
const selfProfile = "demo"

// pgStatStatements is the setting that loads pg_stat_statements into the
// sale's PostgreSQL when CPU profiles are asked for.
const pgStatStatements = "shared_preload_libraries=pg_stat_statements"

// WhereCPU is the breakdown of a sale's CPU profiles.
type WhereCPU struct {
	Dir           string          `json:"dir"`
	Processes     []CPUBreakdown  `json:"processes"`
	Redis         []StatementTime `json:"redis,omitempty"`
	RedisError    string          `json:"redisError,omitempty"`
	Postgres      []StatementTime `json:"postgres,omitempty"`
	PostgresError string          `json:"postgresError,omitempty"`
}

// CPUBreakdown is where one process's sampled CPU time went.
type CPUBreakdown struct {
	Process string  `json:"process"`
	Seconds float64 `json:"seconds"`
	// Share is the fraction of Seconds per category (see category).
	Share map[string]float64 `json:"share"`
	// Top are the functions with the most time of their own.
	Top   []FunctionTime `json:"top"`
	Error string         `json:"error,omitempty"`
}

// FunctionTime is a function's own (flat) share of its process's time.
type FunctionTime struct {
	Function string  `json:"function"`
	Share    float64 `json:"share"`
}

// StatementTime is the time a server spent in one command or statement.
type StatementTime struct {
	Statement string  `json:"statement"`
	Calls     int64   `json:"calls"`
	Seconds   float64 `json:"seconds"`
}

// startSelfProfile profiles this process into dir; the function it
// returns stops the profile (at most once).
func startSelfProfile(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	stop, err := subcmd.StartCPUProfile(filepath.Join(dir, selfProfile+".pprof"))
	if err != nil {
		return nil, fmt.Errorf("profiling this process (is %s set?): %w", subcmd.CPUProfileEnv, err)
	}
	return stop, nil
}

// profileEnv is the variable that makes a workload profile itself.
func (s *sale) profileEnv(name string) []string {
	if s.o.CPUProfiles == "" {
		return nil
	}
	return []string{subcmd.CPUProfileEnv + "=" + filepath.Join(s.o.CPUProfiles, name+".pprof")}
}

// whereCPU stops the workloads and this process's profile, then breaks the
// profiles down, with Redis's time per command since the crowd started and
// PostgreSQL's per statement.
func (s *sale) whereCPU(ctx context.Context, stopSelf func()) *WhereCPU {
	stopSelf()
	w := &WhereCPU{Dir: s.o.CPUProfiles}
	names := []string{selfProfile}
	for n, p := range s.procs {
		p.stop()
		names = append(names, n)
	}
	slices.Sort(names[1:])
	for _, n := range names {
		b, err := breakdown(filepath.Join(s.o.CPUProfiles, n+".pprof"))
		b.Process = n
		if err != nil {
			b.Error = err.Error()
		}
		w.Processes = append(w.Processes, b)
	}
	w.Redis, w.RedisError = s.redisTimes(ctx, s.redisAtStart)
	w.Postgres, w.PostgresError = s.postgresTimes(ctx)
	return w
}

// createStatStatements makes pg_stat_statements readable in the sale's database.
func createStatStatements(ctx context.Context, db string) error {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		return fmt.Errorf("pg_stat_statements: %w", err)
	}
	return nil
}

// redisTimes is the time Redis spent in each command since before.
func (s *sale) redisTimes(ctx context.Context, before redisCounters) ([]StatementTime, string) {
	after, err := s.redisCounters(ctx)
	if err != nil {
		return nil, err.Error()
	}
	var out []StatementTime
	for cmd, usec := range after.usec {
		if d := usec - before.usec[cmd]; d > 0 && cmd != "info" {
			out = append(out, StatementTime{Statement: cmd, Calls: after.calls[cmd] - before.calls[cmd], Seconds: float64(d) / 1e6})
		}
	}
	return top(out, 6), ""
}

// postgresTimes reads pg_stat_statements of the sale's own server, which
// loaded it (a server given by --database-url is not measured).
func (s *sale) postgresTimes(ctx context.Context) ([]StatementTime, string) {
	if s.faults.postgresServer() == nil {
		return nil, "not measured: the PostgreSQL was given by --database-url"
	}
	conn, err := pgx.Connect(ctx, s.db)
	if err != nil {
		return nil, err.Error()
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
SELECT regexp_replace(query, '\s+', ' ', 'g'), calls, (total_exec_time + total_plan_time) / 1000
  FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	if err != nil {
		return nil, err.Error()
	}
	var out []StatementTime
	for rows.Next() {
		var st StatementTime
		if err := rows.Scan(&st.Statement, &st.Calls, &st.Seconds); err != nil {
			return nil, err.Error()
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, err.Error()
	}
	return top(out, 8), ""
}

// top keeps the n with the most time, most first.
func top(ts []StatementTime, n int) []StatementTime {
	slices.SortFunc(ts, func(a, b StatementTime) int { return cmp.Compare(b.Seconds, a.Seconds) })
	return ts[:min(n, len(ts))]
}

// breakdown reads a CPU profile and sums its time by category and by the
// function it was sampled in.
func breakdown(path string) (CPUBreakdown, error) {
	b := CPUBreakdown{Share: map[string]float64{}}
	f, err := os.Open(path)
	if err != nil {
		return b, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return b, fmt.Errorf("%s: %w", path, err)
	}
	cpu := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	if cpu < 0 {
		return b, fmt.Errorf("%s: not a CPU profile", path)
	}
	flat := map[string]float64{}
	var stack []string
	for _, smp := range p.Sample {
		secs := float64(smp.Value[cpu]) / 1e9
		stack = stack[:0]
		// Leaf first; a location's inlined frames come innermost first.
		for _, loc := range smp.Location {
			for _, l := range loc.Line {
				if l.Function != nil {
					stack = append(stack, l.Function.Name)
				}
			}
		}
		b.Seconds += secs
		b.Share[category(stack)] += secs
		if len(stack) > 0 {
			flat[stack[0]] += secs
		}
	}
	if b.Seconds == 0 {
		return b, fmt.Errorf("%s: no samples", path)
	}
	for k, v := range b.Share {
		b.Share[k] = v / b.Seconds
	}
	for fn, v := range flat {
		b.Top = append(b.Top, FunctionTime{Function: shortFunc(fn), Share: v / b.Seconds})
	}
	slices.SortFunc(b.Top, func(x, y FunctionTime) int {
		return cmp.Or(cmp.Compare(y.Share, x.Share), strings.Compare(x.Function, y.Function))
	})
	b.Top = b.Top[:min(4, len(b.Top))]
	return b, nil
}

// The categories a sample's time is put in. GC, the scheduler and system
// calls are told from the whole stack; otherwise the innermost frame of a
// package in domains names it.
const (
	catGC        = "GC and allocation"
	catScheduler = "Go scheduler"
	catSyscalls  = "system calls (network I/O)"
	catOther     = "other"
)

var gcFrames = []string{"runtime.mallocgc", "runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge",
	"runtime.gcAssistAlloc", "runtime.gcStart", "runtime.gcWriteBarrier", "runtime.wbBufFlush", "runtime.gcDrain", "runtime.markroot"}

var syscallFrames = []string{"syscall.", "internal/runtime/syscall.", "runtime/internal/syscall.", "internal/poll."}

var domains = []struct{ prefix, name string }{
	{"crypto/", "crypto (tokens, signatures)"},
	{"golang.org/x/crypto/", "crypto (tokens, signatures)"},
	{"github.com/golang-jwt/", "crypto (tokens, signatures)"},
	{"encoding/json", "JSON"},
	{"compress/", "gzip"},
	{"github.com/redis/go-redis/", "Redis client"},
	{"github.com/jackc/", "PostgreSQL client"},
	{"github.com/segmentio/kafka-go", "Kafka client and broker"},
	{"github.com/twmb/franz-go", "Kafka client and broker"},
	{"github.com/prometheus/", "metrics"},
	{"log/slog.", "logging"},
	{"net/http.", "HTTP"},
	{"net/textproto.", "HTTP"},
	{"net/url.", "HTTP"},
	{"github.com/ticketfair/ticketfair/", "ticketfair code"},
}

// category says what a sample (its stack, leaf first) spent its time on.
func category(stack []string) string {
	hasPrefix := func(prefixes []string) bool {
		return slices.ContainsFunc(stack, func(fn string) bool {
			return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(fn, p) })
		})
	}
	switch {
	case hasPrefix(gcFrames):
		return catGC
	case len(stack) > 0 && strings.HasPrefix(stack[len(stack)-1], "runtime.") &&
		stack[len(stack)-1] != "runtime.main" && stack[len(stack)-1] != "runtime.goexit":
		// Rooted in the runtime, not in a goroutine's function: the
		// scheduler looking for work, sysmon.
		return catScheduler
	case hasPrefix(syscallFrames):
		return catSyscalls
	}
	for _, fn := range stack {
		for _, d := range domains {
			if strings.HasPrefix(fn, d.prefix) {
				return d.name
			}
		}
	}
	return catOther
}

// shortFunc drops a function's import path up to its package's name.
func shortFunc(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// print writes the breakdown: a column per process, a row per category,
// then the busiest functions, Redis's commands and PostgreSQL's statements.
func (w *WhereCPU) print(out io.Writer) {
	fmt.Fprintf(out, "\nWHERE THE CPU GOES (CPU profiles in %s, %s being this process: the crowd, the broker, the edge)\n", w.Dir, selfProfile)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	seconds := map[string]float64{}
	header, sampled := "SHARE OF EACH PROCESS'S CPU", "CPU seconds sampled"
	for _, p := range w.Processes {
		header += "\t" + p.Process
		sampled += fmt.Sprintf("\t%.0f", p.Seconds)
		for c, v := range p.Share {
			seconds[c] += v * p.Seconds
		}
	}
	cats := make([]string, 0, len(seconds))
	for c := range seconds {
		cats = append(cats, c)
	}
	slices.SortFunc(cats, func(a, b string) int { return cmp.Or(cmp.Compare(seconds[b], seconds[a]), strings.Compare(a, b)) })
	fmt.Fprintln(tw, header)
	fmt.Fprintln(tw, sampled)
	for _, c := range cats {
		row := c
		for _, p := range w.Processes {
			row += fmt.Sprintf("\t%.0f%%", 100*p.Share[c])
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nBUSIEST FUNCTIONS (own time, share of the process)")
	for _, p := range w.Processes {
		if p.Error != "" {
			fmt.Fprintf(out, "%-8s %s\n", p.Process, p.Error)
			continue
		}
		var parts []string
		for _, f := range p.Top {
			parts = append(parts, fmt.Sprintf("%s %.1f%%", f.Function, 100*f.Share))
		}
		fmt.Fprintf(out, "%-8s %s\n", p.Process, strings.Join(parts, ", "))
	}
	printTimes(out, "REDIS COMMAND (INFO commandstats; a script's commands count in it and on their own)", w.Redis, w.RedisError)
	printTimes(out, "POSTGRESQL STATEMENT (pg_stat_statements: planning and execution)", w.Postgres, w.PostgresError)
}

func printTimes(out io.Writer, title string, ts []StatementTime, errText string) {
	fmt.Fprintln(out)
	if errText != "" {
		fmt.Fprintf(out, "%s: %s\n", title, errText)
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "SECONDS\tCALLS\tµs/CALL\t%s\n", title)
	for _, t := range ts {
		stmt := t.Statement
		if len(stmt) > 90 {
			stmt = stmt[:87] + "..."
		}
		fmt.Fprintf(tw, "%.1f\t%d\t%.0f\t%s\n", t.Seconds, t.Calls, 1e6*t.Seconds/float64(max(t.Calls, 1)), stmt)
	}
	tw.Flush()
}
