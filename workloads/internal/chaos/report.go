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

package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// Failed reports whether a request's status is a failure the crowd felt:
// a transport error, a 5xx, or, for a poll or a hold, a place or session
// its store forgot (404, 403).
func Failed(endpoint string, status int) bool {
	switch {
	case status == 0 || status >= 500:
		return true
	case endpoint == "poll" && status == 404, endpoint == "hold" && status == 403:
		return true
	}
	return false
}

// Recorder counts requests per quarter second (a slot): the ones that
// succeeded, and the failed ones by endpoint and status.
type Recorder struct {
	mu      sync.Mutex
	seconds map[int64]*second // by slot
}

// slot is the recorder's resolution.
const slot = 250 * time.Millisecond

func slotOf(t time.Time) int64 { return t.UnixNano() / int64(slot) }

type second struct {
	ok     int
	failed map[string]int // "<endpoint> <status>"
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{seconds: map[int64]*second{}} }

// Observe is loadtest.Config.Observe.
func (r *Recorder) Observe(endpoint string, status int, start time.Time) {
	fail := Failed(endpoint, status)
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seconds[slotOf(start)]
	if s == nil {
		s = &second{failed: map[string]int{}}
		r.seconds[slotOf(start)] = s
	}
	if fail {
		s.failed[fmt.Sprintf("%s %d", endpoint, status)]++
	} else {
		s.ok++
	}
}

// WindowReport is one fault's window in the audit.
type WindowReport struct {
	Fault              string         `json:"fault"`
	Target             string         `json:"target,omitempty"`
	AtSeconds          float64        `json:"atSeconds"`          // after sales open
	Seconds            float64        `json:"seconds"`            // the fault's own length
	Failed             map[string]int `json:"failed"`             // "<endpoint> <status>" -> requests
	UnavailableSeconds float64        `json:"unavailableSeconds"` // quarter seconds with a failed request`
	Note               string         `json:"note,omitempty"`
	Error              string         `json:"error,omitempty"`
}

// recoveryTail is how long after a fault ends its failures still count
// as its own, unless the next one starts: clients reconnect, pools refill,
// and after a Redis restart people find out they lost their place at
// their next poll, up to 15 s later.
const recoveryTail = 15 * time.Second

// Windows attributes the recorded seconds to the faults' windows: each
// window runs from the fault's start to the start of the next fault, at
// most recoveryTail after its end. Seconds before and after all faults
// are reported as the last entry, "outside faults".
func (r *Recorder) Windows(open time.Time, ws []Window) []WindowReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	sorted := append([]Window(nil), ws...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	claimed := map[int64]bool{}
	var out []WindowReport
	for i, w := range sorted {
		rep := WindowReport{Fault: w.Fault.String(), Target: w.Target, Failed: map[string]int{}, Note: w.Note, Error: w.Err}
		if w.Start.IsZero() {
			out = append(out, rep)
			continue
		}
		rep.AtSeconds = w.Start.Sub(open).Seconds()
		rep.Seconds = w.End.Sub(w.Start).Seconds()
		end := w.End.Add(recoveryTail)
		for _, n := range sorted[i+1:] {
			if !n.Start.IsZero() && n.Start.After(w.Start) && n.Start.Before(end) {
				end = n.Start
				break
			}
		}
		for sec := slotOf(w.Start); sec < slotOf(end); sec++ {
			if claimed[sec] {
				continue
			}
			claimed[sec] = true
			rep.UnavailableSeconds += r.add(sec, rep.Failed)
		}
		out = append(out, rep)
	}
	rest := WindowReport{Fault: "outside faults", Failed: map[string]int{}}
	for sec := range r.seconds {
		if !claimed[sec] {
			rest.UnavailableSeconds += r.add(sec, rest.Failed)
		}
	}
	return append(out, rest)
}

// add sums a slot's failures into failed and returns the slot's length in
// seconds when any request in it failed.
func (r *Recorder) add(sec int64, failed map[string]int) float64 {
	s := r.seconds[sec]
	if s == nil || len(s.failed) == 0 {
		return 0
	}
	for k, v := range s.failed {
		failed[k] += v
	}
	return slot.Seconds()
}

// PrintWindows writes the windows as a table.
func PrintWindows(w io.Writer, reps []WindowReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nFAULT\tHIT\tAT s\tLASTED s\tUNAVAILABLE s\tFAILED REQUESTS\tNOTE\n")
	for _, r := range reps {
		keys := make([]string, 0, len(r.Failed))
		for k := range r.Failed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s×%d", k, r.Failed[k]))
		}
		failed := strings.Join(parts, " ")
		if failed == "" {
			failed = "-"
		}
		note := r.Note
		if r.Error != "" {
			note = strings.TrimSpace(note + " ERROR: " + r.Error)
		}
		fault, _, _ := strings.Cut(strings.Join(strings.Fields(r.Fault)[1:], " "), " for=")
		if r.Fault == "outside faults" {
			fault = r.Fault
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.2f\t%s\t%s\n", fault, r.Target, r.AtSeconds, r.Seconds, r.UnavailableSeconds, failed, note)
	}
	tw.Flush()
}
