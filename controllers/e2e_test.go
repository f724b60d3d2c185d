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

package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/identitytoken"
	"github.com/ticketfair/ticketfair/workloads/webhooksig"
)

// TestOperatorOutputBootsASale is the end-to-end test without a kubelet:
// the operator reconciles the sample TicketEvent in envtest, and the test
// plays the kubelet. It runs the migration Job's container and every
// Deployment replica's container as a local process of the real
// ticketfair binary, with exactly the command, args and env the pod spec
// gives (ConfigMap, Secret and downward-API references resolved), against a
// real Redis, PostgreSQL and Kafka-protocol broker. A customer then joins,
// is admitted, holds seats, pays through a signed webhook sent twice, and
// reads the tickets; the queue replicas elect their admitter through a
// Lease on the envtest apiserver, authenticated as the queue's
// ServiceAccount, and a second customer is admitted after the leader stops.
//
// Where a pod and a local process must differ, the difference is made in
// one place (localEnv) and is only what the kubelet itself would supply:
// each pod has its own network namespace (here: its own port), and the
// queue pods reach the apiserver with their ServiceAccount token (here: a
// kubeconfig holding a token of that ServiceAccount).
func TestOperatorOutputBootsASale(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	bin := testenv.BuildWorkloads(t)
	redisURL := testenv.RedisURL(t)
	postgresURL := testenv.PostgresURL(t)
	brokers := testenv.KafkaBrokers(t, "ticket-issued", "refund-requested")

	// The operator reads the sale figures from the queue Service; here the
	// first queue process stands in for it.
	var queueMu sync.Mutex
	queueService := ""
	op := startOperatorWith(t, func(*ticketsv1alpha1.TicketEvent) string {
		queueMu.Lock()
		defer queueMu.Unlock()
		return queueService
	})
	const ns = "sale"
	op.namespace(t, ns)
	const identitySecret, webhookSecret = "e2e-identity-secret-0123456789abcdef", "e2e-webhook-secret"
	for name, data := range map[string]map[string]string{
		"ticketfair-redis":    {"url": redisURL},
		"ticketfair-postgres": {"url": postgresURL},
		"ticketfair-identity": {"hmac-secret": identitySecret},
		"ticketfair-payment":  {"webhook-secret": webhookSecret},
	} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}
		if err := op.c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}

	// The sample as shipped, pointed at this machine's broker and opened
	// a minute ago.
	te := loadSample(t)
	te.Namespace = ns
	te.Spec.Kafka.Brokers = brokers
	te.Spec.SalesOpenAt = metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	te.Spec.Queue.Replicas = ptr.To(int32(2))
	if err := op.c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(te)
	kubelet := &kubelet{t: t, c: op.c, cfg: op.cfg, bin: bin, ns: ns, logs: t.TempDir()}

	// Queue: its pods need no migration.
	queuePods := kubelet.runDeployment(render.Name(te, render.Queue))
	if len(queuePods) != 2 {
		t.Fatalf("%d queue processes, want the 2 replicas of the spec", len(queuePods))
	}
	queueMu.Lock()
	queueService = "http://" + queuePods[0].addr
	queueMu.Unlock()

	// Migration Job: schema and the sample's 50,000 seats; then the Job
	// is marked complete, which lets the operator roll out the rest.
	job := kubelet.runJob()
	completeJob(t, op.c, client.ObjectKeyFromObject(job))
	var running []*process
	for _, c := range []render.Component{render.Booking, render.Relay, render.Tickets} {
		running = append(running, kubelet.runDeployment(render.Name(te, c))...)
	}
	for _, c := range render.Components {
		markAvailable(t, op.c, client.ObjectKey{Namespace: ns, Name: render.Name(te, c)})
	}
	waitCondition(t, op.c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionTrue, reasonAvailable)
	booking := running[0].addr
	tickets := running[len(running)-1].addr

	// The admitter's Lease is held by one of the queue pods.
	leader := leaseHolder(t, op.c, ns, render.LeaseName(te), "")
	queueByPod := map[string]*process{}
	for _, p := range queuePods {
		queueByPod[p.pod] = p
	}
	if queueByPod[leader] == nil {
		t.Fatalf("Lease %s held by %q, not by a queue pod %v", render.LeaseName(te), leader, keysOf(queueByPod))
	}

	// A customer buys two seats: join on one queue replica, poll another.
	cust := newCustomer(t, "alice", identitySecret, te.Spec.EventID)
	queueID := cust.join(queuePods[0].addr)
	access := cust.waitAdmitted(queuePods[1].addr, queueID)
	seats := cust.availableSeats(booking, "Floor", 2)
	h := cust.hold(booking, access, seats)
	orderID, amount := h.OrderID, h.Amount
	if amount != "258.00" {
		t.Errorf("two Floor seats cost %s, want 258.00 (the sample's price 129.00)", amount)
	}
	// The sample's holds.ttl (5m) and payment.timeout (4m) reached booking.
	if d := h.ExpiresAt.Sub(h.PayBy); d != time.Minute {
		t.Errorf("hold expires %v, payBy %v: %v apart, want the sample's 5m hold and 4m payment timeout", h.ExpiresAt, h.PayBy, d)
	}
	// The payment provider calls back twice: one paid order, one set of tickets.
	for range 2 {
		pay(t, booking, webhookSecret, orderID, amount)
	}
	got := cust.waitTickets(tickets, orderID, len(seats))
	var gotSeats []string
	for _, tk := range got {
		if tk.Code == "" {
			t.Errorf("ticket %+v has no code", tk)
		}
		gotSeats = append(gotSeats, tk.SeatID)
	}
	slices.Sort(gotSeats)
	if !slices.Equal(gotSeats, seats) {
		t.Errorf("tickets for seats %v, want %v", gotSeats, seats)
	}
	if st := cust.orderStatus(booking, orderID); st != "PAID" {
		t.Errorf("order %s is %s, want PAID", orderID, st)
	}

	// The operator's status carries the figures of the running services:
	// admissions from the queue, seats from booking's inventory.
	eventually(t, "status figures from the queue", func() error {
		te := getTE(t, op.c, key)
		if s := te.Status.Sale; s == nil || s.AdmittedTotal < 1 || s.Sold != 2 || s.Held != 0 || s.Remaining != 50000-2 {
			return fmt.Errorf("status.sale %+v", s)
		}
		if c := condition(te, ticketsv1alpha1.ConditionSalesOpen); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("SalesOpen %+v", c)
		}
		return nil
	})

	// What `kubectl get te` shows a person: the default columns, live.
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := tool(t, root, "KUBECTL", "kubectl")
	table := strings.Split(strings.TrimSpace(run(t, root, nil, kubectl, "--kubeconfig", adminKubeconfig(t, op.env), "get", "te", "-n", ns)), "\n")
	if len(table) != 2 || strings.Join(strings.Fields(table[0]), " ") != "NAME EVENT READY SALES OPEN PHASE WAITING ACTIVE SOLD AGE" {
		t.Fatalf("kubectl get te:\n%s", strings.Join(table, "\n"))
	}
	// A sale without phases has no phase name: its Phase cell is blank.
	if row := strings.Fields(table[1]); len(row) != 8 || row[0] != te.Name || row[1] != "2026070" || row[2] != "True" || row[3] != "True" || row[6] != "2" {
		t.Fatalf("kubectl get te row %q", table[1])
	}
	t.Logf("kubectl get te -n %s\n%s", ns, strings.Join(table, "\n"))

	// The leader stops (a pod deleted): it releases the Lease, the other
	// replica takes it over, and admission goes on.
	queueByPod[leader].stop(t)
	var other *process
	for _, p := range queuePods {
		if p.pod != leader {
			other = p
		}
	}
	if next := leaseHolder(t, op.c, ns, render.LeaseName(te), leader); next != other.pod {
		t.Fatalf("Lease passed to %q, want %q", next, other.pod)
	}
	queueMu.Lock()
	queueService = "http://" + other.addr // the Service's only endpoint now
	queueMu.Unlock()
	bob := newCustomer(t, "bob", identitySecret, te.Spec.EventID)
	bob.waitAdmitted(other.addr, bob.join(other.addr))

	// A spec change reaches the running queue live: paused, nobody is
	// admitted (the status says so, from the queue itself); resumed, the
	// waiting customer gets in.
	setPaused := func(paused bool) {
		t.Helper()
		cur := getTE(t, op.c, key)
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.Admission.Paused = paused
		if err := op.c.Patch(ctx, cur, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("status.sale.paused=%v", paused), func() error {
			if s := getTE(t, op.c, key).Status.Sale; s == nil || s.Paused != paused {
				return fmt.Errorf("status.sale %+v", s)
			}
			return nil
		})
	}
	setPaused(true)
	carol := newCustomer(t, "carol", identitySecret, te.Spec.EventID)
	carolID := carol.join(other.addr)
	for range 3 * int(time.Second/(250*time.Millisecond)) { // three admission ticks
		if st := carol.pollStatus(other.addr, carolID); st != "paused" {
			t.Fatalf("while paused, carol is %q, want paused", st)
		}
		time.Sleep(250 * time.Millisecond)
	}
	setPaused(false)
	carol.waitAdmitted(other.addr, carolID)
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// kubelet runs the operator's pod specs as local processes.
type kubelet struct {
	t    *testing.T
	c    client.Client
	cfg  *rest.Config
	bin  string
	ns   string
	logs string
}

// process is one running container.
type process struct {
	pod  string
	addr string // host:port of its HTTP port
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// runDeployment waits for the operator's Deployment and starts one process
// per replica, each ready by its readiness probe.
func (k *kubelet) runDeployment(name string) []*process {
	k.t.Helper()
	var d appsv1.Deployment
	eventually(k.t, "Deployment "+name, func() error {
		return k.c.Get(context.Background(), client.ObjectKey{Namespace: k.ns, Name: name}, &d)
	})
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		k.t.Fatalf("Deployment %s has %d containers", name, len(pod.Containers))
	}
	var out []*process
	for i := range replicas {
		podName := fmt.Sprintf("%s-%s-%d", name, d.Spec.Template.Annotations[render.ConfigHashAnnotation][:6], i)
		p := k.start(podName, pod, pod.Containers[0])
		k.waitReady(p, pod.Containers[0])
		out = append(out, p)
	}
	return out
}

// runJob runs the migration Job's container to completion.
func (k *kubelet) runJob() *batchv1.Job {
	k.t.Helper()
	var job batchv1.Job
	eventually(k.t, "migration Job", func() error {
		var jobs batchv1.JobList
		if err := k.c.List(context.Background(), &jobs, client.InNamespace(k.ns)); err != nil {
			return err
		}
		if len(jobs.Items) != 1 {
			return fmt.Errorf("%d Jobs", len(jobs.Items))
		}
		job = jobs.Items[0]
		return nil
	})
	pod := job.Spec.Template.Spec
	p := k.start(job.Name+"-local", pod, pod.Containers[0])
	select {
	case <-p.done:
		if p.err != nil {
			k.t.Fatalf("migration Job's container failed: %v\n%s", p.err, tail(p.log))
		}
	case <-time.After(3 * time.Minute):
		k.t.Fatalf("migration Job's container still running after 3m\n%s", tail(p.log))
	}
	return &job
}

// start runs a container as a process of the workloads binary.
func (k *kubelet) start(podName string, pod corev1.PodSpec, ctr corev1.Container) *process {
	k.t.Helper()
	if !slices.Equal(ctr.Command, []string{render.Binary}) {
		k.t.Fatalf("container %s runs %v, want [%s]", ctr.Name, ctr.Command, render.Binary)
	}
	env, err := render.ResolveEnv(context.Background(), k.c, k.ns, podName, ctr)
	if err != nil {
		k.t.Fatalf("pod %s: %v", podName, err)
	}
	p := &process{pod: podName, log: filepath.Join(k.logs, podName+".log"), done: make(chan struct{})}
	env, p.addr = k.localEnv(podName, pod, ctr, env)
	logFile, err := os.Create(p.log)
	if err != nil {
		k.t.Fatal(err)
	}
	p.cmd = exec.Command(k.bin, ctr.Args...)
	p.cmd.Env = env // nothing inherited from the test process
	p.cmd.Dir = k.logs
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	k.t.Cleanup(func() {
		p.stop(k.t)
		if k.t.Failed() {
			k.t.Logf("--- %s\n%s", podName, tail(p.log))
		}
	})
	return p
}

// localEnv is the env of a local process: the pod's resolved env plus what
// the kubelet would provide. It returns the address of the HTTP port.
func (k *kubelet) localEnv(podName string, pod corev1.PodSpec, ctr corev1.Container, env []string) ([]string, string) {
	k.t.Helper()
	var addr string
	if len(ctr.Ports) > 0 {
		// A pod has its own network namespace: the rendered listen address
		// must name the container port; locally each replica gets a port.
		i := slices.IndexFunc(env, func(e string) bool { return strings.HasPrefix(e, "TICKETFAIR_HTTP_ADDR=") })
		if i < 0 {
			k.t.Fatalf("%s: no TICKETFAIR_HTTP_ADDR in %v", ctr.Name, env)
		}
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(env[i], "TICKETFAIR_HTTP_ADDR="))
		if want := strconv.Itoa(int(ctr.Ports[0].ContainerPort)); port != want || ctr.Ports[0].Name != render.HTTPPortName {
			k.t.Fatalf("%s listens on port %s, but its container port %s is %s", ctr.Name, port, ctr.Ports[0].Name, want)
		}
		free, err := localsvc.FreePort()
		if err != nil {
			k.t.Fatal(err)
		}
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(free))
		env[i] = "TICKETFAIR_HTTP_ADDR=" + addr
	}
	if pod.ServiceAccountName != "" && pod.AutomountServiceAccountToken != nil && *pod.AutomountServiceAccountToken {
		// In a pod: in-cluster config from the mounted token.
		env = append(env, "KUBECONFIG="+k.serviceAccountKubeconfig(pod.ServiceAccountName))
	}
	return env, addr
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount with a token from the TokenRequest API, so the process
// has exactly the permissions the operator's Role grants.
func (k *kubelet) serviceAccountKubeconfig(sa string) string {
	k.t.Helper()
	path := filepath.Join(k.logs, sa+".kubeconfig")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	cs, err := kubernetes.NewForConfig(k.cfg)
	if err != nil {
		k.t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(k.ns).CreateToken(context.Background(), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		k.t.Fatalf("token of ServiceAccount %s: %v", sa, err)
	}
	host := k.cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: k.cfg.CAData}
	kc.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["pod"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: sa, Namespace: k.ns}
	kc.CurrentContext = "pod"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		k.t.Fatal(err)
	}

	// Least privilege: the token reads no Secret.
	saCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		k.t.Fatal(err)
	}
	saClient, err := kubernetes.NewForConfig(saCfg)
	if err != nil {
		k.t.Fatal(err)
	}
	_, err = saClient.CoreV1().Secrets(k.ns).Get(context.Background(), "ticketfair-redis", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		k.t.Fatalf("ServiceAccount %s reading a Secret: %v, want Forbidden", sa, err)
	}
	return path
}

// waitReady polls the container's readiness probe, as the kubelet does.
func (k *kubelet) waitReady(p *process, ctr corev1.Container) {
	k.t.Helper()
	probe := ctr.ReadinessProbe
	if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Port.StrVal != render.HTTPPortName {
		k.t.Fatalf("%s: readiness probe %+v, want an HTTP GET on port %q", ctr.Name, probe, render.HTTPPortName)
	}
	url := "http://" + p.addr + probe.HTTPGet.Path
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-p.done:
			k.t.Fatalf("pod %s exited: %v\n%s", p.pod, p.err, tail(p.log))
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("pod %s not ready at %s: %v\n%s", p.pod, url, err, tail(p.log))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop sends SIGTERM, as the kubelet does on pod deletion, and waits out
// the grace period.
func (p *process) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	if !localsvc.Terminate(p.cmd.Process, p.done, 30*time.Second) {
		t.Errorf("pod %s ignored SIGTERM for 30s", p.pod)
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// leaseHolder waits until the Lease is held by someone other than not.
func leaseHolder(t *testing.T, c client.Client, ns, name, not string) string {
	t.Helper()
	var holder string
	eventually(t, "Lease "+name+" held", func() error {
		var l coordinationv1.Lease
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || *l.Spec.HolderIdentity == not {
			return fmt.Errorf("holder %v", l.Spec.HolderIdentity)
		}
		holder = *l.Spec.HolderIdentity
		return nil
	})
	return holder
}

// customer speaks to the services' REST APIs as a client would.
type customer struct {
	t       *testing.T
	token   string // identity token
	eventID int64
}

func newCustomer(t *testing.T, id, secret string, eventID int64) *customer {
	tok := identitytoken.Sign(secret, "ticketfair-identity", "ticketfair", id, time.Hour)
	return &customer{t: t, token: tok, eventID: eventID}
}

// call sends a request and decodes a JSON answer of the wanted status.
func (c *customer) call(method, url string, body any, hdr map[string]string, want int, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if want != 0 && resp.StatusCode != want {
		c.t.Fatalf("%s %s: %s %s, want %d", method, url, resp.Status, b, want)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
	return resp.StatusCode
}

func (c *customer) bearer() map[string]string {
	return map[string]string{"Authorization": "Bearer " + c.token}
}

func (c *customer) join(queue string) string {
	c.t.Helper()
	var j struct {
		QueueID string `json:"queueId"`
	}
	st := c.call(http.MethodPost, fmt.Sprintf("http://%s/events/%d/queue", queue, c.eventID), struct{}{}, c.bearer(), 0, &j)
	if (st != http.StatusOK && st != http.StatusCreated) || j.QueueID == "" {
		c.t.Fatalf("join: status %d, queueId %q", st, j.QueueID)
	}
	return j.QueueID
}

type position struct {
	Status      string `json:"status"`
	AccessToken string `json:"accessToken"`
}

func (c *customer) poll(queue, queueID string) position {
	c.t.Helper()
	var p position
	c.call(http.MethodGet, fmt.Sprintf("http://%s/events/%d/queue/%s", queue, c.eventID, queueID), nil, c.bearer(), http.StatusOK, &p)
	return p
}

func (c *customer) pollStatus(queue, queueID string) string { return c.poll(queue, queueID).Status }

func (c *customer) waitAdmitted(queue, queueID string) string {
	c.t.Helper()
	var access string
	eventually(c.t, "admission", func() error {
		p := c.poll(queue, queueID)
		if p.Status != "admitted" || p.AccessToken == "" {
			return fmt.Errorf("status %q", p.Status)
		}
		access = p.AccessToken
		return nil
	})
	return access
}

func (c *customer) availableSeats(booking, section string, n int) []string {
	c.t.Helper()
	var m struct {
		Seats []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"seats"`
	}
	c.call(http.MethodGet, fmt.Sprintf("http://%s/events/%d/seats?section=%s", booking, c.eventID, section), nil, nil, http.StatusOK, &m)
	var ids []string
	for _, s := range m.Seats {
		if s.Status == "AVAILABLE" && len(ids) < n {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) < n || len(m.Seats) != 5000 {
		c.t.Fatalf("section %s: %d seats, %d available; want the sample's 5,000", section, len(m.Seats), len(ids))
	}
	slices.Sort(ids)
	return ids
}

type heldSeats struct {
	OrderID   string    `json:"orderId"`
	Seats     []string  `json:"seats"`
	Amount    string    `json:"amount"`
	ExpiresAt time.Time `json:"expiresAt"`
	PayBy     time.Time `json:"payBy"`
}

func (c *customer) hold(booking, access string, seats []string) heldSeats {
	c.t.Helper()
	var h heldSeats
	c.call(http.MethodPost, fmt.Sprintf("http://%s/events/%d/holds", booking, c.eventID), map[string]any{"seats": seats},
		map[string]string{"X-Queue-Token": access}, http.StatusCreated, &h)
	if h.OrderID == "" || len(h.Seats) != len(seats) {
		c.t.Fatalf("hold answered %+v", h)
	}
	return h
}

type ticket struct {
	SeatID string `json:"seatId"`
	Code   string `json:"code"`
}

func (c *customer) waitTickets(tickets, orderID string, n int) []ticket {
	c.t.Helper()
	var got []ticket
	// Relay, broker and the tickets consumer group: allow for a rebalance.
	eventuallyWithin(c.t, time.Minute, "tickets", func() error {
		var r struct {
			Tickets []ticket `json:"tickets"`
		}
		if st := c.call(http.MethodGet, fmt.Sprintf("http://%s/orders/%s/tickets", tickets, orderID), nil, c.bearer(), 0, &r); st != http.StatusOK {
			return fmt.Errorf("status %d", st)
		}
		if len(r.Tickets) != n {
			return fmt.Errorf("%d tickets, want %d", len(r.Tickets), n)
		}
		got = r.Tickets
		return nil
	})
	return got
}

func (c *customer) orderStatus(booking, orderID string) string {
	c.t.Helper()
	var o struct {
		Status string `json:"status"`
	}
	c.call(http.MethodGet, fmt.Sprintf("http://%s/orders/%s", booking, orderID), nil, c.bearer(), http.StatusOK, &o)
	return o.Status
}

// pay plays the payment provider: a webhook signed with the shared secret
// (webhooksig, docs/booking.md).
func pay(t *testing.T, booking, secret, orderID, amount string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"orderId": orderID, "paymentId": "pay-" + orderID,
		"amount": amount, "currency": "EUR", "status": "succeeded"})
	req, err := http.NewRequest(http.MethodPost, "http://"+booking+"/payments/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooksig.Header, webhooksig.Sign(secret, time.Now(), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %s %s", resp.Status, b)
	}
}

// adminKubeconfig writes a kubeconfig of a system:masters user of env, for
// running kubectl against it.
func adminKubeconfig(t *testing.T, env *envtest.Environment) string {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
