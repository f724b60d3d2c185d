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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// The chart's monitoring files, read where the chart keeps them.
var (
	rulesFile     = filepath.Join("..", "..", "..", "charts", "ticketfair", "monitoring", "rules.yaml")
	dashboardFile = filepath.Join("..", "..", "..", "charts", "ticketfair", "monitoring", "dashboard.json")
)

// tool finds a binary the monitoring tests need, failing instead of
// skipping where services are required.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testenv.Unavailable(t, name, fmt.Errorf("%w (Debian package prometheus)", err))
	}
	return p
}

// promtool accepts the rules, and its unit tests (testdata/rules_test.yaml)
// see every alert fire when it should and only then.
func TestAlertRules(t *testing.T) {
	promtool := tool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", filepath.Join("testdata", "rules_test.yaml")}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// The dashboard loads strictly with the Grafana dashboard schema (the
// foundation SDK's types, generated from it) and validates.
func TestDashboardSchema(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	plugins.RegisterDefaultPlugins()
	// The classic dashboard JSON model is what Grafana's sidecar provisions
	// from ConfigMaps; dashboardv2 is the newer resource format.
	//lint:ignore SA1019 the chart ships the classic model
	var d dashboard.Dashboard
	if err := d.UnmarshalJSONStrict(b); !noErrors(err) {
		t.Fatalf("dashboard.json against the Grafana dashboard schema: %v", err)
	}
	if err := d.Validate(); !noErrors(err) {
		t.Fatalf("dashboard.json: %v", err)
	}
	// The check is strict: a misspelt field fails it.
	bad := strings.Replace(string(b), `"gridPos"`, `"gridPosition"`, 1)
	//lint:ignore SA1019 the chart ships the classic model
	if err := new(dashboard.Dashboard).UnmarshalJSONStrict([]byte(bad)); noErrors(err) {
		t.Fatal("a panel with an unknown field passed the schema")
	}
	if len(dashboardExprs(t)) < 15 {
		t.Fatalf("only %d queries in the dashboard", len(dashboardExprs(t)))
	}
}

// dashboardExprs returns every panel query, by panel title.
func dashboardExprs(t testing.TB) map[string]string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out[p.Title+" "+tg.RefID] = tg.Expr
		}
	}
	return out
}

var metricName = regexp.MustCompile(`\bticketfair_[a-z0-9_]+`)

// usedMetrics are the metric names the dashboard and the alerts read.
func usedMetrics(t testing.TB) []string {
	t.Helper()
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(rules)
	for _, e := range dashboardExprs(t) {
		text += "\n" + e
	}
	set := map[string]bool{}
	for _, m := range metricName.FindAllString(text, -1) {
		set[m] = true
	}
	var out []string
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// observeSale runs a real Prometheus against the local sale's services
// (scraping every second, with the chart's rules) and, at the end of the
// sale, checks what the dashboard and the alerts rely on:
//   - every metric they name is in the live /metrics of a service;
//   - every dashboard query returns data;
//   - no critical alert is pending or firing in a healthy sale.
func observeSale(t *testing.T) func(ctx context.Context, urls map[string]string) func() {
	prom := tool(t, "prometheus")
	return func(ctx context.Context, urls map[string]string) func() {
		dir := t.TempDir()
		var targets strings.Builder
		for _, name := range []string{"queue", "booking", "relay", "tickets"} {
			u, err := url.Parse(urls[name])
			if err != nil || u.Host == "" {
				t.Errorf("no URL for %s: %q", name, urls[name])
				continue
			}
			fmt.Fprintf(&targets, "      - targets: [%q]\n        labels: {namespace: demo, ticketevent: demo, pod: %s}\n", u.Host, name)
		}
		rules, _ := filepath.Abs(rulesFile)
		cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%q]\nscrape_configs:\n  - job_name: ticketfair\n    static_configs:\n%s", rules, targets.String())
		if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+addr, "--log.level=warn")
		logf, _ := os.Create(filepath.Join(dir, "prometheus.log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() }
		base := "http://" + addr
		testenv.WaitFor(t, 30*time.Second, "prometheus ready", func() bool {
			resp, err := http.Get(base + "/-/ready")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
		return func() {
			defer stop()
			// The live /metrics of each service has every metric used.
			var live strings.Builder
			for _, name := range []string{"queue", "booking", "relay", "tickets"} {
				resp, err := http.Get(urls[name] + "/metrics")
				if err != nil {
					t.Errorf("%s /metrics: %v", name, err)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				live.Write(b)
			}
			exposed := map[string]bool{}
			for _, line := range strings.Split(live.String(), "\n") {
				if line == "" || line[0] == '#' {
					continue
				}
				exposed[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
			}
			used := usedMetrics(t)
			for _, m := range used {
				if !exposed[m] {
					t.Errorf("the dashboard or the alerts use %s, which no service exports", m)
				}
			}
			// Every dashboard query answers with data. The door's scans
			// come last, just before this: a rate needs two scrapes of them.
			deadline := time.Now().Add(15 * time.Second)
			for title, expr := range dashboardExprs(t) {
				q := strings.NewReplacer("$namespace", "demo", "$ticketevent", "demo").Replace(expr)
				n, err := promQuery(base, q)
				for (err != nil || n == 0) && time.Now().Before(deadline) {
					time.Sleep(500 * time.Millisecond)
					n, err = promQuery(base, q)
				}
				if err != nil || n == 0 {
					t.Errorf("panel %q: %s: %d series, %v", title, q, n, err)
				}
			}
			// The rules evaluate, and a healthy sale raises no critical alert.
			if n, err := promQuery(base, `ticketfair:http_requests:rate5m`); err != nil || n == 0 {
				t.Errorf("recording rule: %d series, %v", n, err)
			}
			if n, err := promQuery(base, `ALERTS{severity="critical"}`); err != nil || n != 0 {
				body, _ := promRaw(base, `ALERTS`)
				t.Errorf("critical alerts in a healthy sale: %d, %v: %s", n, err, body)
			}
			t.Logf("monitoring: %d metrics used by the dashboard and alerts, all exported; %d dashboard queries answered", len(used), len(dashboardExprs(t)))
		}
	}
}

// promQuery runs an instant query and returns the number of series.
func promQuery(base, q string) (int, error) {
	body, err := promRaw(base, q)
	if err != nil {
		return 0, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", r.Status, r.Error)
	}
	return len(r.Data.Result), nil
}

func promRaw(base, q string) ([]byte, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// noErrors: the foundation SDK returns an empty cog.BuildErrors for none.
func noErrors(err error) bool {
	var be cog.BuildErrors
	return err == nil || (errors.As(err, &be) && len(be) == 0)
}
