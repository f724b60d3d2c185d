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
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const testImage = "ticketfair:test"

func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := ticketsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeQueue serves the queue's stats endpoint; fail makes it answer 503.
type fakeQueue struct {
	mu    sync.Mutex
	stats Stats
	fail  bool
}

func (f *fakeQueue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	_ = json.NewEncoder(w).Encode(f.stats)
}

func (f *fakeQueue) set(s Stats, fail bool) {
	f.mu.Lock()
	f.stats, f.fail = s, fail
	f.mu.Unlock()
}

// operator is an envtest apiserver with the reconciler running against it.
type operator struct {
	env   *envtest.Environment
	cfg   *rest.Config
	c     client.Client
	queue *fakeQueue
	paths map[string]string // stats paths requested, for assertions
	logs  *logLines         // the operator's info-level log
}

// logLines collects log lines of the manager's logger.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	l.lines = append(l.lines, prefix+" "+args)
	l.mu.Unlock()
}

// since returns the lines after the first n that contain every one of subs.
func (l *logLines) since(n int, subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines[min(n, len(l.lines)):] {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

func (l *logLines) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// startOperator runs the reconciler with a fake queue serving the stats.
func startOperator(t *testing.T) *operator {
	t.Helper()
	q := &fakeQueue{}
	var mu sync.Mutex
	paths := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path] = r.Method
		mu.Unlock()
		q.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	o := startOperatorWith(t, func(*ticketsv1alpha1.TicketEvent) string { return srv.URL })
	o.queue, o.paths = q, paths
	return o
}

// startOperatorWith runs the reconciler against a new envtest apiserver;
// queueURL stands in for the queue Service's in-cluster address, and opts
// change the reconciler before it starts.
func startOperatorWith(t *testing.T, queueURL func(*ticketsv1alpha1.TicketEvent) string, opts ...func(*TicketEventReconciler, ctrl.Manager)) *operator {
	t.Helper()
	env, cfg := testenv.Kube(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	scheme := newScheme(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	skip := true // -count=N starts the controller once per run in one process
	logs := &logLines{}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: &skip},
		Logger:     funcr.New(logs.add, funcr.Options{Verbosity: 0})})
	if err != nil {
		t.Fatal(err)
	}
	r := &TicketEventReconciler{
		Client:        mgr.GetClient(),
		Scheme:        scheme,
		Options:       render.Options{Image: testImage},
		Recorder:      mgr.GetEventRecorder("ticketfair-operator"),
		Stats:         &HTTPStats{BaseURL: queueURL},
		StatsInterval: 200 * time.Millisecond,
		APIReader:     mgr.GetAPIReader(),
	}
	for _, o := range opts {
		o(r, mgr)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return &operator{env: env, cfg: cfg, c: c, logs: logs}
}

func (o *operator) namespace(t *testing.T, name string) {
	t.Helper()
	if err := o.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// eventually polls fn until it returns nil, failing with its last error.
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	eventuallyWithin(t, 20*time.Second, what, fn)
}

func eventuallyWithin(t *testing.T, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func loadSample(t *testing.T) *ticketsv1alpha1.TicketEvent {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "config", "samples", "tickets_v1alpha1_ticketevent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var te ticketsv1alpha1.TicketEvent
	if err := yaml.UnmarshalStrict(b, &te); err != nil {
		t.Fatal(err)
	}
	return &te
}

func minimalEvent(ns, name string) *ticketsv1alpha1.TicketEvent {
	return &ticketsv1alpha1.TicketEvent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: ticketsv1alpha1.TicketEventSpec{
			EventID:     42,
			DisplayName: "Summer Concert",
			SalesOpenAt: metav1.NewTime(time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)),
			Seating: ticketsv1alpha1.Seating{Sections: []ticketsv1alpha1.Section{
				{Name: "A", Price: "89.50", Rows: 10, SeatsPerRow: 20},
			}},
		},
	}
}

// envOf resolves a container's env the way the kubelet would, from the
// ConfigMaps; Secret and downward-API references are returned as such.
func envOf(t *testing.T, c client.Client, ns string, ctr corev1.Container) (map[string]string, map[string]corev1.EnvVarSource) {
	t.Helper()
	vals := map[string]string{}
	refs := map[string]corev1.EnvVarSource{}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			vals[e.Name] = e.Value
		case e.ValueFrom.ConfigMapKeyRef != nil:
			var cm corev1.ConfigMap
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: e.ValueFrom.ConfigMapKeyRef.Name}, &cm); err != nil {
				t.Fatalf("env %s: %v", e.Name, err)
			}
			v, ok := cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
			if !ok {
				t.Fatalf("env %s: ConfigMap %s has no key %s", e.Name, cm.Name, e.ValueFrom.ConfigMapKeyRef.Key)
			}
			vals[e.Name] = v
		default:
			refs[e.Name] = *e.ValueFrom
		}
	}
	return vals, refs
}

// loadEnv parses resolved env into a workload config struct, as the workload does.
func loadEnv(t *testing.T, vals map[string]string, dst any) {
	t.Helper()
	if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := vals[k]; return v, ok }, dst); err != nil {
		t.Fatal(err)
	}
}

func getTE(t *testing.T, c client.Client, key client.ObjectKey) *ticketsv1alpha1.TicketEvent {
	t.Helper()
	var te ticketsv1alpha1.TicketEvent
	if err := c.Get(context.Background(), key, &te); err != nil {
		t.Fatal(err)
	}
	return &te
}

func condition(te *ticketsv1alpha1.TicketEvent, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(te.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func waitCondition(t *testing.T, c client.Client, key client.ObjectKey, typ string, status metav1.ConditionStatus, reason string) *ticketsv1alpha1.TicketEvent {
	t.Helper()
	var te *ticketsv1alpha1.TicketEvent
	eventually(t, fmt.Sprintf("condition %s=%s (%s)", typ, status, reason), func() error {
		te = getTE(t, c, key)
		got := condition(te, typ)
		if got.Status != status || got.Reason != reason || te.Status.ObservedGeneration != te.Generation {
			return fmt.Errorf("got %s=%s (%s: %s), observed generation %d of %d", typ, got.Status, got.Reason, got.Message, te.Status.ObservedGeneration, te.Generation)
		}
		return nil
	})
	return te
}

func completeJob(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	var job batchv1.Job
	if err := c.Get(context.Background(), key, &job); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	start := metav1.NewTime(now.Add(-time.Minute))
	job.Status.StartTime = &start
	job.Status.CompletionTime = &now
	job.Status.Succeeded = 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
	}
	if err := c.Status().Update(context.Background(), &job); err != nil {
		t.Fatalf("complete Job: %v", err)
	}
}

// markAvailable plays the Deployment controller: every replica updated and available.
func markAvailable(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	eventually(t, "mark "+key.Name+" available", func() error {
		var d appsv1.Deployment
		if err := c.Get(context.Background(), key, &d); err != nil {
			return err
		}
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}},
		}
		return c.Status().Update(context.Background(), &d)
	})
}

func deploymentOf(t *testing.T, c client.Client, te *ticketsv1alpha1.TicketEvent, comp render.Component) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	eventually(t, "Deployment "+render.Name(te, comp), func() error {
		return c.Get(context.Background(), client.ObjectKey{Namespace: te.Namespace, Name: render.Name(te, comp)}, &d)
	})
	return &d
}

func TestTicketEventOperator(t *testing.T) {
	op := startOperator(t)
	ctx := context.Background()
	c := op.c

	t.Run("create and read back with schema defaults", func(t *testing.T) {
		op.namespace(t, "minimal")
		if err := c.Create(ctx, minimalEvent("minimal", "summer")); err != nil {
			t.Fatal(err)
		}
		got := getTE(t, c, client.ObjectKey{Namespace: "minimal", Name: "summer"})
		// Defaults come from the CRD schema, applied by the real apiserver.
		if got.Spec.Admission.MaxActive != 5000 || got.Spec.Admission.PreQueue != ticketsv1alpha1.PreQueueShuffle ||
			got.Spec.Holds.TTL == nil || got.Spec.Holds.TTL.Duration != 5*time.Minute || got.Spec.Holds.MaxSeatsPerCustomer != 4 ||
			got.Spec.Payment.Timeout != nil {
			// payment.timeout has no schema default: unset, it follows holds.ttl.
			t.Fatalf("defaults not applied: %+v %+v %+v", got.Spec.Admission, got.Spec.Holds, got.Spec.Payment)
		}
		if got.Spec.Seating.Sections[0].Price != "89.50" {
			t.Fatalf("read back %+v", got.Spec.Seating)
		}
		// Without infrastructure references nothing is provisioned, and status says what is missing.
		te := waitCondition(t, c, client.ObjectKeyFromObject(got), ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonMissingConfiguration)
		if msg := condition(te, ticketsv1alpha1.ConditionDegraded).Message; !strings.Contains(msg, "spec.redis") || !strings.Contains(msg, "spec.postgres") {
			t.Fatalf("Degraded message %q does not name the missing fields", msg)
		}
		if te.Status.SeatsTotal != 200 {
			t.Fatalf("seatsTotal %d, want 200", te.Status.SeatsTotal)
		}
		var ds appsv1.DeploymentList
		if err := c.List(ctx, &ds, client.InNamespace("minimal")); err != nil || len(ds.Items) != 0 {
			t.Fatalf("Deployments created without configuration: %d, %v", len(ds.Items), err)
		}
	})

	// A spec the CRD admits but a workload would refuse (here SMTP
	// credentials sent in the clear to a server across the network, which
	// the tickets service refuses at start) provisions nothing, and
	// Degraded says why, naming the field.
	t.Run("invalid configuration", func(t *testing.T) {
		op.namespace(t, "invalid")
		te := provisionable("invalid", "clear")
		te.Spec.EventID = 901
		te.Spec.Delivery.Mail = &ticketsv1alpha1.Mail{From: "tickets@example.org", SMTP: ticketsv1alpha1.SMTP{Host: "smtp.example.org",
			TLS: "none", CredentialsSecretRef: &corev1.LocalObjectReference{Name: "smtp"}}}
		if err := c.Create(ctx, te); err != nil {
			t.Fatalf("the CRD refuses it: %v", err)
		}
		got := waitCondition(t, c, client.ObjectKeyFromObject(te), ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonInvalidConfiguration)
		if msg := condition(got, ticketsv1alpha1.ConditionDegraded).Message; !strings.Contains(msg, `TICKETFAIR_MAIL_SMTP_TLS (--mail-smtp-tls): "none": would send the SMTP password in the clear`) {
			t.Fatalf("Degraded message %q does not name the field and the rule", msg)
		}
		if c := condition(got, ticketsv1alpha1.ConditionReady); c.Status != metav1.ConditionFalse {
			t.Fatalf("Ready %+v", c)
		}
		var ds appsv1.DeploymentList
		if err := c.List(ctx, &ds, client.InNamespace("invalid")); err != nil || len(ds.Items) != 0 {
			t.Fatalf("Deployments created for an invalid spec: %d, %v", len(ds.Items), err)
		}
	})

	op.namespace(t, "sale")
	sample := loadSample(t)
	sample.Namespace = "sale"
	key := client.ObjectKeyFromObject(sample)
	var keysBefore map[string][]byte

	t.Run("sample provisions every owned object", func(t *testing.T) {
		if err := c.Create(ctx, sample); err != nil {
			t.Fatal(err)
		}
		te := waitCondition(t, c, key, ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
		if te.Status.SeatsTotal != 50000 {
			t.Fatalf("seatsTotal %d, want 50000", te.Status.SeatsTotal)
		}

		// Generated keys.
		var keys corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.KeysSecretName(te)}, &keys); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{render.KeyAccessTokenKeys, render.KeyTicketKeys} {
			kid, seed, ok := strings.Cut(string(keys.Data[k]), ":")
			raw, err := base64.StdEncoding.DecodeString(seed)
			if !ok || kid == "" || err != nil || len(raw) != ed25519.SeedSize {
				t.Fatalf("%s = %q is not kid:base64(32-byte seed)", k, keys.Data[k])
			}
		}
		if len(keys.Data[render.KeyServiceToken]) < 32 {
			t.Fatalf("service token too short: %q", keys.Data[render.KeyServiceToken])
		}
		keysBefore = keys.Data

		// Queue RBAC: its TicketEvents and its Lease, nothing more.
		var role rbacv1.Role
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.ServiceAccountName(te)}, &role); err != nil {
			t.Fatal(err)
		}
		for _, rule := range role.Rules {
			for _, res := range rule.Resources {
				if res != "ticketevents" && res != "leases" {
					t.Fatalf("queue Role grants %s", res)
				}
			}
			for _, v := range rule.Verbs {
				if v != "get" && v != "list" && v != "watch" && v != "create" && v != "update" {
					t.Fatalf("queue Role grants verb %s", v)
				}
			}
		}
		var rb rbacv1.RoleBinding
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.ServiceAccountName(te)}, &rb); err != nil {
			t.Fatal(err)
		}
		if rb.RoleRef.Name != role.Name || len(rb.Subjects) != 1 || rb.Subjects[0].Name != render.ServiceAccountName(te) {
			t.Fatalf("RoleBinding %+v", rb)
		}

		// Services and PDBs for queue, booking and tickets; an HPA for booking only.
		for _, comp := range []render.Component{render.Queue, render.Booking, render.Tickets} {
			var svc corev1.Service
			if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.Name(te, comp)}, &svc); err != nil {
				t.Fatal(err)
			}
			if svc.Spec.Ports[0].Port != 8080 || svc.Spec.Selector["app.kubernetes.io/component"] != string(comp) {
				t.Fatalf("Service %s: %+v", svc.Name, svc.Spec)
			}
			var pdb policyv1.PodDisruptionBudget
			if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.Name(te, comp)}, &pdb); err != nil {
				t.Fatal(err)
			}
		}
		var hpa autoscalingv2.HorizontalPodAutoscaler
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.Name(te, render.Booking)}, &hpa); err != nil {
			t.Fatal(err)
		}
		if hpa.Spec.MaxReplicas != 12 || *hpa.Spec.MinReplicas != 3 {
			t.Fatalf("HPA %+v", hpa.Spec)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.Name(te, render.Queue)}, &hpa); !apierrors.IsNotFound(err) {
			t.Fatalf("queue HPA without autoscaling: %v", err)
		}

		// The migration Job runs `ticketfair migrate` with the seating.
		var job batchv1.Job
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: te.Status.Migration.JobName}, &job); err != nil {
			t.Fatal(err)
		}
		jc := job.Spec.Template.Spec.Containers[0]
		if jc.Image != testImage || strings.Join(jc.Command, " ") != "/ticketfair" || strings.Join(jc.Args, " ") != "migrate" {
			t.Fatalf("migration container %v %v %v", jc.Image, jc.Command, jc.Args)
		}
		vals, refs := envOf(t, c, "sale", jc)
		var b config.Booking
		loadEnv(t, vals, &b)
		if b.Seating != "Floor:129.00:20:250;LowerEast:89.50:40:250;LowerWest:89.50:40:250;UpperEast:49.00:50:250;UpperWest:49.00:50:250" || b.EventID != 2026070 {
			t.Fatalf("migration seating %q event %d", b.Seating, b.EventID)
		}
		if len(refs) == 0 {
			t.Fatal("migration Job has no Secret references")
		}

		// Queue: config from ConfigMap, credentials from Secrets, identity from the downward API.
		d := deploymentOf(t, c, te, render.Queue)
		if *d.Spec.Replicas != 3 {
			t.Fatalf("queue replicas %d", *d.Spec.Replicas)
		}
		pod := d.Spec.Template.Spec
		qc := pod.Containers[0]
		if qc.Image != testImage || qc.Command[0] != "/ticketfair" || qc.Args[0] != "queue" {
			t.Fatalf("queue container %v %v %v", qc.Image, qc.Command, qc.Args)
		}
		if pod.ServiceAccountName != render.ServiceAccountName(te) {
			t.Fatalf("queue service account %q", pod.ServiceAccountName)
		}
		sc := qc.SecurityContext
		if !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
			!*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || sc.Capabilities.Drop[0] != "ALL" {
			t.Fatalf("queue security context %+v %+v", pod.SecurityContext, sc)
		}
		if qc.LivenessProbe.HTTPGet.Path != "/healthz" || qc.ReadinessProbe.HTTPGet.Path != "/readyz" || qc.Ports[0].ContainerPort != 8080 {
			t.Fatalf("queue probes/ports %+v %+v %+v", qc.LivenessProbe, qc.ReadinessProbe, qc.Ports)
		}
		if qc.Resources.Requests.Cpu().String() != "500m" || len(pod.TopologySpreadConstraints) != 2 {
			t.Fatalf("queue resources %v, spread %v", qc.Resources, pod.TopologySpreadConstraints)
		}
		if d.Spec.Template.Annotations[render.ConfigHashAnnotation] == "" {
			t.Fatal("queue has no config-hash annotation")
		}
		vals, refs = envOf(t, c, "sale", qc)
		var q config.Queue
		loadEnv(t, vals, &q)
		if q.EventID != 2026070 || q.MaxActive != 5000 || q.RatePerSecond != 500 || q.PreQueue != "shuffle" ||
			!q.LeaderElection || q.TicketEventName != "summer-stadium" || q.SalesOpenAt != "2036-07-01T10:00:00Z" || q.LeaseName == "" {
			t.Fatalf("queue config %+v", q)
		}
		fieldPaths := map[string]string{}
		secretKeys := map[string]string{}
		for name, src := range refs {
			switch {
			case src.FieldRef != nil:
				fieldPaths[src.FieldRef.FieldPath] = name
			case src.SecretKeyRef != nil:
				secretKeys[src.SecretKeyRef.Name+"/"+src.SecretKeyRef.Key] = name
			default:
				t.Fatalf("env %s: unexpected source %+v", name, src)
			}
		}
		if len(fieldPaths) != 2 || fieldPaths["metadata.namespace"] == "" || fieldPaths["metadata.name"] == "" {
			t.Fatalf("downward API env %v", fieldPaths)
		}
		for _, want := range []string{"ticketfair-redis/url", "ticketfair-identity/hmac-secret", render.KeysSecretName(te) + "/" + render.KeyAccessTokenKeys} {
			if secretKeys[want] == "" {
				t.Fatalf("queue env lacks Secret %s: %v", want, secretKeys)
			}
		}
		// With the referenced Secrets present, the env resolves completely,
		// as the kubelet (or an end-to-end test running the process) sees it.
		for name, data := range map[string]string{"ticketfair-redis": "url", "ticketfair-identity": "hmac-secret", "ticketfair-postgres": "url", "ticketfair-payment": "webhook-secret"} {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "sale"}, StringData: map[string]string{data: "value-of-" + name}}
			if err := c.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		resolved, err := render.ResolveEnv(ctx, c, "sale", "queue-pod-0", qc)
		if err != nil {
			t.Fatal(err)
		}
		full := map[string]string{}
		for _, kv := range resolved {
			k, v, _ := strings.Cut(kv, "=")
			full[k] = v
		}
		var rq config.Queue
		loadEnv(t, full, &rq)
		if rq.RedisURL != "value-of-ticketfair-redis" || rq.PodName != "queue-pod-0" || rq.Namespace != "sale" ||
			rq.IdentityHMACSecret != "value-of-ticketfair-identity" || !strings.HasPrefix(rq.AccessTokenKeys, "a") {
			t.Fatalf("resolved queue config %+v", rq)
		}

		// A credential never appears as a literal or in a ConfigMap.
		for _, v := range config.Render(&q) {
			if v.Secret && vals[v.Name] != "" {
				t.Fatalf("credential %s resolved from a ConfigMap", v.Name)
			}
		}

		// Booking waits for the migration.
		var booking appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.Name(te, render.Booking)}, &booking); !apierrors.IsNotFound(err) {
			t.Fatalf("booking exists before the migration succeeded: %v", err)
		}
	})

	t.Run("migration then available deployments make it Ready", func(t *testing.T) {
		te := getTE(t, c, key)
		completeJob(t, c, client.ObjectKey{Namespace: "sale", Name: te.Status.Migration.JobName})
		for _, comp := range render.Components {
			d := deploymentOf(t, c, te, comp)
			if comp == render.Booking && d.Spec.Replicas != nil && *d.Spec.Replicas != 1 {
				// Under an HPA the operator leaves replicas to it (defaulted to 1 by the apiserver).
				t.Fatalf("booking replicas %d under autoscaling", *d.Spec.Replicas)
			}
		}
		te = waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonRollingOut)
		if te.Status.Migration.Phase != ticketsv1alpha1.MigrationSucceeded {
			t.Fatalf("migration phase %s", te.Status.Migration.Phase)
		}

		op.queue.set(Stats{Waiting: 1200, Active: 4800, AdmittedTotal: 9000, Remaining: 41000, Held: 1200, Sold: 9000, SalesOpen: true,
			UpdatedAt: time.Date(2026, 7, 1, 10, 5, 0, 0, time.UTC)}, false)
		for _, comp := range render.Components {
			markAvailable(t, c, client.ObjectKey{Namespace: "sale", Name: render.Name(te, comp)})
		}
		te = waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionTrue, reasonAvailable)
		if condition(te, ticketsv1alpha1.ConditionProgressing).Status != metav1.ConditionFalse || condition(te, ticketsv1alpha1.ConditionDegraded).Status != metav1.ConditionFalse {
			t.Fatalf("conditions %+v", te.Status.Conditions)
		}
		if te.Status.Components.Queue.ReadyReplicas != 3 || te.Status.Components.Tickets.ReadyReplicas != 2 {
			t.Fatalf("components %+v", te.Status.Components)
		}

		// Booking's env is the booking config the spec describes.
		bc := deploymentOf(t, c, te, render.Booking).Spec.Template.Spec.Containers[0]
		vals, refs := envOf(t, c, "sale", bc)
		var b config.Booking
		loadEnv(t, vals, &b)
		if b.HoldTTL != 5*time.Minute || b.PaymentTimeout != 4*time.Minute || b.MaxSeatsPerCustomer != 4 || bc.Args[0] != "booking" {
			t.Fatalf("booking config %+v", b)
		}
		if refs[secretEnv(t, &b, &b.WebhookSecrets)].SecretKeyRef.Name != "ticketfair-payment" {
			t.Fatalf("webhook secret not from ticketfair-payment: %+v", refs)
		}
		rc := deploymentOf(t, c, te, render.Relay).Spec.Template.Spec.Containers[0]
		vals, _ = envOf(t, c, "sale", rc)
		var r config.Relay
		loadEnv(t, vals, &r)
		if len(r.Brokers) != 3 || r.TopicTicketIssued != "ticket-issued" {
			t.Fatalf("relay config %+v", r)
		}
	})

	t.Run("sale figures from the queue, kept when it fails", func(t *testing.T) {
		var te *ticketsv1alpha1.TicketEvent
		eventually(t, "sale figures", func() error {
			te = getTE(t, c, key)
			if s := te.Status.Sale; s == nil || s.Waiting != 1200 || s.Active != 4800 || s.Remaining != 41000 || s.Held != 1200 || s.Sold != 9000 {
				return fmt.Errorf("sale %+v", te.Status.Sale)
			}
			return nil
		})
		if got := condition(te, ticketsv1alpha1.ConditionSalesOpen); got.Status != metav1.ConditionTrue || got.Reason != reasonStatsReported {
			t.Fatalf("SalesOpen %+v", got)
		}
		// Refreshed while the sale runs (RequeueAfter, no watch event needed).
		op.queue.set(Stats{Waiting: 700, Active: 5000, AdmittedTotal: 9500, Remaining: 40500, Held: 900, Sold: 9500, SalesOpen: true, UpdatedAt: time.Date(2026, 7, 1, 10, 5, 5, 0, time.UTC)}, false)
		eventually(t, "refreshed figures", func() error {
			if s := getTE(t, c, key).Status.Sale; s.Waiting != 700 || s.Held != 900 || s.Sold != 9500 {
				return fmt.Errorf("waiting %d, held %d, sold %d", s.Waiting, s.Held, s.Sold)
			}
			return nil
		})
		op.queue.set(Stats{}, true)
		te = waitCondition(t, c, key, ticketsv1alpha1.ConditionSalesOpen, metav1.ConditionTrue, reasonStatsUnavailable)
		if s := te.Status.Sale; s.Waiting != 700 || s.Remaining != 40500 || s.Held != 900 || s.Sold != 9500 {
			t.Fatalf("figures not kept: %+v", s)
		}
		if !strings.Contains(condition(te, ticketsv1alpha1.ConditionSalesOpen).Message, "503") {
			t.Fatalf("SalesOpen message %q does not say why", condition(te, ticketsv1alpha1.ConditionSalesOpen).Message)
		}
		if _, ok := op.paths["/events/2026070/stats"]; !ok {
			t.Fatalf("stats paths requested: %v", op.paths)
		}
		op.queue.set(Stats{Waiting: 700, Active: 5000, AdmittedTotal: 9500, Remaining: 40500, Held: 900, Sold: 9500, SalesOpen: true}, false)
	})

	t.Run("admission is live, holds.ttl rolls booking", func(t *testing.T) {
		te := getTE(t, c, key)
		queueBefore := deploymentOf(t, c, te, render.Queue)
		bookingBefore := deploymentOf(t, c, te, render.Booking)

		// The StatsPoller may write status meanwhile: retry on a conflict.
		te = updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Admission.MaxActive = 8000
			te.Spec.Admission.Paused = true
		})
		eventually(t, "queue ConfigMap follows admission", func() error {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: render.Name(te, render.Queue)}, &cm); err != nil {
				return err
			}
			var q config.Queue
			loadEnv(t, cm.Data, &q)
			if q.MaxActive != 8000 || !q.Paused {
				return fmt.Errorf("maxActive %d paused %v", q.MaxActive, q.Paused)
			}
			return nil
		})
		waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionTrue, reasonAvailable)
		queueAfter := deploymentOf(t, c, te, render.Queue)
		if queueAfter.Generation != queueBefore.Generation ||
			queueAfter.Spec.Template.Annotations[render.ConfigHashAnnotation] != queueBefore.Spec.Template.Annotations[render.ConfigHashAnnotation] {
			t.Fatalf("queue rolled for an admission change: generation %d -> %d", queueBefore.Generation, queueAfter.Generation)
		}

		te = updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Holds.TTL = &metav1.Duration{Duration: 7 * time.Minute}
		})
		var bookingAfter *appsv1.Deployment
		eventually(t, "booking rolls for holds.ttl", func() error {
			bookingAfter = deploymentOf(t, c, te, render.Booking)
			if bookingAfter.Spec.Template.Annotations[render.ConfigHashAnnotation] == bookingBefore.Spec.Template.Annotations[render.ConfigHashAnnotation] {
				return fmt.Errorf("config-hash unchanged")
			}
			return nil
		})
		vals, _ := envOf(t, c, "sale", bookingAfter.Spec.Template.Spec.Containers[0])
		var b config.Booking
		loadEnv(t, vals, &b)
		if b.HoldTTL != 7*time.Minute {
			t.Fatalf("booking hold TTL %s", b.HoldTTL)
		}
		if q := deploymentOf(t, c, te, render.Queue); q.Generation != queueBefore.Generation {
			t.Fatal("queue rolled for a holds change")
		}
		// The new booking template is not rolled out until the Deployment controller says so.
		waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonRollingOut)
		markAvailable(t, c, client.ObjectKeyFromObject(bookingAfter))
		waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionTrue, reasonAvailable)
	})

	t.Run("failed migration is Degraded and holds booking back", func(t *testing.T) {
		op.namespace(t, "failing")
		createSecrets(t, c, "failing", map[string]map[string]string{"ticketfair-redis": {"url": "x"}, "ticketfair-identity": {"hmac-secret": "x"},
			"ticketfair-postgres": {"url": "x"}, "ticketfair-payment": {"webhook-secret": "x"}})
		te := loadSample(t)
		te.Namespace = "failing"
		te.Spec.EventID++ // another sale: one eventId is held by one TicketEvent
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		te = waitCondition(t, c, client.ObjectKeyFromObject(te), ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
		var job batchv1.Job
		if err := c.Get(ctx, client.ObjectKey{Namespace: "failing", Name: te.Status.Migration.JobName}, &job); err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		start := metav1.NewTime(now.Add(-time.Minute))
		job.Status.StartTime = &start
		job.Status.Failed = 7
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
		}
		if err := c.Status().Update(ctx, &job); err != nil {
			t.Fatalf("fail Job: %v", err)
		}
		te = waitCondition(t, c, client.ObjectKeyFromObject(te), ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonMigrationFailed)
		if condition(te, ticketsv1alpha1.ConditionReady).Status != metav1.ConditionFalse || te.Status.Migration.Phase != ticketsv1alpha1.MigrationFailed {
			t.Fatalf("status %+v", te.Status)
		}
		var booking appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: "failing", Name: render.Name(te, render.Booking)}, &booking); !apierrors.IsNotFound(err) {
			t.Fatalf("booking created despite the failed migration: %v", err)
		}
	})

	t.Run("keys are generated once", func(t *testing.T) {
		var keys corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "sale", Name: "summer-stadium-keys"}, &keys); err != nil {
			t.Fatal(err)
		}
		for k, v := range keysBefore {
			if string(keys.Data[k]) != string(v) {
				t.Fatalf("key %s rotated by reconcile", k)
			}
		}
	})

	t.Run("children are owned and the event deletes cleanly", func(t *testing.T) {
		te := getTE(t, c, key)
		lists := []client.ObjectList{
			&corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceAccountList{}, &corev1.ServiceList{},
			&rbacv1.RoleList{}, &rbacv1.RoleBindingList{}, &batchv1.JobList{}, &appsv1.DeploymentList{},
			&policyv1.PodDisruptionBudgetList{}, &autoscalingv2.HorizontalPodAutoscalerList{},
		}
		total := 0
		for _, l := range lists {
			if err := c.List(ctx, l, client.InNamespace("sale"), client.MatchingLabels{"app.kubernetes.io/instance": te.Name}); err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(l)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				o := it.(client.Object)
				ref := metav1.GetControllerOf(o)
				if ref == nil || ref.UID != te.UID || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
					t.Fatalf("%T %s is not controlled by the TicketEvent: %+v", o, o.GetName(), ref)
				}
				total++
			}
		}
		// 4 ConfigMaps, keys Secret, SA, Role, RoleBinding, Job, 4 Deployments, 3 Services, 3 PDBs, 1 HPA.
		if total != 20 {
			t.Fatalf("%d owned objects, want 20", total)
		}
		if err := c.Delete(ctx, te); err != nil {
			t.Fatal(err)
		}
		eventually(t, "TicketEvent deleted (no finalizer holds it)", func() error {
			err := c.Get(ctx, key, &ticketsv1alpha1.TicketEvent{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there: %v", err)
		})
	})
}

// tableRow reads a TicketEvent as `kubectl get` does (the Table API) and
// returns its cells by column name.
func tableRow(t *testing.T, cfg *rest.Config, ns, name string) map[string]string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("%s/apis/%s/namespaces/%s/ticketevents/%s", strings.TrimSuffix(cfg.Host, "/"), ticketsv1alpha1.GroupVersion, ns, name)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var table metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&table); err != nil || len(table.Rows) != 1 {
		t.Fatalf("table: %v, %d rows", err, len(table.Rows))
	}
	cells := map[string]string{}
	for i, col := range table.ColumnDefinitions {
		cells[col.Name] = fmt.Sprint(table.Rows[0].Cells[i])
	}
	return cells
}

// secretEnv finds the env name of a config field by rendering the struct.
func secretEnv(t *testing.T, cfg any, field *string) string {
	t.Helper()
	old := *field
	*field = "\x01marker"
	defer func() { *field = old }()
	for _, v := range config.Render(cfg) {
		if v.Value == "\x01marker" {
			return v.Name
		}
	}
	t.Fatal("field not found")
	return ""
}

func TestInvalidSpecsRejected(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	d := func(s string) *metav1.Duration {
		v, _ := time.ParseDuration(s)
		return &metav1.Duration{Duration: v}
	}
	ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}
	cases := []struct {
		name   string
		mutate func(*ticketsv1alpha1.TicketEvent)
		want   string
	}{
		// The message is reported at the field at fault (CEL fieldPath), not at spec.
		{"payment not shorter than hold", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Holds.TTL, te.Spec.Payment.Timeout = d("5m"), d("5m")
		}, "spec.payment.timeout: Invalid value: payment.timeout must be shorter than holds.ttl"},
		{"payment not shorter than the default hold", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Payment.Timeout = d("6m")
		}, "spec.payment.timeout: Invalid value: payment.timeout must be shorter than holds.ttl"},
		{"both identity methods", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Identity = &ticketsv1alpha1.Identity{HMACSecretRef: ref, JWKSURL: "https://id.example.com/jwks.json"}
		}, "identity needs exactly one of hmacSecretRef"},
		{"no identity method", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Identity = &ticketsv1alpha1.Identity{Issuer: "x"}
		}, "identity needs exactly one of hmacSecretRef"},
		{"autoscaling min above max", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Queue.Autoscaling = &ticketsv1alpha1.Autoscaling{MinReplicas: 5, MaxReplicas: 2}
		}, "spec.queue.autoscaling.minReplicas: Invalid value: autoscaling.minReplicas must not exceed autoscaling.maxReplicas"},
		{"tick too fast", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Admission.TickInterval = d("10ms") }, "admission.tickInterval must be between 100ms and 1m"},
		{"hold too long", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Holds.TTL = d("3h") }, "holds.ttl must be between 1m and 1h"},
		{"selection window too short", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Admission.SelectionWindow = d("5s") }, "admission.selectionWindow must be at least 10s"},
		{"too many seats per customer", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Holds.MaxSeatsPerCustomer = 11 }, "spec.holds.maxSeatsPerCustomer"},
		{"bad price", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Seating.Sections[0].Price = "12,50" }, "spec.seating.sections[0].price"},
		{"unknown pre-queue order", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Admission.PreQueue = "Random" }, "Unsupported value: \"Random\""},
		{"broker without port", func(te *ticketsv1alpha1.TicketEvent) {
			te.Spec.Kafka = &ticketsv1alpha1.Kafka{Brokers: []string{"kafka"}}
		}, "spec.kafka.brokers[0]"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := minimalEvent("default", fmt.Sprintf("invalid-%d", i))
			tc.mutate(te)
			err := c.Create(ctx, te)
			if err == nil {
				t.Fatal("accepted")
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}

	// A malformed duration is reported as such, at its field, before any
	// rule compares it (which would fail with a type conversion error).
	durations := []struct{ path, want string }{
		{"holds.ttl", "spec.holds.ttl: Invalid value: \"5 minutes\": holds.ttl must be a duration such as 5m"},
		{"payment.timeout", "spec.payment.timeout: Invalid value: \"5 minutes\": payment.timeout must be a duration such as 4m"},
		{"admission.tickInterval", "spec.admission.tickInterval: Invalid value: \"5 minutes\": admission.tickInterval must be a duration such as 1s"},
		{"admission.tokenTTL", "spec.admission.tokenTTL: Invalid value: \"5 minutes\": admission.tokenTTL must be a duration such as 10m"},
		{"admission.claimTimeout", "spec.admission.claimTimeout: Invalid value: \"5 minutes\": admission.claimTimeout must be a duration such as 60s"},
		{"admission.selectionWindow", "spec.admission.selectionWindow: Invalid value: \"5 minutes\": admission.selectionWindow must be a duration such as 2m"},
	}
	for i, tc := range durations {
		t.Run("malformed "+tc.path, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(minimalEvent("default", fmt.Sprintf("malformed-%d", i)))
			if err != nil {
				t.Fatal(err)
			}
			u.Object = obj
			u.SetAPIVersion(ticketsv1alpha1.GroupVersion.String())
			u.SetKind("TicketEvent")
			if err := unstructured.SetNestedField(u.Object, "5 minutes", append([]string{"spec"}, strings.Split(tc.path, ".")...)...); err != nil {
				t.Fatal(err)
			}
			err = c.Create(ctx, u)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "type conversion error") || strings.Contains(err.Error(), "must be between") || strings.Contains(err.Error(), "shorter than") {
				t.Fatalf("error %v reports more than the format", err)
			}
		})
	}

	// Setting only holds.ttl is valid: payment.timeout follows it (4/5 of
	// it, TestPaymentTimeoutFollowsHoldTTL) instead of a fixed default that
	// a shorter hold would make invalid.
	t.Run("holds.ttl alone", func(t *testing.T) {
		te := minimalEvent("default", "short-hold")
		te.Spec.Holds.TTL = d("2m")
		if err := c.Create(ctx, te); err != nil {
			t.Fatalf("holds.ttl 2m alone rejected: %v", err)
		}
		if got := getTE(t, c, client.ObjectKeyFromObject(te)); got.Spec.Payment.Timeout != nil {
			t.Fatalf("payment.timeout defaulted to %s", got.Spec.Payment.Timeout.Duration)
		}
		for _, ok := range []string{"1.5m", "90s", "1m59s"} {
			te := minimalEvent("default", "ok-"+strings.ReplaceAll(ok, ".", "-"))
			te.Spec.Holds.TTL, te.Spec.Payment.Timeout = d("2m"), d(ok)
			if err := c.Create(ctx, te); err != nil {
				t.Fatalf("payment.timeout %s with holds.ttl 2m rejected: %v", ok, err)
			}
		}
	})

	// The Opens column shows the time (a date column would print an age,
	// "<invalid>" for a future time).
	t.Run("Opens column", func(t *testing.T) {
		te := minimalEvent("default", "opens")
		te.Spec.SalesOpenAt = metav1.NewTime(time.Date(2036, 7, 1, 10, 0, 0, 0, time.UTC))
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		cells := tableRow(t, cfg, "default", "opens")
		if cells["Opens"] != "2036-07-01T10:00:00Z" {
			t.Fatalf("Opens column %q, want 2036-07-01T10:00:00Z (all cells %v)", cells["Opens"], cells)
		}
	})

	// Transition rules: what customers already hold cannot change.
	te := minimalEvent("default", "immutable")
	if err := c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	updates := []struct {
		name   string
		mutate func(*ticketsv1alpha1.TicketEvent)
		want   string
	}{
		{"eventId", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.EventID = 43 }, "eventId is immutable"},
		{"seating", func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Seating.Sections[0].Rows = 11 }, "seating is immutable once set"},
	}
	for _, tc := range updates {
		t.Run("update "+tc.name, func(t *testing.T) {
			cur := getTE(t, c, client.ObjectKeyFromObject(te))
			tc.mutate(cur)
			err := c.Update(ctx, cur)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v does not contain %q", err, tc.want)
			}
		})
	}
}

// The deletion of a finished migration Job can reach the reconciler before
// the cache holds the status write that recorded its success. The step reads
// the status again, uncached, instead of running the Job a second time.
func TestMigrationNotRerunFromStaleStatus(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx := context.Background()
	scheme := newScheme(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "stale"}}); err != nil {
		t.Fatal(err)
	}
	te := provisionable("stale", "migrated")
	if err := c.Create(ctx, te); err != nil {
		t.Fatal(err)
	}
	objs, err := render.Render(te, render.Options{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	job := objs.MigrationJob
	stale := te.DeepCopy() // what a lagging cache holds: the Job still pending
	stale.Status.Migration = ticketsv1alpha1.MigrationStatus{JobName: job.Name, Phase: ticketsv1alpha1.MigrationPending}
	te.Status.Migration = ticketsv1alpha1.MigrationStatus{JobName: job.Name, Phase: ticketsv1alpha1.MigrationSucceeded}
	if err := c.Status().Update(ctx, te); err != nil {
		t.Fatal(err)
	}
	r := &TicketEventReconciler{Client: c, APIReader: c, Scheme: scheme}
	var obs observed
	if err := r.stepMigration(ctx, stale, objs, &obs); err != nil {
		t.Fatal(err)
	}
	if obs.migration.Phase != ticketsv1alpha1.MigrationSucceeded {
		t.Fatalf("migration observed as %+v, want Succeeded", obs.migration)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the finished Job was created again: %v", err)
	}

	// A status that never recorded success does run the Job.
	te.Status.Migration = ticketsv1alpha1.MigrationStatus{}
	if err := c.Status().Update(ctx, te); err != nil {
		t.Fatal(err)
	}
	if err := r.stepMigration(ctx, te, objs, &obs); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); err != nil {
		t.Fatalf("the Job was not created: %v", err)
	}
}
