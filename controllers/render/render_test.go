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

package render

import (
	"crypto/ed25519"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/kubelint"
	"github.com/ticketfair/ticketfair/workloads/config"
)

func event() *ticketsv1alpha1.TicketEvent {
	ref := func(n string) corev1.SecretKeySelector {
		return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: n}, Key: "k"}
	}
	hmac := ref("identity")
	return &ticketsv1alpha1.TicketEvent{
		ObjectMeta: metav1.ObjectMeta{Name: "te", Namespace: "ns"},
		Spec: ticketsv1alpha1.TicketEventSpec{
			EventID:     7,
			SalesOpenAt: metav1.NewTime(time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)),
			Seating: ticketsv1alpha1.Seating{Sections: []ticketsv1alpha1.Section{
				{Name: "A", Price: "10.00", Rows: 2, SeatsPerRow: 3}, {Name: "B", Price: "5", Rows: 1, SeatsPerRow: 4},
			}},
			Admission: ticketsv1alpha1.Admission{MaxActive: 100},
			Identity:  &ticketsv1alpha1.Identity{HMACSecretRef: &hmac},
			Redis:     &ticketsv1alpha1.Redis{URLSecretRef: ref("redis")},
			Postgres:  &ticketsv1alpha1.Postgres{URLSecretRef: ref("pg")},
			Kafka:     &ticketsv1alpha1.Kafka{Brokers: []string{"k:9092"}},
		},
	}
}

func TestSeating(t *testing.T) {
	te := event()
	if got := Seating(te.Spec.Seating.Sections); got != "A:10.00:2:3;B:5:1:4" {
		t.Fatalf("Seating = %q", got)
	}
	if n := SeatsTotal(te); n != 10 {
		t.Fatalf("SeatsTotal = %d", n)
	}
}

func TestCredentialNeverLiteral(t *testing.T) {
	_, err := renderEnv("cm", []config.Var{{Name: "TICKETFAIR_X", Value: "hunter2", Secret: true}}, nil)
	if err == nil || !strings.Contains(err.Error(), "only come from a Secret") {
		t.Fatalf("literal credential accepted: %v", err)
	}
	var x string
	refs := envRefs{}
	refs.secret(&x, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"})
	e, err := renderEnv("cm", []config.Var{{Name: "TICKETFAIR_X", Value: x, Secret: true, Field: &x}}, refs)
	if err != nil || e.env[0].ValueFrom.SecretKeyRef.Name != "s" || len(e.data) != 0 {
		t.Fatalf("secret ref rendered as %+v, %v", e, err)
	}
}

// A Secret reference must be to a field that is rendered: one to a copy's
// field would lose the credential.
func TestSecretRefToUnrenderedField(t *testing.T) {
	var rendered, other string
	refs := envRefs{}
	refs.secret(&other, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"})
	if _, err := renderEnv("cm", []config.Var{{Name: "TICKETFAIR_X", Secret: true, Field: &rendered}}, refs); err == nil {
		t.Fatal("a reference to a field that was not rendered was dropped silently")
	}
}

// The queue's config hash ignores the live keys (admission, salesOpenAt) but not the rest;
// booking's follows holds.
func TestConfigHash(t *testing.T) {
	hash := func(te *ticketsv1alpha1.TicketEvent, c Component) (string, map[string]string) {
		o, err := Render(te, Options{Image: "img"})
		if err != nil {
			t.Fatal(err)
		}
		return o.Deployments[c].Spec.Template.Annotations[ConfigHashAnnotation], o.ConfigMaps[c].Data
	}
	base := event()
	q0, cm0 := hash(base, Queue)
	b0, _ := hash(base, Booking)

	live := event()
	live.Spec.Admission = ticketsv1alpha1.Admission{MaxActive: 200, RatePerSecond: 9, Paused: true, PreQueue: ticketsv1alpha1.PreQueueFIFO,
		TickInterval: &metav1.Duration{Duration: 2 * time.Second}}
	q1, cm1 := hash(live, Queue)
	if q1 != q0 {
		t.Fatal("admission change altered the queue's config hash")
	}
	if len(cm1) != len(cm0) || cm1[firstDiff(cm0, cm1)] == "" {
		t.Fatalf("admission change did not reach the queue ConfigMap")
	}

	opens := event()
	opens.Spec.SalesOpenAt = metav1.NewTime(opens.Spec.SalesOpenAt.Add(time.Hour))
	if q2, cm2 := hash(opens, Queue); q2 != q0 || firstDiff(cm0, cm2) == "" {
		t.Fatal("salesOpenAt is live in the queue: it must reach the ConfigMap without changing the hash")
	}
	window := event()
	window.Spec.Admission.SelectionWindow = &metav1.Duration{Duration: 45 * time.Second}
	if q4, cm4 := hash(window, Queue); q4 != q0 || cm4["TICKETFAIR_SELECTION_WINDOW"] != "45s" {
		t.Fatalf("admission.selectionWindow is live in the queue: hash changed %v, ConfigMap %q, want it kept and 45s",
			q4 != q0, cm4["TICKETFAIR_SELECTION_WINDOW"])
	}
	identity := event()
	identity.Spec.Identity.Issuer = "other"
	if q3, _ := hash(identity, Queue); q3 == q0 {
		t.Fatal("identity.issuer change kept the queue's config hash")
	}
	holds := event()
	holds.Spec.Holds.TTL = &metav1.Duration{Duration: 7 * time.Minute}
	if b1, _ := hash(holds, Booking); b1 == b0 {
		t.Fatal("holds.ttl change kept booking's config hash")
	}
}

func firstDiff(a, b map[string]string) string {
	for k, v := range b {
		if a[k] != v {
			return k
		}
	}
	return ""
}

func TestMissingConfiguration(t *testing.T) {
	te := event()
	te.Spec.Redis, te.Spec.Kafka = nil, nil
	if _, err := Render(te, Options{}); err == nil || !strings.Contains(err.Error(), "spec.redis, spec.kafka") {
		t.Fatalf("Render = %v", err)
	}
}

func TestGenerateKeys(t *testing.T) {
	a, err := GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateKeys()
	for _, k := range []string{KeyAccessTokenKeys, KeyTicketKeys} {
		kid, seed, ok := strings.Cut(string(a[k]), ":")
		raw, err := base64.StdEncoding.DecodeString(seed)
		if !ok || kid == "" || err != nil || len(raw) != ed25519.SeedSize {
			t.Fatalf("%s = %q", k, a[k])
		}
		if string(a[k]) == string(b[k]) {
			t.Fatalf("%s repeated across calls", k)
		}
	}
	if string(a[KeyAccessTokenKeys]) == string(a[KeyTicketKeys]) || len(a[KeyServiceToken]) < 40 {
		t.Fatalf("keys %q", a)
	}
}

func TestNetworkPolicies(t *testing.T) {
	rendered := func(te *ticketsv1alpha1.TicketEvent) *Objects {
		t.Helper()
		o, err := Render(te, Options{Image: "img"})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	countNetworkPolicies := func(o *Objects) int {
		n := 0
		for _, obj := range o.All() {
			if _, ok := obj.(*networkingv1.NetworkPolicy); ok {
				n++
			}
		}
		return n
	}

	// Off by default, and off when present but not enabled (peers may be prepared).
	te := event()
	if o := rendered(te); len(o.NetworkPolicies) != 0 || countNetworkPolicies(o) != 0 {
		t.Fatalf("NetworkPolicies without spec.networkPolicy: %v", o.NetworkPolicies)
	}
	gateway := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "gateway"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "envoy"}},
	}
	office := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.8.0.0/16", Except: []string{"10.8.1.0/24"}}}
	te.Spec.NetworkPolicy = &ticketsv1alpha1.NetworkPolicy{IngressFrom: []networkingv1.NetworkPolicyPeer{gateway, office}}
	if o := rendered(te); len(o.NetworkPolicies) != 0 || countNetworkPolicies(o) != 0 {
		t.Fatalf("NetworkPolicies while enabled is false: %v", o.NetworkPolicies)
	}

	// Enabled with peers: one per long-running workload, ingress on "http" from the peers only.
	te.Spec.NetworkPolicy.Enabled = true
	o := rendered(te)
	if len(o.NetworkPolicies) != 4 || countNetworkPolicies(o) != 4 {
		t.Fatalf("%d NetworkPolicies (%d in All), want 4", len(o.NetworkPolicies), countNetworkPolicies(o))
	}
	if _, ok := o.NetworkPolicies[Migrate]; ok {
		t.Fatal("NetworkPolicy for the migration Job")
	}
	for _, c := range Components {
		np := o.NetworkPolicies[c]
		if np == nil {
			t.Fatalf("no NetworkPolicy for %s", c)
		}
		if np.Name != "te-"+string(c) || np.Namespace != "ns" || np.Kind != "NetworkPolicy" || np.APIVersion != "networking.k8s.io/v1" {
			t.Fatalf("%s: NetworkPolicy %s/%s %s", c, np.Namespace, np.Name, np.GetObjectKind().GroupVersionKind())
		}
		if !reflect.DeepEqual(np.Labels, Labels(te, c)) {
			t.Fatalf("%s: labels %v", c, np.Labels)
		}
		// It selects exactly the pods of the workload's Deployment.
		if sel := np.Spec.PodSelector; !reflect.DeepEqual(sel.MatchLabels, o.Deployments[c].Spec.Selector.MatchLabels) ||
			sel.MatchLabels["app.kubernetes.io/component"] != string(c) || sel.MatchLabels["app.kubernetes.io/instance"] != "te" || len(sel.MatchExpressions) != 0 {
			t.Fatalf("%s: pod selector %+v", c, np.Spec.PodSelector)
		}
		if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Egress) != 0 {
			t.Fatalf("%s: policy types %v, egress %v", c, np.Spec.PolicyTypes, np.Spec.Egress)
		}
		if len(np.Spec.Ingress) != 1 {
			t.Fatalf("%s: %d ingress rules", c, len(np.Spec.Ingress))
		}
		rule := np.Spec.Ingress[0]
		if len(rule.Ports) != 1 || *rule.Ports[0].Protocol != corev1.ProtocolTCP || rule.Ports[0].Port.String() != "http" || rule.Ports[0].EndPort != nil {
			t.Fatalf("%s: ports %+v", c, rule.Ports)
		}
		// The named port is the one the container declares.
		if ports := o.Deployments[c].Spec.Template.Spec.Containers[0].Ports; len(ports) != 1 || ports[0].Name != rule.Ports[0].Port.StrVal {
			t.Fatalf("%s: container ports %+v", c, ports)
		}
		if !reflect.DeepEqual(rule.From, []networkingv1.NetworkPolicyPeer{gateway, office}) {
			t.Fatalf("%s: from %+v", c, rule.From)
		}
	}
	// The rendered peers are copies: the spec is not aliased.
	o.NetworkPolicies[Queue].Spec.Ingress[0].From[0].PodSelector.MatchLabels["app"] = "changed"
	if te.Spec.NetworkPolicy.IngressFrom[0].PodSelector.MatchLabels["app"] != "envoy" {
		t.Fatal("rendered NetworkPolicy aliases spec.networkPolicy.ingressFrom")
	}

	// Enabled without peers: the HTTP port is open to any source, nothing else is.
	te.Spec.NetworkPolicy.IngressFrom = nil
	for _, c := range Components {
		rule := rendered(te).NetworkPolicies[c].Spec.Ingress
		if len(rule) != 1 || rule[0].From != nil || len(rule[0].Ports) != 1 || rule[0].Ports[0].Port.String() != "http" {
			t.Fatalf("%s without peers: ingress %+v", c, rule)
		}
	}
}

// The sale's objects pass kube-linter's default checks (internal/kubelint):
// PDBs let unhealthy pods be evicted, the migration Job is cleaned up after
// it finished, every multi-replica Deployment spreads over nodes.
func TestRenderedObjectsPassKubeLinterChecks(t *testing.T) {
	te := event()
	two := int32(2)
	te.Spec.Relay.Replicas = &two
	te.Spec.Booking.Autoscaling = &ticketsv1alpha1.Autoscaling{MinReplicas: 2, MaxReplicas: 5}
	te.Spec.NetworkPolicy = &ticketsv1alpha1.NetworkPolicy{Enabled: true}
	o, err := Render(te, Options{Image: "ticketfair:1.0"})
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, obj := range o.All() {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: u})
	}
	if o.MigrationJob.Spec.TTLSecondsAfterFinished == nil || *o.MigrationJob.Spec.TTLSecondsAfterFinished != int32(MigrationJobTTL/time.Second) {
		t.Fatalf("migration Job ttlSecondsAfterFinished %v", o.MigrationJob.Spec.TTLSecondsAfterFinished)
	}
	findings, err := kubelint.Lint(objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
}

// Unset, payment.timeout follows holds.ttl (config.DefaultPaymentTimeout);
// set, it is taken as it is.
func TestPaymentTimeoutFollowsHoldTTL(t *testing.T) {
	bookingEnv := func(te *ticketsv1alpha1.TicketEvent) config.Booking {
		t.Helper()
		o, err := Render(te, Options{Image: "ticketfair:1.0"})
		if err != nil {
			t.Fatal(err)
		}
		var b config.Booking
		data := o.ConfigMaps[Booking].Data
		if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := data[k]; return v, ok }, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	te := event()
	te.Spec.Holds.TTL = &metav1.Duration{Duration: 2 * time.Minute}
	if b := bookingEnv(te); b.HoldTTL != 2*time.Minute || b.PaymentTimeout != 96*time.Second {
		t.Fatalf("holds.ttl 2m alone: hold %s, payment timeout %s, want 2m0s and 1m36s", b.HoldTTL, b.PaymentTimeout)
	}
	te.Spec.Holds.TTL = nil
	if b := bookingEnv(te); b.PaymentTimeout != 4*time.Minute {
		t.Fatalf("defaults: payment timeout %s, want 4m (4/5 of booking's default hold TTL)", b.PaymentTimeout)
	}
	te.Spec.Holds.TTL = &metav1.Duration{Duration: 10 * time.Minute}
	te.Spec.Payment.Timeout = &metav1.Duration{Duration: 3 * time.Minute}
	if b := bookingEnv(te); b.PaymentTimeout != 3*time.Minute {
		t.Fatalf("set payment timeout %s, want 3m", b.PaymentTimeout)
	}
}

// TestServingPodsStopCleanly: each serving workload keeps answering for a
// drain delay after SIGTERM (its endpoints leave kube-proxy only then),
// then has its shutdown grace, and both fit in the pod's termination grace
// period, so no request is cut off in a rollout.
func TestServingPodsStopCleanly(t *testing.T) {
	o, err := Render(event(), Options{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	for c, d := range o.Deployments {
		cm := o.ConfigMaps[c]
		if cm == nil {
			t.Fatalf("%s: no ConfigMap", c)
		}
		var srv config.Server
		if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := cm.Data[k]; return v, ok }, &srv); err != nil {
			t.Fatal(err)
		}
		if srv.DrainDelay < 2*time.Second {
			t.Errorf("%s: drain delay %v, want at least 2s for the endpoints to leave kube-proxy", c, srv.DrainDelay)
		}
		grace := time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
		if srv.DrainDelay+srv.ShutdownGrace+5*time.Second > grace {
			t.Errorf("%s: drain %v + shutdown grace %v + 5s margin > terminationGracePeriod %v", c, srv.DrainDelay, srv.ShutdownGrace, grace)
		}
	}
}

// TestDefaultResources: a workload without resources in the spec gets its
// component's measured defaults, a memory request within its limit and no
// CPU limit; one with resources keeps exactly those.
func TestDefaultResources(t *testing.T) {
	te := event()
	te.Spec.Queue.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	o, err := Render(te, Options{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	for c, d := range o.Deployments {
		got := d.Spec.Template.Spec.Containers[0].Resources
		if c == Queue {
			if !reflect.DeepEqual(got, *te.Spec.Queue.Resources) {
				t.Errorf("queue: resources %v, want the spec's %v", got, te.Spec.Queue.Resources)
			}
			continue
		}
		if !reflect.DeepEqual(got, DefaultResources(c)) {
			t.Errorf("%s: resources %v, want the defaults %v", c, got, DefaultResources(c))
		}
	}
	for _, c := range append([]Component{Migrate}, Components...) {
		r := DefaultResources(c)
		if r.Requests.Cpu().IsZero() || r.Requests.Memory().Cmp(*r.Limits.Memory()) > 0 || !r.Limits.Cpu().IsZero() {
			t.Errorf("%s: default resources %v: want CPU and memory requests, memory request within the limit, no CPU limit", c, r)
		}
	}
	if got := o.MigrationJob.Spec.Template.Spec.Containers[0].Resources; !reflect.DeepEqual(got, DefaultResources(Migrate)) {
		t.Errorf("migration Job: resources %v, want %v", got, DefaultResources(Migrate))
	}
}
