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

package kubectlplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// cluster is one envtest API server with the CRD, an admin client for
// setting up and checking, and the admin's kubeconfig on disk for the plugin.
type cluster struct {
	env        *envtest.Environment
	c          client.Client
	kubeconfig string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	env, cfg := testenv.Kube(t)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, ticketsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cl := &cluster{env: env, c: c}
	cl.kubeconfig = cl.userKubeconfig(t, envtest.User{Name: "admin", Groups: []string{"system:masters"}}, "")
	return cl
}

// userKubeconfig writes the kubeconfig of a new user authenticated by a
// client certificate, its context's namespace set to ns (if not empty).
func (cl *cluster) userKubeconfig(t *testing.T, u envtest.User, ns string) string {
	t.Helper()
	user, err := cl.env.AddUser(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	if ns != "" {
		kc = withNamespace(t, kc, ns)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// withNamespace sets the namespace of the current context of kubeconfig kc.
func withNamespace(t *testing.T, kc []byte, ns string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ns
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (cl *cluster) namespace(t *testing.T, name string) {
	t.Helper()
	if err := cl.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// event creates a TicketEvent of 50,000 seats opening at opens, then gives
// it status through the status subresource when sale is not nil.
func (cl *cluster) event(t *testing.T, ns, name string, id int64, opens time.Time, admission ticketsv1alpha1.Admission,
	sale *ticketsv1alpha1.SaleStatus, ready metav1.ConditionStatus) *ticketsv1alpha1.TicketEvent {
	t.Helper()
	ctx := context.Background()
	te := &ticketsv1alpha1.TicketEvent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: ticketsv1alpha1.TicketEventSpec{
			EventID:     id,
			DisplayName: "Sale " + name,
			SalesOpenAt: metav1.NewTime(opens),
			Seating: ticketsv1alpha1.Seating{Sections: []ticketsv1alpha1.Section{
				{Name: "Floor", Price: "129.00", Rows: 20, SeatsPerRow: 250},
				{Name: "Upper", Price: "49.00", Rows: 180, SeatsPerRow: 250},
			}},
			Admission: admission,
		},
	}
	if err := cl.c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	if sale == nil {
		return te
	}
	te.Status.SeatsTotal = 50000
	te.Status.Sale = sale
	te.Status.Conditions = []metav1.Condition{{Type: ticketsv1alpha1.ConditionReady, Status: ready,
		Reason: "Available", Message: "migration succeeded and every service is available", LastTransitionTime: metav1.Now()}}
	if ready != metav1.ConditionTrue {
		te.Status.Conditions[0].Reason, te.Status.Conditions[0].Message = "RollingOut", "waiting for booking to be available"
	}
	if err := cl.c.Status().Update(ctx, te); err != nil {
		t.Fatal(err)
	}
	return te
}

// run runs the plugin in-process with args; it returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	t.Logf("$ kubectl ticketfair %s\n%s%s(exit %d)", strings.Join(args, " "), out.String(), errOut.String(), code)
	return out.String(), errOut.String(), code
}

// mustRun runs the plugin and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != ExitOK {
		t.Fatalf("kubectl ticketfair %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// detail parses status NAME's "Key: value" lines.
func detail(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for line := range strings.Lines(out) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("line %q is not Key: value", line)
		}
		m[k] = strings.TrimSpace(v)
	}
	return m
}

// table parses status's table into rows by their first column.
func table(t *testing.T, out string) (header []string, rows map[string][]string) {
	t.Helper()
	rows = map[string][]string{}
	for i, line := range slices.Collect(strings.Lines(out)) {
		f := strings.Fields(line)
		if i == 0 {
			header = f
			continue
		}
		if len(f) < len(header) {
			t.Fatalf("row %q has %d fields, header %d", line, len(f), len(header))
		}
		rows[f[0]] = f
	}
	return header, rows
}

func sale(waiting, active, remaining, held, sold int64, soldOut bool, updated time.Time) *ticketsv1alpha1.SaleStatus {
	return &ticketsv1alpha1.SaleStatus{Waiting: waiting, Active: active, AdmittedTotal: active + sold, Remaining: remaining,
		Held: held, Sold: sold, SoldOut: soldOut, UpdatedAt: metav1.NewTime(updated)}
}

func TestPlugin(t *testing.T) {
	cl := newCluster(t)
	kc := "--kubeconfig=" + cl.kubeconfig
	now := time.Now().UTC().Truncate(time.Second)
	cl.namespace(t, "sales")
	cl.namespace(t, "other")
	cl.event(t, "sales", "summer", 1, now.Add(-time.Hour), ticketsv1alpha1.Admission{RatePerSecond: 250},
		sale(12000, 4800, 38000, 300, 12000, false, now.Add(-5*time.Second)), metav1.ConditionTrue)
	cl.event(t, "sales", "winter", 2, now.Add(2*time.Hour), ticketsv1alpha1.Admission{}, nil, "")
	cl.event(t, "sales", "spring", 3, now.Add(-time.Hour), ticketsv1alpha1.Admission{Paused: true},
		sale(9000, 0, 40000, 100, 10000, false, now.Add(-5*time.Second)), metav1.ConditionTrue)
	cl.event(t, "sales", "autumn", 4, now.Add(-3*time.Hour), ticketsv1alpha1.Admission{RatePerSecond: 100},
		sale(700, 0, 0, 0, 50000, true, now.Add(-time.Minute)), metav1.ConditionFalse)
	cl.event(t, "other", "gala", 5, now.Add(-time.Minute), ticketsv1alpha1.Admission{},
		sale(0, 10, 49990, 10, 0, false, now.Add(-2*time.Second)), metav1.ConditionTrue)

	t.Run("status of one event", func(t *testing.T) {
		d := detail(t, mustRun(t, "status", "summer", "-n", "sales", kc))
		want := map[string]string{
			"Name": "summer", "Namespace": "sales", "Event": "1", "Phase": "Open",
			"Waiting": "12000", "Active": "4800", "Admission rate": "250/s", "Queue ends in": "48s",
			"Sold": "12000 of 50000 seats", "Held": "300", "Remaining": "38000",
			"Ready":   "True (Available: migration succeeded and every service is available)",
			"Tickets": none, "Emails": none, "Checked in": none,
		}
		for k, v := range want {
			if d[k] != v {
				t.Errorf("%s: %q, want %q", k, d[k], v)
			}
		}
		if u := d["Updated"]; !strings.HasPrefix(u, now.Add(-5*time.Second).Format(time.RFC3339)+" (") || !strings.HasSuffix(u, "s ago)") {
			t.Errorf("Updated: %q", u)
		}
		if o := d["Sales open at"]; o != now.Add(-time.Hour).Format(time.RFC3339)+" (60m ago)" {
			t.Errorf("Sales open at: %q", o)
		}

		// Before any status: the default rate, the seating's seats, no figures.
		d = detail(t, mustRun(t, "status", "winter", "-n", "sales", kc))
		for k, v := range map[string]string{"Phase": "Scheduled", "Waiting": none, "Admission rate": "500/s",
			"Queue ends in": none, "Sold": none + " of 50000 seats", "Ready": "Unknown", "Updated": none} {
			if d[k] != v {
				t.Errorf("winter %s: %q, want %q", k, d[k], v)
			}
		}
	})

	t.Run("status as JSON and YAML", func(t *testing.T) {
		var j, y EventStatus
		if err := json.Unmarshal([]byte(mustRun(t, "status", "summer", "-n", "sales", "-o", "json", kc)), &j); err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict([]byte(mustRun(t, "status", "summer", "-n", "sales", "-o", "yaml", kc)), &y); err != nil {
			t.Fatal(err)
		}
		i := func(n int64) *int64 { return &n }
		updated := metav1.NewTime(now.Add(-5 * time.Second))
		want := EventStatus{Namespace: "sales", Name: "summer", EventID: 1, Phase: PhaseOpen,
			SalesOpenAt: metav1.NewTime(now.Add(-time.Hour)), Waiting: i(12000), Active: i(4800), RatePerSecond: 250,
			ETASeconds: i(48), Sold: i(12000), SeatsTotal: 50000, Held: i(300), Remaining: i(38000),
			Ready: "True", ReadyReason: "Available", ReadyMessage: "migration succeeded and every service is available",
			UpdatedAt: &updated}
		for what, got := range map[string]EventStatus{"json": j, "yaml": y} {
			if !statusEqual(got, want) {
				t.Errorf("-o %s:\n%+v\nwant\n%+v", what, got, want)
			}
		}
		// Unknown figures are null, not 0.
		raw := map[string]any{}
		if err := json.Unmarshal([]byte(mustRun(t, "status", "winter", "-n", "sales", "-o", "json", kc)), &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"waiting", "active", "etaSeconds", "sold", "held", "remaining", "updatedAt", "tickets"} {
			if v, ok := raw[k]; !ok || v != nil {
				t.Errorf("winter %s: %v (present %v), want null", k, v, ok)
			}
		}

		var list struct{ Items []EventStatus }
		if err := json.Unmarshal([]byte(mustRun(t, "status", "-n", "sales", "-o", "json", kc)), &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name+":"+string(s.Phase))
		}
		if want := []string{"autumn:SoldOut", "spring:Paused", "summer:Open", "winter:Scheduled"}; !slices.Equal(names, want) {
			t.Errorf("list: %v, want %v", names, want)
		}
	})

	t.Run("status table", func(t *testing.T) {
		header, rows := table(t, mustRun(t, "status", "-n", "sales", kc))
		if want := []string{"NAME", "PHASE", "WAITING", "ACTIVE", "RATE", "ETA", "SOLD", "HELD", "REMAINING", "CHECKED-IN", "READY", "UPDATED"}; !slices.Equal(header, want) {
			t.Fatalf("header %v", header)
		}
		// UPDATED ("5s ago") is two fields; the others are compared whole.
		for name, want := range map[string][]string{
			"summer": {"summer", "Open", "12000", "4800", "250/s", "48s", "12000/50000", "300", "38000", none, "True"},
			"winter": {"winter", "Scheduled", none, none, "500/s", none, none + "/50000", none, none, none, "Unknown", none},
			"spring": {"spring", "Paused", "9000", "0", "500/s", none, "10000/50000", "100", "40000", none, "True"},
			"autumn": {"autumn", "SoldOut", "700", "0", "100/s", none, "50000/50000", "0", "0", none, "False"},
		} {
			got := rows[name]
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Errorf("%s: %v, want %v", name, got, want)
			}
		}
		if len(rows) != 4 {
			t.Errorf("%d rows, want the 4 of namespace sales", len(rows))
		}

		header, rows = table(t, mustRun(t, "status", "-A", kc))
		if header[0] != "NAMESPACE" || len(rows["sales"]) == 0 || len(rows["other"]) == 0 {
			t.Errorf("-A: header %v, rows %v", header, rows)
		}
		if g := rows["other"]; g[1] != "gala" || g[2] != "Open" || g[6] != none {
			t.Errorf("-A gala: %v (nobody waits: no ETA)", g)
		}

		out, errOut, code := run(t, "status", "-n", "empty", kc)
		if code != ExitOK || out != "" || !strings.Contains(errOut, `No TicketEvents found in namespace "empty"`) {
			t.Errorf("empty namespace: exit %d, %q, %q", code, out, errOut)
		}
	})

	t.Run("kubeconfig handling", func(t *testing.T) {
		// The namespace of the current context, from KUBECONFIG.
		kcSales := cl.userKubeconfig(t, envtest.User{Name: "admin2", Groups: []string{"system:masters"}}, "sales")
		t.Setenv("KUBECONFIG", kcSales)
		if _, rows := table(t, mustRun(t, "status")); len(rows) != 4 || rows["summer"] == nil {
			t.Errorf("context namespace sales from KUBECONFIG: %v", rows)
		}
		// -n overrides it; --kubeconfig overrides KUBECONFIG.
		if _, rows := table(t, mustRun(t, "status", "-n", "other")); len(rows) != 1 || rows["gala"] == nil {
			t.Errorf("-n other: %v", rows)
		}
		if _, rows := table(t, mustRun(t, "status", kc)); len(rows) != 0 {
			t.Errorf("--kubeconfig of a context without namespace: %v, want namespace default's none", rows)
		}
		// --context picks another context of the file.
		cfg, err := clientcmd.LoadFromFile(kcSales)
		if err != nil {
			t.Fatal(err)
		}
		other := *cfg.Contexts[cfg.CurrentContext]
		other.Namespace = "other"
		cfg.Contexts["other-ctx"] = &other
		if err := clientcmd.WriteToFile(*cfg, kcSales); err != nil {
			t.Fatal(err)
		}
		if _, rows := table(t, mustRun(t, "status", "--context", "other-ctx")); len(rows) != 1 || rows["gala"] == nil {
			t.Errorf("--context other-ctx: %v", rows)
		}
		_, errOut, code := run(t, "status", "--context", "nope")
		if code != ExitError || !strings.Contains(errOut, `context "nope" does not exist`) {
			t.Errorf("unknown context: exit %d, %q", code, errOut)
		}
		_, errOut, code = run(t, "status", "--kubeconfig", filepath.Join(t.TempDir(), "missing"))
		if code != ExitError || !strings.Contains(errOut, "missing") {
			t.Errorf("missing kubeconfig file: exit %d, %q", code, errOut)
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		before := cl.unstructured(t, "sales", "summer")
		out := mustRun(t, "pause", "summer", "-n", "sales", kc)
		if !strings.Contains(out, `ticketevent "summer" paused`) {
			t.Errorf("pause said %q", out)
		}
		paused := cl.unstructured(t, "sales", "summer")
		cl.onlyChanged(t, before, paused, map[string]any{"paused": true}, "spec", "admission")
		cl.managedBy(t, paused, `{"f:spec":{"f:admission":{"f:paused":{}}}}`)
		if d := detail(t, mustRun(t, "status", "summer", "-n", "sales", kc)); d["Phase"] != "Paused" || d["Queue ends in"] != none {
			t.Errorf("paused status: %v", d)
		}

		// Again: nothing is written.
		out = mustRun(t, "pause", "summer", "-n", "sales", kc)
		if !strings.Contains(out, "already paused") {
			t.Errorf("second pause said %q", out)
		}
		if again := cl.unstructured(t, "sales", "summer"); again.GetResourceVersion() != paused.GetResourceVersion() {
			t.Errorf("second pause wrote: resourceVersion %s -> %s", paused.GetResourceVersion(), again.GetResourceVersion())
		}

		out = mustRun(t, "resume", "summer", "-n", "sales", kc)
		if !strings.Contains(out, `ticketevent "summer" resumed: admission continues at 250/s`) {
			t.Errorf("resume said %q", out)
		}
		resumed := cl.unstructured(t, "sales", "summer")
		cl.onlyChanged(t, paused, resumed, map[string]any{"paused": false}, "spec", "admission")
		out = mustRun(t, "resume", "summer", "-n", "sales", kc)
		if !strings.Contains(out, `ticketevent "summer" is not paused; nothing changed`) {
			t.Errorf("second resume said %q", out)
		}
		if again := cl.unstructured(t, "sales", "summer"); again.GetResourceVersion() != resumed.GetResourceVersion() {
			t.Errorf("second resume wrote")
		}
		if d := detail(t, mustRun(t, "status", "summer", "-n", "sales", kc)); d["Phase"] != "Open" || d["Queue ends in"] != "48s" {
			t.Errorf("resumed status: %v", d)
		}
	})

	t.Run("open-now", func(t *testing.T) {
		before := cl.unstructured(t, "sales", "winter")
		start := time.Now().UTC().Truncate(time.Second)
		out := mustRun(t, "open-now", "winter", "-n", "sales", kc)
		end := time.Now().UTC()
		opened := cl.unstructured(t, "sales", "winter")
		at, _, _ := unstructured.NestedString(opened.Object, "spec", "salesOpenAt")
		openAt, err := time.Parse(time.RFC3339, at)
		if err != nil || openAt.Before(start) || openAt.After(end) {
			t.Fatalf("salesOpenAt %q (%v), want between %s and %s", at, err, start, end)
		}
		if !strings.Contains(out, `ticketevent "winter" opens now: salesOpenAt `+at) {
			t.Errorf("open-now said %q", out)
		}
		cl.onlyChanged(t, before, opened, map[string]any{"salesOpenAt": at}, "spec")
		cl.managedBy(t, opened, `{"f:spec":{"f:salesOpenAt":{}}}`)
		if d := detail(t, mustRun(t, "status", "winter", "-n", "sales", kc)); d["Phase"] != "Open" {
			t.Errorf("after open-now: phase %s", d["Phase"])
		}

		// Already open: refused, nothing written.
		_, errOut, code := run(t, "open-now", "summer", "-n", "sales", kc)
		if code != ExitError || !strings.Contains(errOut, `ticketevent "summer" already opened at `+now.Add(-time.Hour).Format(time.RFC3339)) ||
			!strings.Contains(errOut, "--force") {
			t.Errorf("open-now of an open sale: exit %d, %q", code, errOut)
		}
		summer := cl.unstructured(t, "sales", "summer")
		if at, _, _ := unstructured.NestedString(summer.Object, "spec", "salesOpenAt"); at != now.Add(-time.Hour).Format(time.RFC3339) {
			t.Errorf("refused open-now changed salesOpenAt to %s", at)
		}
		mustRun(t, "open-now", "summer", "-n", "sales", "--force", kc)
		forced := cl.unstructured(t, "sales", "summer")
		at, _, _ = unstructured.NestedString(forced.Object, "spec", "salesOpenAt")
		if openAt, _ := time.Parse(time.RFC3339, at); openAt.Before(start) {
			t.Errorf("--force: salesOpenAt %s", at)
		}
		cl.onlyChanged(t, summer, forced, map[string]any{"salesOpenAt": at}, "spec")
	})

	t.Run("open-now decides on what it read", func(t *testing.T) {
		ctx := context.Background()
		// Changed between the read and the patch: refused, not overwritten.
		stale := cl.event(t, "sales", "late", 6, time.Now().Add(time.Hour), ticketsv1alpha1.Admission{}, nil, "")
		opens := stale.Spec.SalesOpenAt
		changed := stale.DeepCopy()
		changed.Spec.DisplayName = "Late show, renamed"
		if err := cl.c.Update(ctx, changed); err != nil {
			t.Fatal(err)
		}
		_, err := openNow(ctx, cl.c, stale, time.Now(), false)
		if err == nil || !strings.Contains(err.Error(), `ticketevent "late" changed while this command ran; run it again`) {
			t.Fatalf("open-now on a stale read: %v", err)
		}
		if got := cl.unstructured(t, "sales", "late"); got.GetResourceVersion() != changed.ResourceVersion {
			t.Errorf("a refused open-now wrote")
		}
		if err := cl.c.Get(ctx, client.ObjectKeyFromObject(changed), changed); err != nil || !changed.Spec.SalesOpenAt.Equal(&opens) {
			t.Errorf("salesOpenAt %s, want %s unchanged (%v)", changed.Spec.SalesOpenAt, opens, err)
		}

		// Racing commands: one opens the sale, every other is refused
		// (already open, or changed while it ran).
		cl.event(t, "sales", "race", 7, time.Now().Add(time.Hour), ticketsv1alpha1.Admission{}, nil, "")
		const n = 8
		codes := make(chan int, n)
		errs := make(chan string, n)
		for range n {
			go func() {
				var out, errOut bytes.Buffer
				codes <- Run(ctx, []string{"open-now", "race", "-n", "sales", kc}, &out, &errOut)
				errs <- errOut.String()
			}()
		}
		opened := 0
		for range n {
			switch code, errOut := <-codes, <-errs; {
			case code == ExitOK:
				opened++
			case code == ExitError && (strings.Contains(errOut, "already opened") || strings.Contains(errOut, "changed while this command ran")):
			default:
				t.Errorf("racing open-now: exit %d, %q", code, errOut)
			}
		}
		if opened != 1 {
			t.Errorf("%d of %d racing open-now commands opened the sale, want 1", opened, n)
		}
		if te := cl.unstructured(t, "sales", "race"); te.GetGeneration() != 2 {
			t.Errorf("generation %d after the race, want 2: one spec write", te.GetGeneration())
		}
	})

	t.Run("errors and usage", func(t *testing.T) {
		for _, args := range [][]string{
			{"status", "nope", "-n", "sales", kc},
			{"pause", "nope", "-n", "sales", kc},
			{"resume", "nope", "-n", "sales", kc},
			{"open-now", "nope", "-n", "sales", kc},
		} {
			_, errOut, code := run(t, args...)
			if code != ExitError || strings.TrimSpace(errOut) != `error: ticketevent "nope" not found in namespace "sales"` {
				t.Errorf("%v: exit %d, %q", args, code, errOut)
			}
		}
		for _, args := range [][]string{
			{"pause", kc},
			{"resume", "a", "b", kc},
			{"open-now", kc},
			{"status", "a", "b", kc},
			{"status", "summer", "-o", "wide", kc},
			{"status", "summer", "-A", kc},
			{"status", "--no-such-flag", kc},
			{"codes", "issue", kc},
		} {
			if _, errOut, code := run(t, args...); code != ExitUsage || !strings.HasPrefix(errOut, "error: ") ||
				!regexp.MustCompile(`\nSee 'kubectl ticketfair( [a-z-]+)? --help'.\n$`).MatchString(errOut) {
				t.Errorf("%v: exit %d, %q; want %d", args, code, errOut, ExitUsage)
			}
		}
		for _, cmd := range []string{"status", "pause", "resume", "open-now", "gate-credential"} {
			out, _, code := run(t, cmd, "--help")
			if code != ExitOK || !strings.Contains(out, "Usage:\n  kubectl ticketfair "+cmd) || !strings.Contains(out, "--kubeconfig") {
				t.Errorf("%s --help: exit %d, %q", cmd, code, out)
			}
		}
		if out, _, code := run(t, "--help"); code != ExitOK || !strings.Contains(out, "open-now") {
			t.Errorf("--help: exit %d, %q", code, out)
		}
	})

	t.Run("RBAC of docs/kubectl-plugin.md", func(t *testing.T) {
		ctx := context.Background()
		role, binding := docRBAC(t)
		want := []rbacv1.PolicyRule{{APIGroups: []string{ticketsv1alpha1.GroupVersion.Group}, Resources: []string{"ticketevents"},
			Verbs: []string{"get", "list", "patch"}}}
		if !reflect.DeepEqual(role.Rules, want) {
			t.Fatalf("documented rules %+v, want exactly %+v", role.Rules, want)
		}
		if err := cl.c.Create(ctx, role); err != nil {
			t.Fatal(err)
		}
		binding.Namespace = "sales"
		binding.Subjects[0].Name = "seller"
		if err := cl.c.Create(ctx, binding); err != nil {
			t.Fatal(err)
		}
		seller := "--kubeconfig=" + cl.userKubeconfig(t, envtest.User{Name: "seller"}, "sales")
		testenv.WaitFor(t, 30*time.Second, "the RoleBinding in effect", func() bool {
			_, _, code := run(t, "status", "summer", seller)
			return code == ExitOK
		})
		_, all := table(t, mustRun(t, "status", "-n", "sales", kc))
		if _, rows := table(t, mustRun(t, "status", seller)); len(rows) != len(all) || rows["summer"] == nil {
			t.Errorf("seller's list: %v, want the %d of namespace sales", rows, len(all))
		}
		mustRun(t, "pause", "spring", seller) // already paused: get only
		mustRun(t, "resume", "spring", seller)
		mustRun(t, "pause", "spring", seller)
		mustRun(t, "open-now", "summer", "--force", seller)
		mustRun(t, "status", "spring", "-o", "json", seller)

		// Outside the binding's namespace, and across namespaces: refused, saying what is missing.
		_, errOut, code := run(t, "status", "gala", "-n", "other", seller)
		if code != ExitError || !strings.Contains(errOut, `not allowed to get ticketevents.tickets.ticketfair.io in namespace "other": your user needs the verb "get"`) {
			t.Errorf("get in other: exit %d, %q", code, errOut)
		}
		_, errOut, code = run(t, "status", "-A", seller)
		if code != ExitError || !strings.Contains(errOut, `not allowed to list ticketevents.tickets.ticketfair.io in any namespace`) ||
			!strings.Contains(errOut, "ClusterRoleBinding") {
			t.Errorf("list -A: exit %d, %q", code, errOut)
		}

		// A user who may read but not patch is told the verb it lacks.
		if err := cl.c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "sales", Name: "viewer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: want[0].APIGroups, Resources: want[0].Resources, Verbs: []string{"get", "list"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := cl.c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "sales", Name: "viewer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "viewer"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "viewer"}}}); err != nil {
			t.Fatal(err)
		}
		viewer := "--kubeconfig=" + cl.userKubeconfig(t, envtest.User{Name: "viewer"}, "sales")
		testenv.WaitFor(t, 30*time.Second, "the viewer's RoleBinding in effect", func() bool {
			_, _, code := run(t, "status", "summer", viewer)
			return code == ExitOK
		})
		before := cl.unstructured(t, "sales", "summer")
		_, errOut, code = run(t, "pause", "summer", viewer)
		if code != ExitError || !strings.Contains(errOut, `not allowed to patch ticketevents.tickets.ticketfair.io in namespace "sales": your user needs the verb "patch"`) {
			t.Errorf("viewer's pause: exit %d, %q", code, errOut)
		}
		if after := cl.unstructured(t, "sales", "summer"); after.GetResourceVersion() != before.GetResourceVersion() {
			t.Error("a refused pause wrote")
		}
	})

	// Last: it removes the CRD.
	t.Run("CRD not installed", func(t *testing.T) {
		ctx := context.Background()
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName("ticketevents." + ticketsv1alpha1.GroupVersion.Group)
		if err := cl.c.Delete(ctx, crd); err != nil {
			t.Fatal(err)
		}
		var errOut string
		testenv.WaitFor(t, 60*time.Second, "the CRD gone from discovery", func() bool {
			var code int
			_, errOut, code = run(t, "status", "summer", "-n", "sales", kc)
			return code == ExitError && strings.Contains(errOut, "is the ticketfair CRD installed?")
		})
	})
}

// statusEqual compares EventStatus values, times by the instant.
func statusEqual(a, b EventStatus) bool {
	ta, tb := a.UpdatedAt, b.UpdatedAt
	if (ta == nil) != (tb == nil) || (ta != nil && !ta.Equal(tb)) || !a.SalesOpenAt.Equal(&b.SalesOpenAt) {
		return false
	}
	a.UpdatedAt, b.UpdatedAt, a.SalesOpenAt, b.SalesOpenAt = nil, nil, metav1.Time{}, metav1.Time{}
	return reflect.DeepEqual(a, b)
}

func (cl *cluster) unstructured(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ticketsv1alpha1.GroupVersion.WithKind("TicketEvent"))
	if err := cl.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// onlyChanged fails unless after is before with the fields of set (at
// path) set, besides the bookkeeping of any write: resourceVersion,
// generation (one more, for a spec change) and managedFields. Status and
// every other field must be as they were.
func (cl *cluster) onlyChanged(t *testing.T, before, after *unstructured.Unstructured, set map[string]any, path ...string) {
	t.Helper()
	if after.GetGeneration() != before.GetGeneration()+1 {
		t.Errorf("generation %d -> %d, want one more", before.GetGeneration(), after.GetGeneration())
	}
	want := before.DeepCopy()
	for k, v := range set {
		if err := unstructured.SetNestedField(want.Object, v, append(slices.Clone(path), k)...); err != nil {
			t.Fatal(err)
		}
	}
	got := after.DeepCopy()
	for _, u := range []*unstructured.Unstructured{want, got} {
		u.SetResourceVersion("")
		u.SetGeneration(0)
		u.SetManagedFields(nil)
	}
	if !reflect.DeepEqual(want.Object, got.Object) {
		a, _ := json.MarshalIndent(want.Object, "", " ")
		b, _ := json.MarshalIndent(got.Object, "", " ")
		t.Errorf("the patch changed more than %v at %v:\nwant %s\ngot  %s", set, path, a, b)
	}
}

// managedBy fails unless the plugin's field manager owns exactly fields.
func (cl *cluster) managedBy(t *testing.T, u *unstructured.Unstructured, fields string) {
	t.Helper()
	for _, m := range u.GetManagedFields() {
		if m.Manager != fieldManager {
			continue
		}
		if m.Subresource != "" || m.FieldsV1 == nil || m.FieldsV1.GetRawString() != fields {
			t.Errorf("%s manages %s (subresource %q), want %s", fieldManager, m.FieldsV1, m.Subresource, fields)
		}
		return
	}
	t.Errorf("no managedFields entry of %s", fieldManager)
}

// docRBAC reads the ClusterRole and RoleBinding documented in
// docs/kubectl-plugin.md: the test applies what the documentation says.
func docRBAC(t *testing.T) (*rbacv1.ClusterRole, *rbacv1.RoleBinding) {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "kubectl-plugin.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(# RBAC of kubectl-ticketfair.*?)```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("docs/kubectl-plugin.md has no yaml block starting with # RBAC of kubectl-ticketfair")
	}
	var role *rbacv1.ClusterRole
	var binding *rbacv1.RoleBinding
	for _, part := range strings.Split(string(block[1]), "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(part), &tm); err != nil {
			t.Fatal(err)
		}
		var obj any
		switch tm.Kind {
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			obj = role
		case "RoleBinding":
			binding = &rbacv1.RoleBinding{}
			obj = binding
		default:
			t.Fatalf("unexpected kind %q in the documented RBAC", tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(part), obj); err != nil {
			t.Fatal(err)
		}
	}
	if role == nil || binding == nil || len(binding.Subjects) != 1 || binding.RoleRef.Name != role.Name {
		t.Fatalf("documented RBAC: role %v, binding %v", role, binding)
	}
	return role, binding
}
