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

import "testing"

// TestFairnessPerQueue: entries of a named queue parse with their queue,
// and FIFO is measured within each queue, so admissions dealt by weight
// across queues are no inversions, while one out of order in its queue is.
func TestFairnessPerQueue(t *testing.T) {
	log, err := ParseAdmissionLog([]string{
		"g1|10|10|f", "m1|5|5|f|members", "m2|7|7|f|members", "g2|12|12|f", "m3|6|6|f|members",
	})
	if err != nil {
		t.Fatal(err)
	}
	if log[1].Customer != "m1" || log[1].Queue != "members" || log[1].Cohort != 'f' || log[0].Queue != "" {
		t.Fatalf("parsed %+v", log)
	}
	f := ComputeFairness(log, 0)
	if f.PostOpenAdmitted != 5 || f.PostOpenInversions != 1 || f.Queues["members"] != 3 || f.Queues[""] != 2 {
		t.Fatalf("%+v, want 1 inversion (m3 in members) and 3 + 2 admissions", f)
	}
	if g := ComputeFairness(log[:1], 0); g.Queues != nil {
		t.Fatalf("a sale without queues got per-queue counts %v", g.Queues)
	}
}
