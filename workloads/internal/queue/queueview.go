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

package queue

import (
	"math"
	"time"

	"github.com/ticketfair/ticketfair/workloads/queueapi"
	"github.com/ticketfair/ticketfair/workloads/queuestats"
)

// queueRate is queue's share of the observed admission rate: the rate
// times its weight over the weights of the open queues with people
// waiting (the admitter deals places so).
func queueRate(snap *Snapshot, set Settings, defs []queueDef, queue string) float64 {
	total, w := 0, 0
	for _, d := range defs {
		if snap.Now.Before(d.OpensAt) {
			continue
		}
		if d.Name == queue {
			w = d.Weight
		}
		if d.Name == queue || snap.queue(d.Name).Waiting > 0 {
			total += d.Weight
		}
	}
	rate := snap.admissionRate(set)
	if total == 0 || w == 0 {
		return rate
	}
	return rate * float64(w) / float64(total)
}

// waitingInQueue is waitingView for a sale with phases: the position and
// the wait within the place's queue, and the queue's own opening.
func (s *service) waitingInQueue(v *queueapi.Place, snap *Snapshot, set Settings, score int64, queue string) {
	defs := set.queues(snap.Now)
	opensAt := set.SalesOpenAt
	for _, d := range defs {
		if d.Name == queue {
			opensAt = d.OpensAt
		}
	}
	v.Status, v.Queue, v.Phase = queueapi.StatusWaiting, queue, set.phaseOfQueue(queue)
	switch {
	case snap.SoldOut:
		v.Status = queueapi.StatusSoldOut
	case set.Paused:
		v.Status = queueapi.StatusPaused
	}
	v.SalesOpen = snap.Valid && !snap.Now.Before(opensAt)
	if !v.SalesOpen {
		// Nobody's rank exists before the queue's opening shuffle.
		at := opensAt.UTC()
		v.SalesOpenAt = &at
		v.PollAfterSeconds = int(min(max(time.Until(opensAt).Seconds(), 1), 15))
		return
	}
	q := snap.queue(queue)
	v.Place = score
	v.Ahead = aheadIn(q, score)
	v.Position = v.Ahead + 1
	wait := float64(v.Ahead) / max(queueRate(snap, set, defs, queue), 0.01)
	v.EstimatedWaitSeconds = int64(wait)
	v.PollAfterSeconds = queueapi.PollAfter(wait)
	if v.Status == queueapi.StatusSoldOut {
		v.PollAfterSeconds = 60
	}
}

// publicQueues is the public state's part for a sale with phases.
func publicQueues(snap *Snapshot, set Settings) (string, []queueapi.QueueState) {
	phase := ""
	if i := set.phaseAt(snap.Now); i >= 0 {
		phase = set.Phases[i].Name
	}
	defs := set.queues(snap.Now)
	out := make([]queueapi.QueueState, 0, len(defs))
	for _, d := range defs {
		q := snap.queue(d.Name)
		qs := queueapi.QueueState{Name: d.Name, Phase: set.phaseOfQueue(d.Name), Weight: d.Weight,
			Open: !snap.Now.Before(d.OpensAt), Watermark: q.Watermark, Waiting: q.Waiting, Admitted: q.Admitted,
			AdmissionRate: math.Round(queueRate(snap, set, defs, d.Name)*10) / 10, Samples: [][2]int64{}}
		if !qs.Open {
			at := d.OpensAt.UTC()
			qs.OpensAt = &at
		} else {
			for _, sm := range q.Samples {
				qs.Samples = append(qs.Samples, [2]int64{sm.Rank, sm.Score})
			}
		}
		out = append(out, qs)
	}
	return phase, out
}

// queueStats is the stats' part for a sale with phases (none without).
func queueStats(snap *Snapshot, set Settings) (string, []queuestats.QueueStats) {
	if len(set.Phases) == 0 {
		return "", nil
	}
	phase := ""
	if i := set.phaseAt(snap.Now); i >= 0 {
		phase = set.Phases[i].Name
	}
	var out []queuestats.QueueStats
	for _, d := range set.queues(snap.Now) {
		q := snap.queue(d.Name)
		out = append(out, queuestats.QueueStats{Name: d.Name, Weight: d.Weight, Waiting: q.Waiting, Admitted: q.Admitted})
	}
	return phase, out
}
