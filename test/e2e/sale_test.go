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

// Package e2e runs the product's main path on a real single-node cluster
// (hack/cluster.sh: kubelet, containerd, runc, kube-proxy, PodSecurity):
// the chart installed with Helm, a TicketEvent applied with kubectl, and a
// two-phase sale (a members' presale with access codes, then the general
// sale with weighted queues) driven by `ticketfair-dev loadtest` through
// the Services, disrupted while it runs, then audited with
// `ticketfair-dev audit`. Run it with
// `make e2e`, which builds the image, brings the cluster up when it is not
// and runs this test inside the cluster's network namespace.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

const (
	operatorNS = "ticketfair-system"
	saleNS     = "e2e-sale"
	// The sale: maxActive, not the admission rate, limits it, so raising
	// maxActive shows at once in the active count.
	maxActive       = 40
	raisedMaxActive = 60
)

func TestSaleOnKubernetes(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := &cli{
		t:          t,
		kubectl:    env(t, "KUBECTL", ""),
		helm:       env(t, "HELM", ""),
		kubeconfig: env(t, "TICKETFAIR_E2E_KUBECONFIG", ""),
	}
	nodeIP := env(t, "TICKETFAIR_E2E_NODE_IP", "")
	image := env(t, "TICKETFAIR_E2E_IMAGE", "ticketfair:dev")
	bin := env(t, "TICKETFAIR_E2E_BINARY", "") // ticketfair-dev: loadtest and audit
	tool := env(t, "TICKETFAIR_E2E_TOOL", "")  // ticketfair, as in the image: access-codes
	customers, _ := strconv.Atoi(env(t, "TICKETFAIR_E2E_CUSTOMERS", "5000"))
	logs := env(t, "TICKETFAIR_E2E_LOGS", t.TempDir())

	svc := startServices(t, nodeIP)
	t.Logf("managed services: redis %s, postgres %s, kafka %v", svc.redisURL, svc.databaseURL, svc.brokers)

	// Namespaces under restricted pod security, cleaned up even on failure.
	for _, ns := range []string{operatorNS, saleNS} {
		c.apply(fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
    ticketfair.io/e2e: "true"
`, ns))
		eventually(t, "ServiceAccount default in "+ns, time.Minute, func() error {
			_, err := c.run(context.Background(), "", c.kubectl, "-n", ns, "get", "serviceaccount", "default")
			return err
		})
	}
	t.Cleanup(func() { cleanup(t, c, logs) })

	// 1. helm install, with the locally built image (no registry).
	repo, tag, _ := strings.Cut(image, ":")
	start := time.Now()
	helmCtx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if _, err := c.run(helmCtx, "", c.helm, "install", "ticketfair", filepath.Join(root, "charts/ticketfair"),
		"-n", operatorNS, "--set", "image.repository="+repo, "--set", "image.tag="+tag,
		"--set", "image.pullPolicy=Never", "--set", "replicaCount=1",
		"--wait", "--timeout", "5m"); err != nil {
		t.Fatal(err)
	}
	helmReady := time.Since(start)
	t.Logf("helm install -> operator available: %v", helmReady.Round(100*time.Millisecond))

	// 2. The Secrets the TicketEvent refers to, as the README tells a user.
	identitySecret, webhookSecret := "e2e-identity-"+strconv.FormatInt(time.Now().UnixNano(), 36), "e2e-webhook-secret"
	for name, kv := range map[string][2]string{
		"ticketfair-redis":    {"url", svc.redisURL},
		"ticketfair-postgres": {"url", svc.databaseURL},
		"ticketfair-identity": {"hmac-secret", identitySecret},
		"ticketfair-payment":  {"webhook-secret", webhookSecret},
	} {
		c.k("-n", saleNS, "create", "secret", "generic", name, "--from-literal="+kv[0]+"="+kv[1])
	}

	// 3. The TicketEvent: the sample, smaller, its presale opening in a
	// minute and the general sale presaleFor later.
	te := sampleEvent(t, root, svc.brokers)
	withMail(t, te, svc.smtp)
	manifest, err := yaml.Marshal(te)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	c.apply(string(manifest))
	c.kLong(5*time.Minute, "-n", saleNS, "wait", "--for=condition=Ready", "te/"+te.Name)
	teReady := time.Since(start)
	t.Logf("kubectl apply te -> Ready: %v (helm install -> Ready: %v)", teReady.Round(100*time.Millisecond), (helmReady + teReady).Round(100*time.Millisecond))

	checkMigrationGated(t, c, te)
	checkPodSecurity(t, c)

	clusterIP := func(comp render.Component) string {
		return "http://" + strings.TrimSpace(c.k("-n", saleNS, "get", "svc", render.Name(te, comp), "-o", "jsonpath={.spec.clusterIP}")) + ":8080"
	}
	queueURL, bookingURL, ticketsURL := clusterIP(render.Queue), clusterIP(render.Booking), clusterIP(render.Tickets)

	// 3b. Access codes for the presale, issued with `ticketfair
	// access-codes` from the key in the keys Secret the operator made: one
	// batch for the crowd's code holders, a later one and one of another
	// event for the probes.
	presaleAt, generalAt := phaseOpensAt(te, presale), phaseOpensAt(te, generalSale)
	keyFile := codeKeyFile(t, c, te, logs)
	holders := int(math.Ceil(codeHoldersShare * float64(customers)))
	codesCSV, codes := issueCodes(t, tool, keyFile, filepath.Join(logs, "codes.csv"), te.Spec.EventID, presale, 1, holders)
	_, probe := issueCodes(t, tool, keyFile, filepath.Join(logs, "codes-probe.csv"), te.Spec.EventID, presale, holders+1, 1)
	_, other := issueCodes(t, tool, keyFile, filepath.Join(logs, "codes-other-event.csv"), te.Spec.EventID+1, presale, 1, 1)
	if slices.Contains(codes, probe[0]) || slices.Contains(codes, other[0]) {
		t.Fatalf("a later batch or another event's batch repeats a code of the first")
	}
	t.Logf("ticketfair access-codes: %d codes for phase %s (%s), e.g. %s", len(codes), presale, codesCSV, codes[0])
	// The probes need the presale not yet open.
	if time.Until(presaleAt) > 5*time.Second {
		probeJoins(t, queueURL, te, identitySecret, probe[0], other[0])
	} else {
		t.Errorf("the presale opens in %v: too soon to probe the joins before it", time.Until(presaleAt).Round(time.Second))
	}

	ctx, stopSampling := context.WithCancel(context.Background())
	defer stopSampling()
	stats := &statsPoller{}
	go stats.run(ctx, fmt.Sprintf("%s/events/%d/stats", queueURL, te.Spec.EventID))
	use := &usage{}
	go sampleUsage(ctx, c, use)
	exits := watchExits(ctx, t, c)

	// 4. The sale: a crowd through the Services' ClusterIPs.
	resultPath := filepath.Join(logs, "loadtest.json")
	lt := exec.Command(bin, "loadtest", "--queue-url", queueURL, "--booking-url", bookingURL, "--tickets-url", ticketsURL,
		"--event-id", strconv.FormatInt(te.Spec.EventID, 10), "--sales-open-at", te.Spec.SalesOpenAt.UTC().Format(time.RFC3339),
		"--identity-issuer", te.Spec.Identity.Issuer, "--identity-audience", te.Spec.Identity.Audience,
		"--customers", strconv.Itoa(customers), "--access-codes", codesCSV,
		"--profile", fmt.Sprintf("prequeue=0.05,joinwindow=20s,holdexpire=0,thinktime=1s,members=%g,codeholders=%g", membersShare, codeHoldersShare),
		"--deadline", "12m", "--seed", "12", "--report-json", resultPath, "--email-claim", "email")
	lt.Env = append(os.Environ(), "TICKETFAIR_LOADTEST_IDENTITY_SECRET="+identitySecret, "TICKETFAIR_LOADTEST_WEBHOOK_SECRET="+webhookSecret)
	ltLog, err := os.Create(filepath.Join(logs, "loadtest.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer ltLog.Close()
	lt.Stdout, lt.Stderr = ltLog, ltLog
	if err := lt.Start(); err != nil {
		t.Fatal(err)
	}
	ltDone := make(chan error, 1)
	go func() { ltDone <- lt.Wait() }()
	defer func() {
		if lt.ProcessState == nil {
			_ = lt.Process.Kill()
			<-ltDone
		}
	}()

	// The sale has opened and admits.
	eventually(t, "admissions after opening", 3*time.Minute, func() error {
		if s := stats.last(); s.AdmittedTotal < 2*maxActive || s.Waiting < maxActive {
			return fmt.Errorf("stats %+v", s.Stats)
		}
		return nil
	})
	// The presale: kubectl get te shows it, and the status its queues:
	// members and code holders admitted, the general queue not.
	var getTE string
	eventually(t, "kubectl get te shows the presale", max(time.Until(generalAt), time.Second), func() error {
		getTE = strings.TrimSpace(c.k("-n", saleNS, "get", "te"))
		st := saleStatus(c, te)
		m, _ := queueStatus(st, membersQueue)
		if p := phaseColumn(getTE); p != presale || st.Phase != presale || m.Admitted == 0 {
			return fmt.Errorf("phase column %q, status %+v", p, st)
		}
		if g, ok := queueStatus(st, generalQueue); !ok || g.Admitted != 0 || g.Weight != generalWeight {
			return fmt.Errorf("general queue in the presale: %+v (listed %v), want weight %d, none admitted", g, ok, generalWeight)
		}
		return nil
	})
	t.Logf("kubectl get te\n%s\nqueues %+v", getTE, saleStatus(c, te).Queues)

	// 5a. Live spec change: the running admitter follows within 5 s.
	c.k("-n", saleNS, "patch", "te", te.Name, "--type=merge", "-p", fmt.Sprintf(`{"spec":{"admission":{"maxActive":%d}}}`, raisedMaxActive))
	followed := eventually(t, "admitter follows maxActive", 20*time.Second, func() error {
		if s := stats.last(); s.Active <= maxActive {
			return fmt.Errorf("active %d, waiting %d", s.Active, s.Waiting)
		}
		return nil
	})
	t.Logf("maxActive %d -> %d: active above the old limit after %v", maxActive, raisedMaxActive, followed.Round(100*time.Millisecond))
	if followed > 5*time.Second {
		t.Errorf("the admitter followed spec.admission.maxActive after %v, want within 5s", followed)
	}

	// 5b. Admitter failover: delete the queue pod that holds the Lease.
	leader := leaseHolder(t, c, render.LeaseName(te))
	failStart := time.Now()
	c.k("-n", saleNS, "delete", "pod", leader, "--wait=false")
	var next string
	handover := eventually(t, "Lease taken over", time.Minute, func() error {
		if next = leaseHolder(t, c, render.LeaseName(te)); next == leader || next == "" {
			return fmt.Errorf("held by %q", next)
		}
		return nil
	})
	before := stats.last().AdmittedTotal
	eventually(t, "admission after failover", time.Minute, func() error {
		if s := stats.last(); s.AdmittedTotal <= before {
			return fmt.Errorf("admitted %d", s.AdmittedTotal)
		}
		return nil
	})
	failGap := stats.admissionGap(failStart, time.Now())
	t.Logf("admitter failover: Lease %s -> %s after %v; admission gap %v", leader, next, handover.Round(100*time.Millisecond), failGap.Round(100*time.Millisecond))

	// 5c. Rolling restart of booking mid-sale.
	checkGrace(t, c, te)
	rollStart := time.Now()
	c.k("-n", saleNS, "rollout", "restart", "deploy/"+render.Name(te, render.Booking))
	c.kLong(5*time.Minute, "-n", saleNS, "rollout", "status", "deploy/"+render.Name(te, render.Booking))
	rollEnd := stats.last()
	t.Logf("booking rollout restart done in %v; sold %d of %d", time.Since(rollStart).Round(100*time.Millisecond), rollEnd.Sold, seatCount(te))
	if rollEnd.Sold >= int64(seatCount(te)) || rollEnd.SoldOut {
		t.Errorf("the sale sold out before the rollout finished: the disruptions did not all happen during the sale (lower the admission or raise the seats)")
	}

	// 5d. kubectl get te shows the figures moving.
	getTE2 := strings.TrimSpace(c.k("-n", saleNS, "get", "te"))
	t.Logf("kubectl get te\n%s", getTE2)
	if getTE2 == getTE {
		t.Errorf("kubectl get te unchanged during the sale:\n%s", getTE2)
	}

	// 5e. The general sale opens: kubectl get te shows it; the status has
	// members at weight 3 next to general at 1, both waiting, and
	// admissions from general.
	eventually(t, "kubectl get te shows the general sale", time.Until(generalAt)+time.Minute, func() error {
		out := strings.TrimSpace(c.k("-n", saleNS, "get", "te"))
		if p := phaseColumn(out); p != generalSale {
			return fmt.Errorf("phase column %q:\n%s", p, out)
		}
		t.Logf("kubectl get te\n%s", out)
		return nil
	})
	var general ticketsv1alpha1.SaleStatus
	var bothWaited bool
	eventually(t, "status.sale.queues in the general sale", time.Minute, func() error {
		general = saleStatus(c, te)
		m, okm := queueStatus(general, membersQueue)
		g, okg := queueStatus(general, generalQueue)
		if !okm || !okg || m.Weight != membersWeight || g.Weight != generalWeight {
			return fmt.Errorf("queues %+v: want %s at weight %d and %s at %d", general.Queues, membersQueue, membersWeight, generalQueue, generalWeight)
		}
		bothWaited = bothWaited || (m.Waiting > 0 && g.Waiting > 0)
		if g.Admitted == 0 || !bothWaited {
			return fmt.Errorf("queues %+v: want admissions from %s and people waiting in both", general.Queues, generalQueue)
		}
		return nil
	})
	t.Logf("status.sale in the general sale: phase %s, queues %+v", general.Phase, general.Queues)
	if cq, ok := queueStatus(general, codesQueue); !ok || cq.Admitted == 0 {
		t.Errorf("status.sale.queues: %s %+v (listed %v), want admissions", codesQueue, cq, ok)
	}

	// 6. The sale ends; audit it.
	select {
	case err := <-ltDone:
		if err != nil {
			t.Errorf("loadtest: %v (%s)", err, filepath.Join(logs, "loadtest.log"))
		}
	case <-time.After(13 * time.Minute):
		t.Fatal("loadtest still running after 13m")
	}
	stopSampling()
	// From the stats the queue served during the sale: no queue admitted
	// before its phase opened, and while members and general both waited
	// members had 3 of every 4 admissions.
	if early := stats.earlyAdmissions(map[string]time.Time{membersQueue: presaleAt, codesQueue: presaleAt, generalQueue: generalAt}); len(early) > 0 {
		t.Errorf("admissions before their phase opened: %v", early)
	}
	sharedM, sharedG := stats.sharedAdmissions(generalAt.Add(time.Second))
	share, want, ok := weightShare(sharedM, sharedG)
	t.Logf("while both waited: %s %d, %s %d admitted: %s's share %.3f, its weight's %.3f", membersQueue, sharedM, generalQueue, sharedG, membersQueue, share, want)
	switch {
	case sharedM+sharedG < 40:
		t.Errorf("only %d admissions while %s and %s both waited: too few to measure the weights", sharedM+sharedG, membersQueue, generalQueue)
	case !ok:
		t.Errorf("%s's share %.3f while both waited, want %.3f ±0.05", membersQueue, share, want)
	}
	b, err := os.ReadFile(resultPath)
	if err != nil {
		t.Fatal(err)
	}
	// The JSON of `ticketfair-dev loadtest --report-json` (loadtest.Result).
	var res struct {
		Endpoints []struct {
			Endpoint   string         `json:"endpoint"`
			Requests   uint64         `json:"requests"`
			ByStatus   map[int]uint64 `json:"byStatus"`
			FirstError string         `json:"firstError"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	audit := exec.Command(bin, "audit", "--event-id", strconv.FormatInt(te.Spec.EventID, 10),
		"--max-active", strconv.Itoa(raisedMaxActive), "--loadtest-json", resultPath,
		"--report-json", filepath.Join(logs, "audit.json"), "--wait", "2m",
		"--sales-open-at", presaleAt.UTC().Format(time.RFC3339), "--phases", phasesJSON(t, c, te))
	audit.Env = append(os.Environ(), "TICKETFAIR_AUDIT_DATABASE_URL="+svc.databaseURL, "TICKETFAIR_AUDIT_REDIS_URL="+svc.redisURL)
	out, err := audit.CombinedOutput()
	t.Logf("ticketfair-dev audit\n%s", out)
	if err != nil {
		t.Errorf("audit: %v", err)
	}
	// The JSON of `ticketfair-dev audit --report-json` (demo.Report).
	var rep struct {
		SeatsSold int64 `json:"seatsSold"`
	}
	if b, err := os.ReadFile(filepath.Join(logs, "audit.json")); err == nil {
		_ = json.Unmarshal(b, &rep)
	}
	if rep.SeatsSold != int64(seatCount(te)) {
		t.Errorf("sold %d seats of %d", rep.SeatsSold, seatCount(te))
	}
	checkAuditQueues(t, readAuditQueues(t, filepath.Join(logs, "audit.json")))
	checkMails(t, c, te, svc)
	// Only 503 with Retry-After (retried by the crowd) may fail a request:
	// no connection refused or reset, no other 5xx.
	for _, e := range res.Endpoints {
		for code, n := range e.ByStatus {
			if code == 0 || (code >= 500 && code != 503) {
				t.Errorf("%s: %d requests ended with status %d (0: transport error, the first: %q) during the disruptions", e.Endpoint, n, code, e.FirstError)
			}
		}
	}
	for pod, code := range exits.codes() {
		if code != 0 {
			t.Errorf("pod %s's container exited %d on termination, want 0 (a clean shutdown within the grace period)", pod, code)
		}
	}
	t.Logf("terminated containers: %v", exits.codes())

	// 7. Resources measured under the sale.
	served := map[string]uint64{}
	for _, e := range res.Endpoints {
		switch e.Endpoint {
		case "join", "poll", "leave", "stats":
			served["queue"] += e.Requests
		case "hold", "hold best", "hold split", "hold standing", "seats", "webhook":
			served["booking"] += e.Requests
		case "tickets":
			served["tickets"] += e.Requests
		}
	}
	var lines []string
	for comp, p := range use.byComponent() {
		line := fmt.Sprintf("%-10s peak RSS %4.0f MiB  peak CPU %.2f cores  CPU %.1f s", comp, float64(p.rss)/(1<<20), p.cpu, p.cpuTotal)
		if n := served[comp]; n > 0 {
			line += fmt.Sprintf(" for %d requests: %.2f ms per request", n, 1000*p.cpuTotal/float64(n))
		}
		lines = append(lines, line)
		// The operator's defaults come from this measurement: a pod's peak
		// must stay within its default memory request.
		if comp != "operator" {
			def := render.DefaultResources(render.Component(comp))
			if req := def.Requests.Memory(); p.rss > req.Value() {
				t.Errorf("%s: peak RSS %d MiB above its default memory request %s", comp, p.rss>>20, req)
			}
		}
	}
	slices.Sort(lines)
	t.Logf("per pod, under the sale:\n%s", strings.Join(lines, "\n"))

	// 8. Deleting the TicketEvent: the garbage collector removes every child.
	children := ownedBy(t, c, te)
	if len(children) < 10 {
		t.Fatalf("only %d objects owned by the TicketEvent: %v", len(children), children)
	}
	c.kLong(2*time.Minute, "-n", saleNS, "delete", "te", te.Name, "--wait")
	eventually(t, "garbage collection of the TicketEvent's children", 3*time.Minute, func() error {
		var left []string
		for _, o := range children {
			out, err := c.run(context.Background(), "", c.kubectl, "-n", saleNS, "get", o, "--ignore-not-found", "-o", "name")
			if err != nil {
				return err
			}
			if strings.TrimSpace(out) != "" {
				left = append(left, o)
			}
		}
		var pods corev1.PodList
		c.getJSON(&pods, "-n", saleNS, "get", "pods")
		for _, p := range pods.Items {
			left = append(left, "pod/"+p.Name)
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	t.Logf("kubectl delete te: %d children and every pod garbage-collected", len(children))

	// 9. helm uninstall keeps the CRD (crds.keep).
	uctx, ucancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer ucancel()
	if _, err := c.run(uctx, "", c.helm, "uninstall", "ticketfair", "-n", operatorNS, "--wait", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	c.k("get", "crd", "ticketevents.tickets.ticketfair.io")
	t.Log("helm uninstall: the operator is gone, the CRD stays")
}

// sampleEvent is config/samples' TicketEvent, scaled to this machine:
// 2,000 seats, a Kafka broker of this test, every workload's resources left
// to the operator's defaults (which this sale measures), no autoscaler;
// with the presale and the general sale (withPhases).
func sampleEvent(t *testing.T, root string, brokers []string) *ticketsv1alpha1.TicketEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "config/samples/tickets_v1alpha1_ticketevent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var te ticketsv1alpha1.TicketEvent
	if err := yaml.UnmarshalStrict(b, &te); err != nil {
		t.Fatal(err)
	}
	te.Namespace = saleNS
	te.Spec.SalesOpenAt = metav1.NewTime(time.Now().Add(75 * time.Second).Truncate(time.Second))
	withPhases(&te)
	te.Spec.Seating.Sections = te.Spec.Seating.Sections[:2]
	for i := range te.Spec.Seating.Sections {
		te.Spec.Seating.Sections[i].Rows, te.Spec.Seating.Sections[i].SeatsPerRow = 20, 50
	}
	a := &te.Spec.Admission
	a.MaxActive, a.RatePerSecond = maxActive, 50
	a.ClaimTimeout = &metav1.Duration{Duration: 20 * time.Second}
	te.Spec.Holds.TTL = &metav1.Duration{Duration: time.Minute}
	te.Spec.Payment.Timeout = &metav1.Duration{Duration: 30 * time.Second}
	te.Spec.Kafka.Brokers = brokers
	te.Spec.Queue.Replicas, te.Spec.Queue.Resources = ptr.To(int32(2)), nil
	te.Spec.Booking.Autoscaling, te.Spec.Booking.Replicas, te.Spec.Booking.Resources = nil, ptr.To(int32(2)), nil
	te.Spec.Relay.Replicas = ptr.To(int32(1))
	te.Spec.Tickets.Replicas = ptr.To(int32(1))
	return &te
}

func seatCount(te *ticketsv1alpha1.TicketEvent) int {
	n := 0
	for _, s := range te.Spec.Seating.Sections {
		n += int(s.Rows * s.SeatsPerRow)
	}
	return n
}

// checkMigrationGated: the real Job controller ran the migration Job to
// completion before the booking Deployment existed.
func checkMigrationGated(t *testing.T, c *cli, te *ticketsv1alpha1.TicketEvent) {
	t.Helper()
	var jobs batchv1.JobList
	c.getJSON(&jobs, "-n", saleNS, "get", "jobs")
	if len(jobs.Items) != 1 || jobs.Items[0].Status.Succeeded != 1 || jobs.Items[0].Status.CompletionTime == nil {
		t.Fatalf("migration Job: %+v", jobs.Items)
	}
	done := jobs.Items[0].Status.CompletionTime.Time
	var d appsv1.Deployment
	c.getJSON(&d, "-n", saleNS, "get", "deploy", render.Name(te, render.Booking))
	if d.CreationTimestamp.Time.Before(done) {
		t.Errorf("booking Deployment created %v, before the migration Job completed %v", d.CreationTimestamp.Time, done)
	}
	t.Logf("migration Job %s completed %v; booking Deployment created %v", jobs.Items[0].Name, done.Format(time.TimeOnly), d.CreationTimestamp.Format(time.TimeOnly))
}

// checkPodSecurity: every pod of the sale and of the operator runs, under
// restricted enforcement, as the image's non-root user with a read-only
// root filesystem.
func checkPodSecurity(t *testing.T, c *cli) {
	t.Helper()
	for _, ns := range []string{operatorNS, saleNS} {
		var pods corev1.PodList
		c.getJSON(&pods, "-n", ns, "get", "pods", "--field-selector=status.phase=Running")
		if len(pods.Items) == 0 {
			t.Fatalf("no running pods in %s", ns)
		}
		for _, p := range pods.Items {
			for _, ctr := range p.Spec.Containers {
				if sc := ctr.SecurityContext; sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
					t.Errorf("pod %s/%s container %s: root filesystem not read-only", ns, p.Name, ctr.Name)
				}
			}
		}
	}
}

// checkGrace: a booking pod gets more time to stop than it takes: the
// drain after SIGTERM (its endpoints leave kube-proxy meanwhile) plus the
// server's shutdown grace must fit in terminationGracePeriodSeconds.
func checkGrace(t *testing.T, c *cli, te *ticketsv1alpha1.TicketEvent) {
	t.Helper()
	var d appsv1.Deployment
	c.getJSON(&d, "-n", saleNS, "get", "deploy", render.Name(te, render.Booking))
	grace := time.Duration(ptr.Deref(d.Spec.Template.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
	duration := func(name string) time.Duration {
		v, err := time.ParseDuration(setting(t, c, te, render.Booking, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	drain, shutdown := duration("TICKETFAIR_DRAIN_DELAY"), duration("TICKETFAIR_SHUTDOWN_GRACE")
	t.Logf("booking: drain %v + shutdown grace %v within terminationGracePeriod %v", drain, shutdown, grace)
	if drain == 0 {
		t.Errorf("booking does not drain: the Service may still send it connections after SIGTERM")
	}
	if drain+shutdown >= grace {
		t.Errorf("booking: drain %v + shutdown grace %v >= terminationGracePeriod %v: requests in flight would be killed", drain, shutdown, grace)
	}
}

func leaseHolder(t *testing.T, c *cli, name string) string {
	t.Helper()
	var l coordinationv1.Lease
	c.getJSON(&l, "-n", saleNS, "get", "lease", name)
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// ownedBy lists kind/name of the objects whose owner is the TicketEvent.
func ownedBy(t *testing.T, c *cli, te *ticketsv1alpha1.TicketEvent) []string {
	t.Helper()
	var cur ticketsv1alpha1.TicketEvent
	c.getJSON(&cur, "-n", saleNS, "get", "te", te.Name)
	var list unstructured.UnstructuredList
	c.getJSON(&list, "-n", saleNS, "get", "deploy,svc,cm,secret,sa,role,rolebinding,job,pdb,hpa,networkpolicy")
	var out []string
	for _, o := range list.Items {
		for _, ref := range o.GetOwnerReferences() {
			if ref.UID == cur.UID {
				out = append(out, strings.ToLower(o.GetKind())+"/"+o.GetName())
			}
		}
	}
	return out
}

// sampleUsage feeds usage from the running pods once a second.
func sampleUsage(ctx context.Context, c *cli, u *usage) {
	var pods []podRef
	refresh := time.Time{}
	for {
		if time.Since(refresh) > 3*time.Second {
			refresh = time.Now()
			pods = pods[:0]
			for _, ns := range []string{operatorNS, saleNS} {
				out, err := c.run(ctx, "", c.kubectl, "-n", ns, "get", "pods", "-o", "json")
				var list corev1.PodList
				if err != nil || json.Unmarshal([]byte(out), &list) != nil {
					continue
				}
				for _, p := range list.Items {
					comp := p.Labels["app.kubernetes.io/component"]
					if ns == operatorNS {
						comp = "operator"
					}
					pods = append(pods, podRef{name: p.Name, uid: string(p.UID), component: comp})
				}
			}
		}
		u.sample(pods)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// exitWatch records the exit code of every sale container that
// terminates, from a pod watch, before the pod object is gone.
type exitWatch struct {
	mu    sync.Mutex
	byPod map[string]int32
}

func (e *exitWatch) codes() map[string]int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.byPod)
}

func watchExits(ctx context.Context, t *testing.T, c *cli) *exitWatch {
	e := &exitWatch{byPod: map[string]int32{}}
	cmd := exec.CommandContext(ctx, c.kubectl, "-n", saleNS, "get", "pods", "--watch", "--output-watch-events", "-o", "json",
		"-l", "app.kubernetes.io/component in (queue,booking,relay,tickets)")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		dec := json.NewDecoder(bufio.NewReader(out))
		for {
			var ev struct {
				Object corev1.Pod `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				_ = cmd.Wait()
				return
			}
			for _, s := range ev.Object.Status.ContainerStatuses {
				if term := s.State.Terminated; term != nil && ev.Object.DeletionTimestamp != nil {
					e.mu.Lock()
					e.byPod[ev.Object.Name] = term.ExitCode
					e.mu.Unlock()
				}
			}
		}
	}()
	return e
}

// cleanup leaves the cluster as the test found it; on failure it first
// saves what a person needs to see why.
func cleanup(t *testing.T, c *cli, logs string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if t.Failed() {
		var dump strings.Builder
		for _, args := range [][]string{
			{"get", "te,deploy,rs,pods,jobs,svc,lease", "-A", "-o", "wide"},
			{"get", "events", "-A", "--sort-by=.lastTimestamp"},
			{"describe", "pods", "-n", saleNS},
			{"describe", "pods", "-n", operatorNS},
			{"logs", "-n", operatorNS, "-l", "app.kubernetes.io/name=ticketfair", "--tail=200", "--prefix"},
			{"logs", "-n", saleNS, "-l", "app.kubernetes.io/name=ticketfair", "--tail=100", "--prefix", "--max-log-requests=20"},
		} {
			out, err := c.run(ctx, "", c.kubectl, args...)
			fmt.Fprintf(&dump, "--- kubectl %s\n%s%v\n", strings.Join(args, " "), out, err)
		}
		p := filepath.Join(logs, "cluster-dump.txt")
		_ = os.WriteFile(p, []byte(dump.String()), 0o644)
		t.Logf("cluster state written to %s", p)
	}
	_, _ = c.run(ctx, "", c.helm, "uninstall", "ticketfair", "-n", operatorNS, "--ignore-not-found", "--wait", "--timeout", "1m")
	_, _ = c.run(ctx, "", c.kubectl, "delete", "te", "--all", "-n", saleNS, "--wait=false")
	if _, err := c.run(ctx, "", c.kubectl, "delete", "namespace", operatorNS, saleNS, "--ignore-not-found", "--timeout=3m"); err != nil {
		t.Logf("cleanup: %v", err)
	}
}
