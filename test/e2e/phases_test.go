//go:build e2e

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

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/queueapi"
)

// The sale's two phases: the members' presale, with a queue for members
// (the identity token's tier claim) and one for holders of an access
// code, then the general sale, where members keep their queue at weight 3
// next to everyone else's at weight 1.
const (
	presale       = "presale"
	generalSale   = "general"
	membersQueue  = "members"
	codesQueue    = "codes"
	generalQueue  = "general"
	memberTier    = "member"
	membersWeight = 3
	generalWeight = 1
	// presaleFor is the presale's length: long enough that the presale
	// admits a few hundred people and the disruptions start in it, short
	// enough that the general sale has hundreds of admissions while
	// members and everyone else both wait.
	presaleFor = 30 * time.Second
	// The crowd's shares: members and code holders, of all customers.
	membersShare     = 0.3
	codeHoldersShare = 0.03
)

// withPhases gives te the two phases, the presale opening at salesOpenAt.
func withPhases(te *ticketsv1alpha1.TicketEvent) {
	open := te.Spec.SalesOpenAt
	te.Spec.Phases = []ticketsv1alpha1.SalePhase{
		{Name: presale, OpensAt: open, Queues: []ticketsv1alpha1.PhaseQueue{
			{Name: membersQueue, Weight: 1, Tiers: []string{memberTier}},
			{Name: codesQueue, Weight: 1, AccessCode: true},
		}},
		{Name: generalSale, OpensAt: metav1.NewTime(open.Add(presaleFor)), Queues: []ticketsv1alpha1.PhaseQueue{
			{Name: membersQueue, Weight: membersWeight, Tiers: []string{memberTier}},
			{Name: generalQueue, Weight: generalWeight},
		}},
	}
}

// phaseOpensAt is when te's phase name opens.
func phaseOpensAt(te *ticketsv1alpha1.TicketEvent, name string) time.Time {
	for _, p := range te.Spec.Phases {
		if p.Name == name {
			return p.OpensAt.Time
		}
	}
	return time.Time{}
}

// codeKeyFile writes the access codes' key from the keys Secret the
// operator generated to a file, as a person issuing codes would.
func codeKeyFile(t *testing.T, c *cli, te *ticketsv1alpha1.TicketEvent, dir string) string {
	t.Helper()
	enc := strings.TrimSpace(c.k("-n", saleNS, "get", "secret", render.KeysSecretName(te), "-o", "jsonpath={.data."+render.KeyAccessCodeKey+"}"))
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(key) == 0 {
		t.Fatalf("secret %s has no %s: %q %v", render.KeysSecretName(te), render.KeyAccessCodeKey, enc, err)
	}
	p := filepath.Join(dir, "access-code-key")
	if err := os.WriteFile(p, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// issueCodes runs `ticketfair access-codes` and returns the CSV's path
// and its codes.
func issueCodes(t *testing.T, tool, keyFile, out string, eventID int64, phase string, first, count int) (string, []string) {
	t.Helper()
	cmd := exec.Command(tool, "access-codes", "-event-id", strconv.FormatInt(eventID, 10), "-phase", phase,
		"-first-serial", strconv.Itoa(first), "-count", strconv.Itoa(count), "-key-file", keyFile, "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ticketfair access-codes: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != count+1 {
		t.Fatalf("%s: %d rows (want a header and %d codes): %v", out, len(rows), count, err)
	}
	col := slices.Index(rows[0], "code")
	if col < 0 {
		t.Fatalf("%s: no code column in %v", out, rows[0])
	}
	codes := make([]string, 0, count)
	for _, r := range rows[1:] {
		codes = append(codes, r[col])
	}
	return out, codes
}

// identityToken is an identity provider's HS256 token for subject, with
// the tier claim when tier is set.
func identityToken(t *testing.T, te *ticketsv1alpha1.TicketEvent, secret, subject, tier string) string {
	t.Helper()
	claims := jwt.MapClaims{"iss": te.Spec.Identity.Issuer, "aud": te.Spec.Identity.Audience, "sub": subject,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	if tier != "" {
		claims["tier"] = tier
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// joinAnswer is a join's status and, on success, the place; on a refusal
// the error's code and extra fields.
type joinAnswer struct {
	status int
	place  queueapi.Place
	err    map[string]any
}

func join(t *testing.T, queueURL string, eventID int64, token, code string) joinAnswer {
	t.Helper()
	body := []byte("{}")
	if code != "" {
		body, _ = json.Marshal(map[string]string{"code": code})
	}
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/events/%d/queue", queueURL, eventID), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := joinAnswer{status: resp.StatusCode}
	if resp.StatusCode < 300 {
		err = json.Unmarshal(b, &a.place)
	} else {
		var e struct {
			Error map[string]any `json:"error"`
		}
		err, a.err = json.Unmarshal(b, &e), e.Error
	}
	if err != nil {
		t.Fatalf("join: %d %s: %v", resp.StatusCode, b, err)
	}
	return a
}

// probeJoins checks, before the sale opens, what a join answers to an
// access code and to a person whose phase is not next: a fresh code
// places its holder in the codes queue; the same code for someone else is
// 409 code_used; a forged code 403 code_invalid; a code of another event
// 403 code_other_event; a person without the members' tier 403
// phase_not_open with the general sale's opening. The codes here are of a
// batch the crowd does not hold; the holder leaves again.
func probeJoins(t *testing.T, queueURL string, te *ticketsv1alpha1.TicketEvent, secret, code, otherEventCode string) {
	t.Helper()
	ev := te.Spec.EventID
	first := identityToken(t, te, secret, "e2e-probe-1", "")
	a := join(t, queueURL, ev, first, code)
	if a.status != http.StatusCreated || a.place.Queue != codesQueue || a.place.Phase != presale {
		t.Errorf("join with a fresh code: %d %+v %v, want 201 in queue %s of phase %s", a.status, a.place, a.err, codesQueue, presale)
	}
	checks := []struct {
		what, token, code string
		status            int
		want              string
	}{
		{"the same code, another identity", identityToken(t, te, secret, "e2e-probe-2", ""), code, http.StatusConflict, "code_used"},
		{"a forged code", identityToken(t, te, secret, "e2e-probe-3", ""), forge(code), http.StatusForbidden, "code_invalid"},
		{"a code of another event", identityToken(t, te, secret, "e2e-probe-4", ""), otherEventCode, http.StatusForbidden, "code_other_event"},
		{"no tier, no code", identityToken(t, te, secret, "e2e-probe-5", ""), "", http.StatusForbidden, "phase_not_open"},
	}
	for _, ch := range checks {
		r := join(t, queueURL, ev, ch.token, ch.code)
		if r.status != ch.status || r.err["code"] != ch.want {
			t.Errorf("join with %s: %d %v, want %d %s", ch.what, r.status, r.err, ch.status, ch.want)
			continue
		}
		t.Logf("join with %s: %d %s", ch.what, r.status, ch.want)
		if ch.want == "phase_not_open" {
			at, _ := time.Parse(time.RFC3339, fmt.Sprint(r.err["opensAt"]))
			if r.err["phase"] != generalSale || !at.Equal(phaseOpensAt(te, generalSale)) {
				t.Errorf("phase_not_open names %v at %v, want %s at %v", r.err["phase"], r.err["opensAt"], generalSale, phaseOpensAt(te, generalSale))
			}
		}
	}
	// The holder keeps the code (bound to them) but leaves the queue.
	if a.place.QueueID != "" {
		req, _ := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/events/%d/queue/%s", queueURL, ev, a.place.QueueID), nil)
		req.Header.Set("Authorization", "Bearer "+first)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("leave: %d", resp.StatusCode)
		}
	}
}

// forge changes the last character of a code's MAC.
func forge(code string) string {
	last := code[len(code)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return code[:len(code)-1] + string(repl)
}

// setting is a setting the operator rendered for comp into its
// ConfigMap, read through the Deployment's env.
func setting(t *testing.T, c *cli, te *ticketsv1alpha1.TicketEvent, comp render.Component, name string) string {
	t.Helper()
	var d appsv1.Deployment
	c.getJSON(&d, "-n", saleNS, "get", "deploy", render.Name(te, comp))
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			var cm corev1.ConfigMap
			c.getJSON(&cm, "-n", saleNS, "get", "configmap", e.ValueFrom.ConfigMapKeyRef.Name)
			return cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
		}
	}
	t.Fatalf("%s has no %s from its ConfigMap", comp, name)
	return ""
}

// phaseColumn is the Phase column of `kubectl get te`'s one row.
func phaseColumn(out string) string {
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		return ""
	}
	i := strings.Index(lines[0], "PHASE")
	if i < 0 || len(lines[1]) <= i {
		return ""
	}
	f := strings.Fields(lines[1][i:])
	if len(f) == 0 || strings.HasPrefix(lines[1][i:], " ") {
		return ""
	}
	return f[0]
}

// saleStatus is the TicketEvent's status.sale now.
func saleStatus(c *cli, te *ticketsv1alpha1.TicketEvent) ticketsv1alpha1.SaleStatus {
	var cur ticketsv1alpha1.TicketEvent
	c.getJSON(&cur, "-n", saleNS, "get", "te", te.Name)
	if cur.Status.Sale == nil {
		return ticketsv1alpha1.SaleStatus{}
	}
	return *cur.Status.Sale
}

func queueStatus(s ticketsv1alpha1.SaleStatus, name string) (ticketsv1alpha1.QueueStatus, bool) {
	for _, q := range s.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return ticketsv1alpha1.QueueStatus{}, false
}

// queue is one queue's waiting and admitted in a stats sample.
func (s statsSample) queue(name string) (waiting, admitted int64, ok bool) {
	for _, q := range s.Queues {
		if q.Name == name {
			return q.Waiting, q.Admitted, true
		}
	}
	return 0, 0, false
}

// earlyAdmissions are the stats samples read before a queue's phase
// opened that show admissions from it: none may.
func (p *statsPoller) earlyAdmissions(opens map[string]time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, s := range p.samples {
		for q, at := range opens {
			if _, admitted, ok := s.queue(q); ok && admitted > 0 && s.at.Before(at) {
				out = append(out, fmt.Sprintf("%s admitted %d at %s, before %s", q, admitted, s.at.Format(time.StampMilli), at.Format(time.StampMilli)))
			}
		}
	}
	return out
}

// sharedAdmissions counts the admissions from members and general
// between consecutive stats snapshots computed from "from" on in which
// both queues had people waiting at either end: the stretch where the
// weights decide. The snapshots come from either queue pod, so they are
// put in the order they were computed.
func (p *statsPoller) sharedAdmissions(from time.Time) (members, general int64) {
	p.mu.Lock()
	var snaps []statsSample
	for _, s := range p.samples {
		if !s.UpdatedAt.Before(from) {
			snaps = append(snaps, s)
		}
	}
	p.mu.Unlock()
	slices.SortStableFunc(snaps, func(a, b statsSample) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	snaps = slices.CompactFunc(snaps, func(a, b statsSample) bool { return a.UpdatedAt.Equal(b.UpdatedAt) })
	for i := 1; i < len(snaps); i++ {
		pmw, pma, ok1 := snaps[i-1].queue(membersQueue)
		pgw, pga, ok2 := snaps[i-1].queue(generalQueue)
		mw, ma, ok3 := snaps[i].queue(membersQueue)
		gw, ga, ok4 := snaps[i].queue(generalQueue)
		if ok1 && ok2 && ok3 && ok4 && pmw > 0 && pgw > 0 && mw > 0 && gw > 0 {
			members += ma - pma
			general += ga - pga
		}
	}
	return members, general
}

// weightShare is members' share of members' and general's admissions
// against its weight's, 3/(3+1); ok when within 5 points.
func weightShare(members, general int64) (share, want float64, ok bool) {
	want = float64(membersWeight) / float64(membersWeight+generalWeight)
	if members+general == 0 {
		return 0, want, false
	}
	share = float64(members) / float64(members+general)
	return share, want, math.Abs(share-want) <= 0.05
}

// phasesJSON is the queue's rendered TICKETFAIR_PHASES, checked against
// the TicketEvent's phases: what the audit is given.
func phasesJSON(t *testing.T, c *cli, te *ticketsv1alpha1.TicketEvent) string {
	t.Helper()
	s := setting(t, c, te, render.Queue, "TICKETFAIR_PHASES")
	var ps []config.Phase
	if err := json.Unmarshal([]byte(s), &ps); err != nil {
		t.Fatalf("TICKETFAIR_PHASES %q: %v", s, err)
	}
	if len(ps) != len(te.Spec.Phases) {
		t.Fatalf("TICKETFAIR_PHASES has %d phases, the TicketEvent %d: %s", len(ps), len(te.Spec.Phases), s)
	}
	for i, p := range ps {
		if want := te.Spec.Phases[i]; p.Name != want.Name || !p.OpensAt.Equal(want.OpensAt.Time) || len(p.Queues) != len(want.Queues) {
			t.Errorf("TICKETFAIR_PHASES[%d] = %+v, the TicketEvent's %+v", i, p, want)
		}
	}
	return s
}

// auditQueues is the per-queue part of `ticketfair-dev audit --report-json`.
type auditQueues struct {
	Fairness struct {
		Queues map[string]int `json:"queues"`
	} `json:"fairness"`
	Queues      []auditQueue    `json:"queues"`
	PhaseChecks json.RawMessage `json:"phaseChecks"`
	SellOut     json.RawMessage `json:"sellOut"`
	Problems    []string        `json:"problems"`
}

// auditQueue is one row of the audit's per-queue report.
type auditQueue struct {
	Name         string  `json:"name"`
	Phase        string  `json:"phase"`
	Weight       int     `json:"weight"`
	Joined       int64   `json:"joined"`
	Admitted     int64   `json:"admitted"`
	Share        float64 `json:"share"`
	WeightShare  float64 `json:"weightShare"`
	SeatsPaidFor int64   `json:"seatsPaidFor"`
}

func readAuditQueues(t *testing.T, path string) auditQueues {
	t.Helper()
	var a auditQueues
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &a)
	}
	if err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return a
}

// checkAuditQueues: the audit's report has a row for each queue, each
// admitted people, and the sell-out tail (timed from the presale's
// opening).
func checkAuditQueues(t *testing.T, a auditQueues) {
	t.Helper()
	var lines []string
	for _, q := range a.Queues {
		lines = append(lines, fmt.Sprintf("%-8s phase %-8s weight %d: joined %5d, admitted %4d (share %.3f, weight's %.3f), seats paid for %d",
			q.Name, q.Phase, q.Weight, q.Joined, q.Admitted, q.Share, q.WeightShare, q.SeatsPaidFor))
	}
	t.Logf("audit, per queue (admit log: %v):\n%s\nphase checks: %s", a.Fairness.Queues, strings.Join(lines, "\n"), a.PhaseChecks)
	for _, name := range []string{membersQueue, codesQueue, generalQueue} {
		// The admit log's entries of the general queue name no queue.
		if n := a.Fairness.Queues[name]; n == 0 && (name != generalQueue || a.Fairness.Queues[""] == 0) {
			t.Errorf("the audit's admit log has no admissions from %s: %v", name, a.Fairness.Queues)
		}
		if !slices.ContainsFunc(a.Queues, func(q auditQueue) bool {
			return q.Name == name && q.Admitted > 0
		}) {
			t.Errorf("the audit's report has no row for %s with admissions", name)
		}
	}
	if len(a.SellOut) == 0 || string(a.SellOut) == "null" {
		t.Errorf("the audit's report has no sell-out tail")
	}
}
