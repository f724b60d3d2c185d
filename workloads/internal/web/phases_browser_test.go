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

package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// phasedSale is phasedEvent's phases: a members' presale that opened a
// minute ago, and the general sale in an hour.
func phasedSale(t *testing.T) string {
	now := time.Now().UTC()
	b, err := json.Marshal([]config.Phase{
		{Name: "presale", OpensAt: now.Add(-time.Minute), Queues: []config.PhaseQueue{{Name: "members", Weight: 3, Tiers: []string{"member"}}}},
		{Name: "sale", OpensAt: now.Add(time.Hour), Queues: []config.PhaseQueue{
			{Name: "members", Weight: 3, Tiers: []string{"member"}}, {Name: "general", Weight: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBrowserPhase: someone without the member tier, during the members'
// presale, is placed in the general sale's pre-queue, and the page says
// which phase and queue, with the countdown to the phase's opening.
func TestBrowserPhase(t *testing.T) {
	b := newBrowser(t)
	s := startSale(t)
	b.do(b.ctx, "open the phased sale", 20*time.Second, chromedp.Navigate(fmt.Sprintf("%s/sale/%d/", s.edges[phasedEvent], phasedEvent)))
	b.waitFor(b.ctx, "prequeue", `document.getElementById("status-title").dataset.state === "prequeue"`, 20*time.Second)
	b.waitFor(b.ctx, "phase shown", `!document.getElementById("phase").hidden`, 10*time.Second)
	b.shot(b.ctx, "phase")
	got := evalIn[string](b, b.ctx, `document.getElementById("phase").innerText`)
	if !strings.Contains(got, "Phase: sale") || !strings.Contains(got, "general sale") {
		t.Errorf("the page shows %q, want the phase and the queue", got)
	}
	b.waitFor(b.ctx, "countdown", `!document.getElementById("countdown").hidden && document.getElementById("countdown").innerText.startsWith("Sales open in")`, 10*time.Second)
}
