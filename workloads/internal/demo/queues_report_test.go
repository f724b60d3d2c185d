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
	"bytes"
	"strings"
	"testing"
)

func TestPrintQueues(t *testing.T) {
	var b bytes.Buffer
	printQueues(&b, nil, nil)
	if b.Len() != 0 {
		t.Fatalf("a sale without phases printed %q", b.String())
	}
	printQueues(&b, map[string]int{"": 25, "members": 75}, nil)
	want := "queue general\t25 admitted, 25.0% of admissions\nqueue members\t75 admitted, 75.0% of admissions\n"
	if got := b.String(); got != want || strings.Count(got, "\n") != 2 {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestPrintQueueRows: with the audit's rows, a row per queue with its
// joins, admissions, share against its weight's, and seats; a queue in no
// checked group says so.
func TestPrintQueueRows(t *testing.T) {
	var b bytes.Buffer
	at := testOpen
	printQueues(&b, map[string]int{"members": 3}, []QueueRow{
		{Name: "members", Phase: "presale", Weight: 3, OpensAt: at, Joined: 10, Admitted: 3, SeatsPaidFor: 5, Share: 0.6, WeightShare: 0.6},
		{Name: "general", Phase: "general", Weight: 1, OpensAt: at, Joined: 20},
	})
	want := "queue members (presale, 10:00:00)\tjoined 10, admitted 3, 60.0% of admissions while others waited, weight 3 = 60.0%; seats paid for 5\n" +
		"queue general (general, 10:00:00)\tjoined 20, admitted 0, no group of waiting queues large enough to compare; seats paid for 0\n"
	if got := b.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
