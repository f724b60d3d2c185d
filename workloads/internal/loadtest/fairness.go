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

package loadtest

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Admission is one entry of the queue's admission log, in admission order.
type Admission struct {
	Customer   string
	ArrivalSeq int64 // order of the customer's first join
	QueueSeq   int64 // place assigned in the queue
	// Cohort is 'p' for a place given before opening (the pre-queue),
	// 'f' for one given after (FIFO), as the queue recorded it; 0 in a log
	// without it, which ComputeFairness splits by arrival instead.
	Cohort byte
	// Queue is the queue of a sale with phases the customer was admitted
	// from; "" for the default queue (its entries name none).
	Queue string
}

// ParseAdmissionLog parses "customer|arrivalSeq|queueSeq|cohort" entries
// (and "customer|arrivalSeq|queueSeq" ones, from a queue before cohorts).
func ParseAdmissionLog(entries []string) ([]Admission, error) {
	out := make([]Admission, 0, len(entries))
	for _, e := range entries {
		// From the right: the fields after the customer are fixed.
		parts := strings.Split(e, "|")
		// A queue other than the default one follows the cohort.
		queue := ""
		if n := len(parts); n >= 5 && (parts[n-2] == "p" || parts[n-2] == "f") {
			queue, parts = parts[n-1], parts[:n-1]
		}
		var cohort byte
		if n := len(parts); n >= 4 && (parts[n-1] == "p" || parts[n-1] == "f") {
			cohort, parts = parts[n-1][0], parts[:n-1]
		}
		n := len(parts)
		if n < 3 {
			return nil, fmt.Errorf("admission log entry %q: want customer|arrivalSeq|queueSeq|cohort", e)
		}
		a, err1 := strconv.ParseInt(parts[n-2], 10, 64)
		q, err2 := strconv.ParseInt(parts[n-1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("admission log entry %q: sequences are not integers", e)
		}
		out = append(out, Admission{Customer: strings.Join(parts[:n-2], "|"), ArrivalSeq: a, QueueSeq: q, Cohort: cohort, Queue: queue})
	}
	return out, nil
}

// Fairness summarises the admission log.
type Fairness struct {
	Admitted int `json:"admitted"`
	// AdmittedTwice counts customers that appear more than once: must be 0.
	AdmittedTwice int `json:"admittedTwice"`
	// After opening: admissions whose arrival order disagrees with their
	// admission order (pairs of consecutive post-opening admissions out of
	// arrival order). Exact FIFO is 0.
	PostOpenAdmitted   int `json:"postOpenAdmitted"`
	PostOpenInversions int `json:"postOpenInversions"`
	// The pre-queue: Spearman rank correlation between arrival order and
	// admission order. A fair shuffle gives a value near 0; FIFO gives 1.
	PreQueueAdmitted    int     `json:"preQueueAdmitted"`
	PreQueueSpearman    float64 `json:"preQueueSpearman"`
	PreQueueSpearmanSet bool    `json:"preQueueSpearmanSet"`
	// Queues counts the admissions per queue of a sale with phases ("" is
	// the default queue); FIFO is measured within each queue.
	Queues map[string]int `json:"queues,omitempty"`
	// PreQueues is the pre-queue's shuffle measured within each queue of a
	// sale with phases: each queue's pre-queue is shuffled alone, and the
	// queues are admitted by weight, one phase after another.
	PreQueues map[string]PreQueueShuffle `json:"preQueues,omitempty"`
}

// PreQueueShuffle is one queue's pre-queue: its admissions and the rank
// correlation of their arrival with their admission order (set from 3).
type PreQueueShuffle struct {
	Admitted int     `json:"admitted"`
	Spearman float64 `json:"spearman"`
}

// ComputeFairness splits the log into the pre-queue and the places given
// after opening, by the cohort the queue recorded (in a log without it, at
// preQueueSize: arrival sequences up to it joined before opening), and
// measures each part.
func ComputeFairness(log []Admission, preQueueSize int64) Fairness {
	f := Fairness{Admitted: len(log)}
	seen := make(map[string]struct{}, len(log))
	var pre []Admission
	lastPost := map[string]int64{}
	perQueue, named := map[string]int{}, false
	for _, a := range log {
		perQueue[a.Queue]++
		named = named || a.Queue != ""
		if _, dup := seen[a.Customer]; dup {
			f.AdmittedTwice++
		}
		seen[a.Customer] = struct{}{}
		if a.Cohort == 'p' || (a.Cohort == 0 && a.ArrivalSeq <= preQueueSize) {
			pre = append(pre, a)
			continue
		}
		f.PostOpenAdmitted++
		last, ok := lastPost[a.Queue]
		if ok && a.ArrivalSeq < last {
			f.PostOpenInversions++
		}
		if !ok || a.ArrivalSeq > last {
			lastPost[a.Queue] = a.ArrivalSeq
		}
	}
	f.PreQueueAdmitted = len(pre)
	f.PreQueueSpearman, f.PreQueueSpearmanSet = preQueueSpearman(pre)
	if named {
		f.Queues = perQueue
		byQueue := map[string][]Admission{}
		for _, a := range pre {
			byQueue[a.Queue] = append(byQueue[a.Queue], a)
		}
		f.PreQueues = map[string]PreQueueShuffle{}
		for q, as := range byQueue {
			rho, _ := preQueueSpearman(as)
			f.PreQueues[q] = PreQueueShuffle{Admitted: len(as), Spearman: rho}
		}
	}
	return f
}

// preQueueSpearman is the rank correlation of pre's arrival order with its
// admission order, set for 3 admissions or more.
func preQueueSpearman(pre []Admission) (float64, bool) {
	if len(pre) < 3 {
		return 0, false
	}
	arrival := make([]float64, len(pre))
	order := make([]float64, len(pre))
	for i, a := range pre {
		arrival[i] = float64(a.ArrivalSeq)
		order[i] = float64(i)
	}
	return Spearman(arrival, order), true
}

// Spearman is the rank correlation of xs and ys (no ties expected).
func Spearman(xs, ys []float64) float64 {
	rx, ry := ranks(xs), ranks(ys)
	return pearson(rx, ry)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for rank, i := range idx {
		r[i] = float64(rank)
	}
	return r
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	if n < 2 {
		return 0
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
