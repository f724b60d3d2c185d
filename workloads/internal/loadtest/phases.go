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
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

// DefaultMemberTier is the tier claim's value a member's identity token
// carries (Config.MemberTier).
const DefaultMemberTier = "member"

// AdmissionSeen is one person's admission in a sale with phases, as the
// crowd saw it.
type AdmissionSeen struct {
	Customer string `json:"customer"`
	Queue    string `json:"queue"`
	// AdmittedAt is when the crowd learned of the admission: never before
	// it, so one before the queue's opening proves an early admission.
	AdmittedAt time.Time `json:"admittedAt"`
	// CodeHash is the access code the person joined with, as the queue
	// stores it (accesscode.Hash).
	CodeHash string `json:"codeHash,omitempty"`
}

// CodeJoin is the outcome of a code holder's join: placed, or refused with
// the queue's reason.
type CodeJoin struct {
	CodeHash string `json:"codeHash"`
	Customer string `json:"customer"`
	Placed   bool   `json:"placed"`
	Refusal  string `json:"refusal,omitempty"`
}

// QueueCounts are the crowd's figures of one queue of a sale with phases.
type QueueCounts struct {
	Joined       int64 `json:"joined"`
	Admitted     int64 `json:"admitted"`
	SeatsPaidFor int64 `json:"seatsPaidFor"`
}

// EarlyAdmission is a read of the public state that showed admissions
// from a queue before its opening: the state is older than the read, so
// they were made before it.
type EarlyAdmission struct {
	Queue    string    `json:"queue"`
	OpensAt  time.Time `json:"opensAt"`
	Admitted int64     `json:"admitted"`
	SeenAt   time.Time `json:"seenAt"`
}

// QueueSample is one read of the public state of a sale with phases: the
// phase open then and each queue's figures.
type QueueSample struct {
	At     time.Time        `json:"at"`
	Phase  string           `json:"phase"`
	Queues []QueueSampleRow `json:"queues"`
}

// QueueSampleRow is one queue's figures in a QueueSample.
type QueueSampleRow struct {
	Name     string `json:"name"`
	Open     bool   `json:"open"`
	Weight   int    `json:"weight"`
	Waiting  int64  `json:"waiting"`
	Admitted int64  `json:"admitted"`
}

// ReadCodesCSV reads the codes of a CSV with a "code" column, as
// `ticketfair access-codes` writes it.
func ReadCodesCSV(r io.Reader) ([]string, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("access codes: %w", err)
	}
	if len(rows) == 0 {
		return nil, errors.New("access codes: empty file")
	}
	col := slices.Index(rows[0], "code")
	if col < 0 {
		return nil, errors.New(`access codes: no "code" column`)
	}
	out := make([]string, 0, len(rows)-1)
	for _, row := range rows[1:] {
		if col < len(row) && row[col] != "" {
			out = append(out, row[col])
		}
	}
	return out, nil
}

// IssueCodes issues n codes of phase of eventID (serials 1..n) with the
// sale's codes key.
func IssueCodes(key []byte, eventID int64, phase string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = accesscode.Issue(key, eventID, phase, int64(i+1))
	}
	return out
}

// codeHashes are the codes' hashes as the queue stores them: the codes
// handed out are issued in their canonical spelling, which Hash hashes.
func codeHashes(codes []string) []string {
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = accesscode.Hash(accesscode.Code{Text: strings.TrimSpace(c)})
	}
	return out
}

// phaseRecord is the crowd's record of a sale with phases.
type phaseRecord struct {
	mu     sync.Mutex
	names  []string // queue index -> name; index 0 is "" (a sale without phases)
	index  map[string]uint8
	counts []*queueCounters

	admissions []AdmissionSeen
	codeJoins  []CodeJoin
	early      map[string]EarlyAdmission
	timeline   []QueueSample
}

type queueCounters struct{ joined, admitted, seats atomic.Int64 }

// maxQueues bounds the queues the crowd tells apart: the rest count as
// the last one.
const maxQueues = 64

// queueIndex interns name.
func (pr *phaseRecord) queueIndex(name string) uint8 {
	if name == "" {
		return 0
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.index == nil {
		pr.index = map[string]uint8{}
		pr.names = []string{""}
		pr.counts = []*queueCounters{{}}
	}
	if i, ok := pr.index[name]; ok {
		return i
	}
	if len(pr.names) >= maxQueues {
		return uint8(len(pr.names) - 1)
	}
	i := uint8(len(pr.names))
	pr.index[name] = i
	pr.names = append(pr.names, name)
	pr.counts = append(pr.counts, &queueCounters{})
	return i
}

func (pr *phaseRecord) name(i uint8) string {
	if i == 0 {
		return ""
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.names[i]
}

func (pr *phaseRecord) counters(i uint8) *queueCounters {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.counts[i]
}

// notePlaced notes c's place in the queue the join's answer names,
// counting a first join.
func (cr *crowd) notePlaced(c *customer, queue string, first bool) {
	c.qi = cr.phases.queueIndex(queue)
	if c.qi != 0 && first {
		cr.phases.counters(c.qi).joined.Add(1)
	}
}

// noteAdmitted records c's admission, in a sale with phases.
func (cr *crowd) noteAdmitted(c *customer) {
	if c.qi == 0 {
		return
	}
	cr.phases.counters(c.qi).admitted.Add(1)
	a := AdmissionSeen{Customer: c.name(), Queue: cr.phases.name(c.qi), AdmittedAt: time.Now()}
	if c.code > 0 {
		a.CodeHash = cr.codeHashes[c.code-1]
	}
	cr.phases.mu.Lock()
	cr.phases.admissions = append(cr.phases.admissions, a)
	cr.phases.mu.Unlock()
}

// notePaid counts the seats c paid for in their queue.
func (cr *crowd) notePaid(c *customer, seats int64) {
	if c.qi != 0 {
		cr.phases.counters(c.qi).seats.Add(seats)
	}
}

// noteCodeJoin records the outcome of a code holder's join.
func (cr *crowd) noteCodeJoin(c *customer, placed bool, refusal string) {
	if c.code == 0 {
		return
	}
	j := CodeJoin{CodeHash: cr.codeHashes[c.code-1], Customer: c.name(), Placed: placed, Refusal: refusal}
	cr.phases.mu.Lock()
	cr.phases.codeJoins = append(cr.phases.codeJoins, j)
	cr.phases.mu.Unlock()
}

// sample records a read of the public state of a sale with phases, when
// its figures changed since the last: the audit compares the admissions
// made between two reads while queues had people waiting with the weights.
func (cr *crowd) sample(st queueapi.State, readAt time.Time) {
	if len(st.Queues) == 0 {
		return
	}
	s := QueueSample{At: readAt, Phase: st.Phase, Queues: make([]QueueSampleRow, len(st.Queues))}
	for i, q := range st.Queues {
		s.Queues[i] = QueueSampleRow{Name: q.Name, Open: q.Open, Weight: q.Weight, Waiting: q.Waiting, Admitted: q.Admitted}
	}
	pr := &cr.phases
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if n := len(pr.timeline); n > 0 && pr.timeline[n-1].Phase == s.Phase && slices.Equal(pr.timeline[n-1].Queues, s.Queues) {
		return
	}
	pr.timeline = append(pr.timeline, s)
}

// watchEarly notes queues the public state shows admitting before their
// opening (the state's opensAt is the queue's own).
func (cr *crowd) watchEarly(st queueapi.State, readAt time.Time) {
	for _, q := range st.Queues {
		if q.OpensAt == nil || q.Admitted == 0 || !readAt.Before(*q.OpensAt) {
			continue
		}
		cr.phases.mu.Lock()
		if cr.phases.early == nil {
			cr.phases.early = map[string]EarlyAdmission{}
		}
		if e, ok := cr.phases.early[q.Name]; !ok || q.Admitted > e.Admitted {
			cr.phases.early[q.Name] = EarlyAdmission{Queue: q.Name, OpensAt: *q.OpensAt, Admitted: q.Admitted, SeenAt: readAt}
		}
		cr.phases.mu.Unlock()
	}
}

// phaseResult fills res's records of a sale with phases.
func (cr *crowd) phaseResult(res *Result) {
	pr := &cr.phases
	pr.mu.Lock()
	defer pr.mu.Unlock()
	res.Admissions = pr.admissions
	sort.Slice(res.Admissions, func(i, j int) bool { return res.Admissions[i].AdmittedAt.Before(res.Admissions[j].AdmittedAt) })
	res.CodeJoins = pr.codeJoins
	res.QueueTimeline = pr.timeline
	for i, n := range pr.names {
		if i == 0 {
			continue
		}
		if res.Queues == nil {
			res.Queues = map[string]QueueCounts{}
		}
		c := pr.counts[i]
		res.Queues[n] = QueueCounts{Joined: c.joined.Load(), Admitted: c.admitted.Load(), SeatsPaidFor: c.seats.Load()}
	}
	for _, e := range pr.early {
		res.EarlyAdmissions = append(res.EarlyAdmissions, e)
	}
	sort.Slice(res.EarlyAdmissions, func(i, j int) bool { return res.EarlyAdmissions[i].Queue < res.EarlyAdmissions[j].Queue })
}

// view is the part of the public state c's page reads: their queue's
// figures in a sale with phases, the whole state without.
func (cr *crowd) view(st queueapi.State, c *customer) queueapi.State {
	if c.qi == 0 || len(st.Queues) == 0 {
		return st
	}
	name := cr.phases.name(c.qi)
	for _, q := range st.Queues {
		if q.Name == name {
			return queueView(st, q)
		}
	}
	return st
}

// queueView is q's figures in the shape of the whole state.
func queueView(st queueapi.State, q queueapi.QueueState) queueapi.State {
	v := queueapi.State{Status: st.Status, SalesOpen: q.Open, SalesOpenAt: q.OpensAt, Paused: st.Paused, SoldOut: st.SoldOut,
		Watermark: q.Watermark, Waiting: q.Waiting, AdmissionRate: q.AdmissionRate, Samples: q.Samples}
	return v
}

// phaseNotOpen is the opening a 403 phase_not_open names, if r is one.
func phaseNotOpen(r result) (time.Time, bool) {
	if r.status != 403 {
		return time.Time{}, false
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			OpensAt string `json:"opensAt"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body, &e) != nil || e.Error.Code != "phase_not_open" {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, e.Error.OpensAt)
	return at, err == nil
}

// errorCode is the code of an error answer ("" if none).
func errorCode(r result) string {
	var e queueapi.ErrorBody
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}
