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

package booking

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/internal/scrape"
)

// TestGateKeepsPostgreSQLsLoadSteady races 64 customers' holds into a
// booking whose pool has 6 connections: the gate lets at most 4 run at
// once (the pool less gateReserve), so the pool never opens more than 4
// connections, every hold is answered, none is held twice, and the gate
// ends empty.
func TestGateKeepsPostgreSQLsLoadSteady(t *testing.T) {
	e := newEnv(t, func(c *config.Booking) { c.DatabaseMaxConns = 6 })
	const customers = 64
	tokens := make([]string, customers)
	for i := range tokens {
		tokens[i] = e.token(fmt.Sprintf("gate-%d", i))
	}
	var wg sync.WaitGroup
	statuses := make([]int, customers)
	start := make(chan struct{})
	for i := range customers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Two customers want each seat: half the holds are refused
			// by the database, which is an answer too.
			seat := fmt.Sprintf("A-%d-%d", i/2/20+1, i/2%20+1)
			statuses[i] = e.do("POST", "/events/7/holds", map[string]any{"seats": []string{seat}}, QueueTokenHeader, tokens[i]).status
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for i, st := range statuses {
		switch st {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Fatalf("hold %d: status %d", i, st)
		}
	}
	if created != customers/2 {
		t.Fatalf("%d holds created for %d seats", created, customers/2)
	}
	if n := e.count(`SELECT count(*) FROM seat WHERE status = 'HELD'`); n != customers/2 {
		t.Fatalf("%d seats held, want %d", n, customers/2)
	}
	f, err := scrape.Metrics(context.Background(), http.DefaultClient, e.base)
	if err != nil {
		t.Fatal(err)
	}
	if n := scrape.Sum(f["ticketfair_booking_db_pool_total_conns"], ""); n > 4 || n < 1 {
		t.Fatalf("the pool opened %v connections, want 1-4 (the gate's limit)", n)
	}
	if n := scrape.Sum(f["ticketfair_booking_tx_gate_in_flight"], "") + scrape.Sum(f["ticketfair_booking_tx_gate_waiting"], ""); n != 0 {
		t.Fatalf("the gate holds %v after every hold was answered", n)
	}
	if n := scrape.Sum(f["ticketfair_booking_tx_gate_wait_seconds"], ""); n != customers {
		t.Fatalf("%v waits observed, want one per hold (%d)", n, customers)
	}
	if l := scrape.Sum(f["ticketfair_booking_tx_gate_limit"], ""); l != 4 {
		t.Fatalf("gate limit %v, want 4 (a pool of 6 less the reserve of 2)", l)
	}
}
