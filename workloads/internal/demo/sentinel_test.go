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
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// TestSentinelSale: --redis-mode sentinel starts a master, a replica and
// three sentinels, and the services reach the master through them.
func TestSentinelSale(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	bin := testenv.BuildWorkloads(t)
	o := DefaultOptions()
	o.Phases = false // one general queue: this sale tests something else
	o.Customers, o.Seats, o.MaxActive, o.AdmitRate = 600, 100, 60, 100
	o.OpensIn, o.HoldTTL, o.Seed = 3*time.Second, 8*time.Second, 7
	o.Binary, o.Deadline, o.RedisMode = bin, 3*time.Minute, "sentinel"
	var out bytes.Buffer
	o.Out = &out
	rep, err := Run(context.Background(), o)
	t.Log(out.String())
	if err != nil {
		if strings.Contains(err.Error(), "not installed") {
			testenv.Unavailable(t, "redis-sentinel", err)
		}
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "sentinels redis://") {
		t.Fatal("the sale did not start sentinels")
	}
	if rep.SeatsSold != int64(o.Seats) || rep.DoubleSold.Total() != 0 || rep.Crowd.MaxActiveSample > int64(o.MaxActive) {
		t.Fatalf("sold %d of %d, double sold %+v, max active %d", rep.SeatsSold, o.Seats, rep.DoubleSold, rep.Crowd.MaxActiveSample)
	}
}
