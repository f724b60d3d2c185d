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
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/ticketmail"
)

// A duplicate is the price of a SIGKILL only when its first copy went out
// while the killed sender held the mail, and the second when its lease
// ended; a copy sent again sooner is a live sender's bug.
func TestCaughtByKill(t *testing.T) {
	kill := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return kill.Add(d) }
	for _, c := range []struct {
		name   string
		copies []time.Time
		kills  []time.Time
		want   bool
	}{
		{"stored just before the kill, again when the lease ended", []time.Time{at(ticketmail.Lease - time.Second), at(-1500 * time.Millisecond)}, []time.Time{kill}, true},
		{"stored a moment after the kill (its 250 never came back)", []time.Time{at(200 * time.Millisecond), at(ticketmail.Lease)}, []time.Time{kill}, true},
		{"sent again within seconds: a live sender", []time.Time{at(-time.Second), at(3 * time.Second)}, []time.Time{kill}, false},
		{"no kill at all", []time.Time{at(0), at(ticketmail.Lease)}, nil, false},
		{"first copy long after the kill", []time.Time{at(time.Minute), at(time.Minute + ticketmail.Lease)}, []time.Time{kill}, false},
		{"first copy before the killed process could have claimed it", []time.Time{at(-ticketmail.Lease - time.Minute), at(-time.Minute)}, []time.Time{kill}, false},
	} {
		if got := caughtByKill(c.copies, c.kills); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
