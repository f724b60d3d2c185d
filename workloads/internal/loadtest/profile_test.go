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
	"testing"
	"time"
)

func TestParseProfile(t *testing.T) {
	p, err := ParseProfile(DefaultProfile(), "customers=2000, abandon=0.1,joinwindow=5s, maxseats=2")
	if err != nil {
		t.Fatal(err)
	}
	if p.Customers != 2000 || p.Abandon != 0.1 || p.JoinWindow != 5*time.Second || p.MaxSeats != 2 {
		t.Fatalf("overrides not applied: %+v", p)
	}
	if p.NoClaim != DefaultProfile().NoClaim {
		t.Fatal("untouched field changed")
	}
	if p, err := ParseProfile(DefaultProfile(), "members=0.1,codeholders=0.02"); err != nil || p.Members != 0.1 || p.CodeHolders != 0.02 {
		t.Fatalf("members and code holders: %+v, %v", p, err)
	}
	if p, err := ParseProfile(DefaultProfile(), "bestavailable=0.5,standing=0,wheelchair=0.1,acceptsplit=1"); err != nil ||
		p.BestAvailable != 0.5 || p.Standing != 0 || p.Wheelchair != 0.1 || p.AcceptSplit != 1 {
		t.Fatalf("how people ask for places: %+v, %v", p, err)
	}
	if d := DefaultProfile(); d.BestAvailable != 0.8 || d.Standing != 0.3 {
		t.Fatalf("the documented defaults: bestavailable %v, standing %v", d.BestAvailable, d.Standing)
	}
	for _, bad := range []string{"bestavailable=1.2", "standing=-1", "customers=0", "abandon=1.5", "nokey", "colour=blue", "joinwindow=soon", "maxseats=11", "abandon=0.6,noclaim=0.6", "members=0.7,codeholders=0.4", "members=-0.1"} {
		if _, err := ParseProfile(DefaultProfile(), bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	p50, p99 := h.quantile(0.5), h.quantile(0.99)
	if p50 < 480*time.Millisecond || p50 > 530*time.Millisecond {
		t.Fatalf("p50 %v", p50)
	}
	if p99 < 970*time.Millisecond || p99 > 1040*time.Millisecond {
		t.Fatalf("p99 %v", p99)
	}
}
