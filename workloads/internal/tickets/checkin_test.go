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

package tickets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi/httpapitest"
	"github.com/ticketfair/ticketfair/workloads/ticketstats"
)

const gateSecret = "gate-secret-of-event-42"

// gateService is the tickets API on a migrated database (no consumer
// running), with the tickets of orders issued.
type gateService struct {
	base string
	pool *pgxpool.Pool
	svc  *Service
}

func newGateService(t *testing.T, orders ...int) gateService {
	t.Helper()
	url, pool := newDB(t)
	cfg := testConfig(t, url, []string{"127.0.0.1:1"})
	cfg.GateSecret = gateSecret
	cfg.EmailClaim = "email"
	cfg.MaxTransfers = 2
	svc, err := New(context.Background(), cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	for i, o := range orders {
		if _, err := Issue(context.Background(), pool, svc.keys, int64(i+1), order(o, 2)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	return gateService{base: srv.URL, pool: pool, svc: svc}
}

func (g gateService) codes(t *testing.T, o int) []Ticket {
	t.Helper()
	ts, err := ForOrder(context.Background(), g.pool, order(o, 2).OrderID)
	if err != nil || len(ts) == 0 {
		t.Fatalf("tickets of order %d: %v %v", o, ts, err)
	}
	return ts
}

func credential(t testing.TB, event int64, gate string) string {
	t.Helper()
	c, err := GateCredential(gateSecret, event, gate)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gateDo sends one request through the document's validator.
func gateDo(t testing.TB, method, url, cred string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ticketsAPI.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func scanAt(t testing.TB, base, cred, code string) (int, map[string]any) {
	t.Helper()
	status, body := gateDo(t, "POST", fmt.Sprintf("%s/events/%d/checkins", base, eventID), cred, map[string]string{"code": code})
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("check-in answer %d %s: %v", status, body, err)
	}
	if e, ok := out["error"].(map[string]any); ok {
		out = e
	}
	return status, out
}

// Twenty gates scan one code at the same instant: exactly one admits, the
// nineteen others say already used and name the gate that admitted.
func TestCheckInRaceAdmitsOnce(t *testing.T) {
	g := newGateService(t, 1)
	code := g.codes(t, 1)[0].Code
	const gates = 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	statuses := make([]int, gates)
	answers := make([]map[string]any, gates)
	for i := range gates {
		cred := credential(t, eventID, fmt.Sprintf("gate-%02d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], answers[i] = scanAt(t, g.base, cred, code)
		}()
	}
	close(start)
	wg.Wait()
	admitted, winner := 0, ""
	for i, st := range statuses {
		if st == http.StatusOK && answers[i]["result"] == Admitted {
			admitted++
			winner = answers[i]["gate"].(string)
		}
	}
	if admitted != 1 {
		t.Fatalf("%d of %d racing gates admitted one code, want 1: %v", admitted, gates, answers)
	}
	for i, st := range statuses {
		if st == http.StatusOK {
			continue
		}
		if st != http.StatusConflict || answers[i]["code"] != AlreadyUsed || answers[i]["firstGate"] != winner {
			t.Errorf("gate %d: %d %v, want 409 already_used at %s", i, st, answers[i], winner)
		}
	}
	var n int
	if err := g.pool.QueryRow(context.Background(), `SELECT count(*) FROM checkin`).Scan(&n); err != nil || n != 1 {
		t.Errorf("checkin rows: %d %v, want 1", n, err)
	}
}

// Each refusal is distinct, and none records a check-in.
func TestCheckInAnswers(t *testing.T) {
	g := newGateService(t, 1, 2)
	cred := credential(t, eventID, "north")
	ts := g.codes(t, 1)

	other, err := ParseKeys(testKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := other.Sign(ts[0].TicketID, eventID, ts[0].OrderID, ts[0].SeatID, ts[0].Section, 0, time.Now())
	foreign, _ := g.svc.keys.Sign(TicketID("o9", "s9"), eventID+1, "o9", "s9", "A", 0, time.Now())
	neverIssued, _ := g.svc.keys.Sign(TicketID("o9", "s9"), eventID, "o9", "s9", "A", 0, time.Now())
	for _, c := range []struct {
		name, code string
		status     int
		result     string
	}{
		{"garbage", "hello", 422, Invalid},
		{"forged signature", forged, 422, Invalid},
		{"truncated", ts[0].Code[:len(ts[0].Code)-5], 422, Invalid},
		{"other event", foreign, 422, WrongEvent},
		{"never issued", neverIssued, 422, Invalid},
	} {
		st, a := scanAt(t, g.base, cred, c.code)
		if st != c.status || a["code"] != c.result || a["message"] == "" {
			t.Errorf("%s: %d %v, want %d %s with a message", c.name, st, a, c.status, c.result)
		}
	}
	if _, err := g.pool.Exec(context.Background(), `UPDATE ticket SET revoked_at = now() WHERE ticket_id = $1`, g.codes(t, 2)[0].TicketID); err != nil {
		t.Fatal(err)
	}
	if st, a := scanAt(t, g.base, cred, g.codes(t, 2)[0].Code); st != http.StatusGone || a["code"] != Revoked {
		t.Errorf("cancelled ticket: %d %v, want 410 revoked", st, a)
	}
	var n int
	if err := g.pool.QueryRow(context.Background(), `SELECT count(*) FROM checkin`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused scans recorded %d check-ins (%v), want 0", n, err)
	}
	if st, a := scanAt(t, g.base, cred, ts[1].Code); st != http.StatusOK || a["result"] != Admitted || a["seatId"] != ts[1].SeatID {
		t.Errorf("valid ticket: %d %v, want 200 admitted", st, a)
	}
	if st, a := scanAt(t, g.base, credential(t, eventID, "south"), ts[1].Code); st != http.StatusConflict || a["firstGate"] != "north" {
		t.Errorf("second scan: %d %v, want 409 already used at north", st, a)
	}
}

// Bad requests get a 4xx with the error shape, never a 5xx, never a
// check-in.
func TestCheckInBadRequests(t *testing.T) {
	g := newGateService(t, 1)
	code := g.codes(t, 1)[0].Code
	url := fmt.Sprintf("%s/events/%d/checkins", g.base, eventID)
	cred := credential(t, eventID, "north")
	otherSecret, _ := GateCredential("another-secret", eventID, "north")
	for _, c := range []struct {
		name, url, cred, body string
		status                int
		code                  string
	}{
		{"no credential", url, "", `{"code":"x"}`, 401, "unauthorized"},
		{"customer token", url, token(t, "cust-1"), `{"code":"x"}`, 401, "unauthorized"},
		{"foreign secret", url, otherSecret, `{"code":"x"}`, 401, "unauthorized"},
		{"tampered gate", url, strings.Replace(cred, ".north.", ".south.", 1), `{"code":"x"}`, 401, "unauthorized"},
		{"credential of another event", url, credential(t, eventID+1, "north"), `{"code":"` + code + `"}`, 403, "wrong_event_credential"},
		{"bad event id", g.base + "/events/abc/checkins", cred, `{"code":"x"}`, 400, "bad_event_id"},
		{"not JSON", url, cred, `code=x`, 400, "bad_json"},
		{"unknown field", url, cred, `{"code":"x","gate":"other"}`, 400, "bad_json"},
		{"empty code", url, cred, `{"code":""}`, 400, "bad_code"},
		{"huge code", url, cred, `{"code":"` + strings.Repeat("a", 4000) + `"}`, 400, "bad_code"},
		{"oversized body", url, cred, `{"code":"` + strings.Repeat("a", 70<<10) + `"}`, 413, "body_too_large"},
		{"sync without scans", url + "/sync", cred, `{"scans":[]}`, 400, "bad_scans"},
		{"sync from the future", url + "/sync", cred, `{"scans":[{"code":"x","scannedAt":"2999-01-01T00:00:00Z","offline":true}]}`, 400, "bad_scanned_at"},
		{"sync without time", url + "/sync", cred, `{"scans":[{"code":"x","offline":true}]}`, 400, "bad_scanned_at"},
	} {
		h := http.Header{"Content-Type": {"application/json"}}
		if c.cred != "" {
			h.Set("Authorization", "Bearer "+c.cred)
		}
		r := httpapitest.Do(t, "POST", c.url, c.body, h)
		if r.Status != c.status || httpapitest.ErrorCode(r.Body) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	var n int
	if err := g.pool.QueryRow(context.Background(), `SELECT count(*) FROM checkin`).Scan(&n); err != nil || n != 0 {
		t.Errorf("bad requests recorded %d check-ins (%v), want 0", n, err)
	}
	// Without a gate secret there is no check-in at all.
	svc := *g.svc
	svc.gateSecret = ""
	srv := httptest.NewServer(svc.Handler())
	defer srv.Close()
	r := httpapitest.Do(t, "POST", fmt.Sprintf("%s/events/%d/checkins", srv.URL, eventID), `{"code":"x"}`, http.Header{"Authorization": {"Bearer " + cred}})
	if r.Status != http.StatusNotFound || httpapitest.ErrorCode(r.Body) != "checkin_disabled" {
		t.Errorf("no gate secret: %d %s, want 404 checkin_disabled", r.Status, r.Body)
	}
}

type syncAnswer struct {
	Results []Answer `json:"results"`
}

// Two gates lose the network and both admit one code; a third gate
// admitted another code online before the offline gate did. After sync
// the conflicts are in the report, a resync adds nothing, and the gate
// list carries the admissions.
func TestOfflineGatesSyncConflicts(t *testing.T) {
	g := newGateService(t, 1, 2)
	t1, t2 := g.codes(t, 1), g.codes(t, 2)
	syncURL := fmt.Sprintf("%s/events/%d/checkins/sync", g.base, eventID)
	east, west := credential(t, eventID, "east"), credential(t, eventID, "west")
	doors := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)

	// Online first: t2[0] at gate north.
	if st, a := scanAt(t, g.base, credential(t, eventID, "north"), t2[0].Code); st != 200 {
		t.Fatalf("online scan: %d %v", st, a)
	}
	eastScans := map[string]any{"scans": []map[string]any{
		{"code": t1[0].Code, "scannedAt": doors, "offline": true},
		{"code": t2[0].Code, "scannedAt": doors.Add(time.Minute), "offline": true},
	}}
	st, body := gateDo(t, "POST", syncURL, east, eastScans)
	var ea syncAnswer
	if err := json.Unmarshal(body, &ea); st != 200 || err != nil || len(ea.Results) != 2 {
		t.Fatalf("east sync: %d %s %v", st, body, err)
	}
	if ea.Results[0].Result != Admitted || ea.Results[1].Result != Conflict || ea.Results[1].FirstGate != "north" {
		t.Errorf("east sync: %+v, want admitted then conflict with north", ea.Results)
	}
	westScans := map[string]any{"scans": []map[string]any{{"code": t1[0].Code, "scannedAt": doors.Add(30 * time.Second), "offline": true}}}
	st, body = gateDo(t, "POST", syncURL, west, westScans)
	var wa syncAnswer
	if err := json.Unmarshal(body, &wa); st != 200 || err != nil || len(wa.Results) != 1 || wa.Results[0].Result != Conflict || wa.Results[0].FirstGate != "east" {
		t.Fatalf("west sync: %d %s %v, want a conflict with east", st, body, err)
	}
	// Resyncing (a gate that did not see the answer) changes nothing.
	for range 2 {
		st, body = gateDo(t, "POST", syncURL, east, eastScans)
		if err := json.Unmarshal(body, &ea); st != 200 || err != nil || ea.Results[0].Result != Admitted || ea.Results[1].Result != Conflict {
			t.Fatalf("east resync: %d %s", st, body)
		}
	}
	st, body = gateDo(t, "GET", fmt.Sprintf("%s/events/%d/checkins/report", g.base, eventID), east, nil)
	var rep Report
	if err := json.Unmarshal(body, &rep); st != 200 || err != nil {
		t.Fatalf("report: %d %s %v", st, body, err)
	}
	if rep.Admitted != 2 || rep.Tickets != 4 || len(rep.Conflicts) != 2 {
		t.Fatalf("report: %+v, want 2 of 4 admitted and 2 conflicts", rep)
	}
	got := map[string]string{}
	for _, c := range rep.Conflicts {
		got[c.Gate+" "+c.TicketID] = c.FirstGate
	}
	if got["east "+t2[0].TicketID] != "north" || got["west "+t1[0].TicketID] != "east" {
		t.Errorf("conflicts: %+v", rep.Conflicts)
	}
	byGate := map[string]GateCount{}
	for _, gc := range rep.ByGate {
		byGate[gc.Gate] = gc
	}
	if byGate["east"].Admitted != 1 || byGate["east"].Offline != 1 || byGate["north"].Admitted != 1 || byGate["north"].Offline != 0 {
		t.Errorf("by gate: %+v", rep.ByGate)
	}
	if len(rep.ByMinute) != 2 || !rep.ByMinute[0].Minute.Equal(doors.Truncate(time.Minute)) {
		t.Errorf("by minute: %+v", rep.ByMinute)
	}
	st, body = gateDo(t, "GET", fmt.Sprintf("%s/events/%d/gate/list", g.base, eventID), west, nil)
	var l GateList
	if err := json.Unmarshal(body, &l); st != 200 || err != nil || len(l.CheckedIn) != 2 || len(l.Revoked) != 0 {
		t.Errorf("gate list: %d %s %v", st, body, err)
	}
	st, body = gateDo(t, "GET", fmt.Sprintf("%s/events/%d/stats", g.base, eventID), "", nil)
	var stats ticketstats.Stats
	if err := json.Unmarshal(body, &stats); st != 200 || err != nil || stats.Tickets != 4 || stats.CheckedIn != 2 || stats.Conflicts != 2 || len(stats.Gates) != 2 {
		t.Errorf("stats: %d %s %v", st, body, err)
	}
}
