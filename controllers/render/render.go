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

// Package render turns a TicketEvent into the Kubernetes objects of its sale.
// It is pure (no client), so the reconciler, the chart tests and an
// end-to-end test that runs the rendered containers as local processes all
// see exactly the same objects.
//
// Every container's configuration comes from the workloads' own config
// structs (package workloads/config) through config.Render: plain values go
// into a ConfigMap per workload and reach the container as configMapKeyRef
// env vars, credentials reach it as secretKeyRef env vars, and the pod
// identity through the downward API. Env var names are never spelled out
// here, so a renamed field cannot drift between operator and workload.
package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// Component is one workload of a sale.
type Component string

// The workloads; the value is also the ticketfair subcommand that runs it.
const (
	Queue   Component = "queue"
	Booking Component = "booking"
	Relay   Component = "relay"
	Tickets Component = "tickets"
	Migrate Component = "migrate"
)

// Components are the long-running workloads, each a Deployment.
var Components = []Component{Queue, Booking, Relay, Tickets}

// Served are the workloads whose API is reached through a Service (and kept
// up through voluntary disruptions by a PodDisruptionBudget): the queue and
// booking APIs, and tickets, which serves customers' tickets. The relay
// serves nothing but probes and metrics.
var Served = []Component{Queue, Booking, Tickets}

// Keys of the generated Secret (see KeysSecretName).
const (
	KeyAccessTokenKeys = "access-token-keys"
	KeyServiceToken    = "service-token"
	KeyTicketKeys      = "ticket-keys"
	// KeyGateSecret is the gate secret the gate devices' credentials are
	// derived from, used unless spec.gates.gateSecretRef names another.
	KeyGateSecret = "gate-secret"
)

const (
	// ConfigHashAnnotation on a pod template changes when configuration that
	// the workload reads only at start changes, so the pods roll.
	ConfigHashAnnotation = "tickets.ticketfair.io/config-hash"
	// Binary is the path of the workloads binary in the image.
	Binary = "/ticketfair"
	// HTTPPortName names the container port of the API, probes and /metrics.
	HTTPPortName = "http"

	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelComponent = "app.kubernetes.io/component"
	labelManagedBy = "app.kubernetes.io/managed-by"
	// ManagerName is the value of app.kubernetes.io/managed-by on every object.
	ManagerName = "ticketfair-operator"
	labelPartOf = "app.kubernetes.io/part-of"
	nonRootUID  = 65532
)

// Options are the operator-wide inputs of rendering.
type Options struct {
	// Image is the workloads image used when the TicketEvent names none.
	Image string
}

// Objects are the objects of one sale. The keys Secret is not among them:
// its content is generated once by the reconciler (see GenerateKeys).
type Objects struct {
	ConfigMaps               map[Component]*corev1.ConfigMap
	ServiceAccount           *corev1.ServiceAccount
	Role                     *rbacv1.Role
	RoleBinding              *rbacv1.RoleBinding
	MigrationJob             *batchv1.Job
	Deployments              map[Component]*appsv1.Deployment
	Services                 map[Component]*corev1.Service
	PodDisruptionBudgets     map[Component]*policyv1.PodDisruptionBudget
	HorizontalPodAutoscalers map[Component]*autoscalingv2.HorizontalPodAutoscaler
	// NetworkPolicies has one entry per long-running workload when
	// spec.networkPolicy.enabled, and none otherwise.
	NetworkPolicies map[Component]*networkingv1.NetworkPolicy
}

// Name is the name of a component's objects (Deployment, Service, ConfigMap).
func Name(te *ticketsv1alpha1.TicketEvent, c Component) string { return te.Name + "-" + string(c) }

// KeysSecretName is the Secret the operator generates with the access-token
// keys, the internal service token and the ticket signing keys.
func KeysSecretName(te *ticketsv1alpha1.TicketEvent) string { return te.Name + "-keys" }

// ServiceAccountName is the queue pods' ServiceAccount (and Role, RoleBinding).
func ServiceAccountName(te *ticketsv1alpha1.TicketEvent) string { return te.Name + "-queue" }

// LeaseName is the Lease through which the queue pods elect their admitter.
func LeaseName(te *ticketsv1alpha1.TicketEvent) string { return te.Name + "-admitter" }

// Labels are the labels of every object of a component.
func Labels(te *ticketsv1alpha1.TicketEvent, c Component) map[string]string {
	l := SelectorLabels(te, c)
	l[labelManagedBy] = ManagerName
	l[labelPartOf] = "ticketfair"
	return l
}

// SelectorLabels select the pods of a component.
func SelectorLabels(te *ticketsv1alpha1.TicketEvent, c Component) map[string]string {
	return map[string]string{labelName: "ticketfair", labelInstance: te.Name, labelComponent: string(c)}
}

// Missing lists the spec fields that must be set before the sale can be
// provisioned. They are optional in the schema so a TicketEvent can be
// written before its infrastructure exists.
func Missing(te *ticketsv1alpha1.TicketEvent) []string {
	var m []string
	if te.Spec.Identity == nil {
		m = append(m, "spec.identity")
	}
	if te.Spec.Redis == nil {
		m = append(m, "spec.redis")
	}
	if te.Spec.Postgres == nil {
		m = append(m, "spec.postgres")
	}
	if te.Spec.Kafka == nil {
		m = append(m, "spec.kafka")
	}
	return m
}

// Seating renders sections as "name:price:rows:seatsPerRow;...".
func Seating(sections []ticketsv1alpha1.Section) string {
	parts := make([]string, len(sections))
	for i, s := range sections {
		parts[i] = fmt.Sprintf("%s:%s:%d:%d", s.Name, s.Price, s.Rows, s.SeatsPerRow)
	}
	return strings.Join(parts, ";")
}

// SeatsTotal is the number of seats of the seating.
func SeatsTotal(te *ticketsv1alpha1.TicketEvent) int64 {
	var n int64
	for _, s := range te.Spec.Seating.Sections {
		n += int64(s.Rows) * int64(s.SeatsPerRow)
	}
	return n
}

// Render renders every object of the sale. It fails when required spec
// fields are missing (see Missing).
func Render(te *ticketsv1alpha1.TicketEvent, opts Options) (*Objects, error) {
	if m := Missing(te); len(m) > 0 {
		return nil, fmt.Errorf("missing %s", strings.Join(m, ", "))
	}
	cfgs, err := workloadConfigs(te)
	if err != nil {
		return nil, err
	}
	o := &Objects{
		ConfigMaps:               map[Component]*corev1.ConfigMap{},
		Deployments:              map[Component]*appsv1.Deployment{},
		Services:                 map[Component]*corev1.Service{},
		PodDisruptionBudgets:     map[Component]*policyv1.PodDisruptionBudget{},
		HorizontalPodAutoscalers: map[Component]*autoscalingv2.HorizontalPodAutoscaler{},
		NetworkPolicies:          map[Component]*networkingv1.NetworkPolicy{},
	}
	envs := map[Component]renderedEnv{}
	for _, c := range Components {
		e, err := renderEnv(Name(te, c), cfgs[c].vars, cfgs[c].refs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
		envs[c] = e
		o.ConfigMaps[c] = &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta(te, c, Name(te, c)),
			Data:       e.data,
		}
	}
	o.ServiceAccount, o.Role, o.RoleBinding = queueRBAC(te)
	o.MigrationJob = migrationJob(te, opts, envs[Booking])
	for _, c := range Components {
		o.Deployments[c] = deployment(te, opts, c, envs[c], cfgs[c].port)
	}
	for _, c := range Served {
		o.Services[c] = service(te, c)
		o.PodDisruptionBudgets[c] = pdb(te, c)
	}
	for _, c := range []Component{Queue, Booking} {
		if as := scalable(te, c).Autoscaling; as != nil {
			o.HorizontalPodAutoscalers[c] = hpa(te, c, as)
		}
	}
	if np := te.Spec.NetworkPolicy; np != nil && np.Enabled {
		for _, c := range Components {
			o.NetworkPolicies[c] = networkPolicy(te, c, np.IngressFrom)
		}
	}
	return o, nil
}

// workloadConfig is one workload's rendered configuration.
type workloadConfig struct {
	vars []config.Var
	refs envRefs // fields whose value comes from a Secret key or a pod field
	port int32
}

// defaults fills dst from the struct tags, exactly as the workload sees them.
func defaults(dst any) error {
	if err := config.Defaults(dst); err != nil {
		return fmt.Errorf("workload defaults: %w", err)
	}
	return nil
}

func workloadConfigs(te *ticketsv1alpha1.TicketEvent) (map[Component]workloadConfig, error) {
	s := te.Spec
	keys := KeysSecretName(te)
	out := map[Component]workloadConfig{}

	var q config.Queue
	if err := defaults(&q); err != nil {
		return nil, err
	}
	qrefs := envRefs{}
	q.DrainDelay = drainDelay
	q.EventID = s.EventID
	redisConfig(&q.Redis, s.Redis, qrefs)
	identity(&q.Identity, s.Identity, qrefs)
	qrefs.secret(&q.AccessTokenKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyAccessTokenKeys})
	admission(&q.Admission, s.Admission)
	rateLimits(&q.RateLimits, s.BotProtection.RateLimits)
	proofOfWork(&q.ProofOfWork, s.BotProtection.ProofOfWork)
	qrefs.secret(&q.PowKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyPowKeys})
	q.SalesOpenAt = s.SalesOpenAt.UTC().Format(time.RFC3339)
	phasesJSON, err := phases(s.Phases)
	if err != nil {
		return nil, err
	}
	q.Phases = phasesJSON
	qrefs.secret(&q.AccessCodeKey, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyAccessCodeKey})
	q.Admitter = true
	q.LeaderElection = true
	q.LeaseName = LeaseName(te)
	qrefs.field(&q.Namespace, "metadata.namespace")
	qrefs.field(&q.PodName, "metadata.name")
	q.TicketEventName = te.Name
	// The queue follows spec.admission and spec.salesOpenAt of its
	// TicketEvent live: their fields are tagged live, and their keys do not
	// roll its pods.
	port, err := httpPort(q.HTTPAddr)
	if err != nil {
		return nil, err
	}
	out[Queue] = workloadConfig{vars: config.Render(&q), refs: qrefs, port: port}

	var b config.Booking
	if err := defaults(&b); err != nil {
		return nil, err
	}
	brefs := envRefs{}
	b.DrainDelay = drainDelay
	b.EventID = s.EventID
	postgresConfig(&b.Postgres, s.Postgres, brefs)
	redisConfig(&b.Redis, s.Redis, brefs)
	identity(&b.Identity, s.Identity, brefs)
	brefs.secret(&b.AccessTokenKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyAccessTokenKeys})
	rateLimits(&b.RateLimits, s.BotProtection.RateLimits)
	if s.Holds.TTL != nil {
		b.HoldTTL = s.Holds.TTL.Duration
	}
	// Unset, the payment timeout follows the hold TTL; rendered explicitly
	// so the ConfigMap shows what booking uses.
	b.PaymentTimeout = config.DefaultPaymentTimeout(b.HoldTTL)
	if s.Payment.Timeout != nil {
		b.PaymentTimeout = s.Payment.Timeout.Duration
	}
	if s.Holds.MaxSeatsPerCustomer > 0 {
		b.MaxSeatsPerCustomer = int(s.Holds.MaxSeatsPerCustomer)
	}
	if s.Payment.WebhookSecretRef != nil {
		brefs.secret(&b.WebhookSecrets, *s.Payment.WebhookSecretRef)
	}
	if s.Payment.StripeWebhookSecretRef != nil {
		brefs.secret(&b.StripeWebhookSecrets, *s.Payment.StripeWebhookSecretRef)
	}
	brefs.secret(&b.ServiceToken, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyServiceToken})
	b.Seating = Seating(s.Seating.Sections)
	if b.Phases, err = bookingPhases(s.Phases); err != nil {
		return nil, err
	}
	if port, err = httpPort(b.HTTPAddr); err != nil {
		return nil, err
	}
	out[Booking] = workloadConfig{vars: config.Render(&b), refs: brefs, port: port}

	var r config.Relay
	if err := defaults(&r); err != nil {
		return nil, err
	}
	rrefs := envRefs{}
	r.DrainDelay = drainDelay
	postgresConfig(&r.Postgres, s.Postgres, rrefs)
	kafka(&r.Kafka, s.Kafka, rrefs)
	if port, err = httpPort(r.HTTPAddr); err != nil {
		return nil, err
	}
	out[Relay] = workloadConfig{vars: config.Render(&r), refs: rrefs, port: port}

	var t config.Tickets
	if err := defaults(&t); err != nil {
		return nil, err
	}
	trefs := envRefs{}
	t.DrainDelay = drainDelay
	postgresConfig(&t.Postgres, s.Postgres, trefs)
	kafka(&t.Kafka, s.Kafka, trefs)
	identity(&t.Identity, s.Identity, trefs)
	trefs.secret(&t.TicketKeys, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keys}, Key: KeyTicketKeys})
	eventInfo(&t.EventInfo, s)
	mail(&t.Mail, s.Delivery.Mail, trefs)
	gate(&t.Gate, s.Gates, GateSecretRef(te), trefs)
	if port, err = httpPort(t.HTTPAddr); err != nil {
		return nil, err
	}
	out[Tickets] = workloadConfig{vars: config.Render(&t), refs: trefs, port: port}
	return out, nil
}

func identity(dst *config.Identity, id *ticketsv1alpha1.Identity, refs envRefs) {
	dst.IdentityHMACSecret = ""
	refs.optSecret(&dst.IdentityHMACSecret, id.HMACSecretRef)
	dst.IdentityJWKSURL = id.JWKSURL
	if id.Issuer != "" {
		dst.IdentityIssuer = id.Issuer
	}
	if id.Audience != "" {
		dst.IdentityAudience = id.Audience
	}
	if id.TierClaim != "" {
		dst.TierClaim = id.TierClaim
	}
	if id.EmailClaim != "" {
		dst.EmailClaim = id.EmailClaim
	}
}

// eventInfo is what the tickets say about the event.
func eventInfo(dst *config.EventInfo, s ticketsv1alpha1.TicketEventSpec) {
	dst.EventName = s.DisplayName
	dst.Venue = s.Venue
	if s.StartsAt != nil {
		dst.StartsAt = s.StartsAt.UTC().Format(time.RFC3339)
	}
}

// mail copies spec.delivery.mail; unset, the tickets service sends no mail.
// The SMTP credentials come from the Secret's username and password keys.
func mail(dst *config.Mail, m *ticketsv1alpha1.Mail, refs envRefs) {
	if m == nil {
		dst.SMTPHost = ""
		return
	}
	dst.SMTPHost = m.SMTP.Host
	if m.SMTP.Port > 0 {
		dst.SMTPPort = int(m.SMTP.Port)
	}
	if m.SMTP.TLS != "" {
		dst.SMTPTLS = string(m.SMTP.TLS)
	}
	if c := m.SMTP.CredentialsSecretRef; c != nil {
		refs.secret(&dst.SMTPUsername, corev1.SecretKeySelector{LocalObjectReference: *c, Key: ticketsv1alpha1.SMTPUsernameKey})
		refs.secret(&dst.SMTPPassword, corev1.SecretKeySelector{LocalObjectReference: *c, Key: ticketsv1alpha1.SMTPPasswordKey})
	}
	dst.From = m.From
	if m.Workers > 0 {
		dst.Workers = int(m.Workers)
	}
}

// GateSecretRef is where the gate secret of a sale is: spec.gates.gateSecretRef,
// or else the generated key of the keys Secret.
func GateSecretRef(te *ticketsv1alpha1.TicketEvent) corev1.SecretKeySelector {
	if r := te.Spec.Gates.GateSecretRef; r != nil {
		return *r
	}
	return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: KeysSecretName(te)}, Key: KeyGateSecret}
}

// gate copies spec.gates; fields left unset keep the workload's defaults.
func gate(dst *config.Gate, g ticketsv1alpha1.Gates, secret corev1.SecretKeySelector, refs envRefs) {
	refs.secret(&dst.GateSecret, secret)
	if g.Transfers.Max != nil {
		dst.MaxTransfers = int(*g.Transfers.Max)
	}
	if g.Transfers.Cutoff != nil {
		dst.TransferCutoff = g.Transfers.Cutoff.Duration
	}
}

// admission copies spec.admission; fields left unset keep the workload's defaults.
func admission(dst *config.Admission, a ticketsv1alpha1.Admission) {
	if a.MaxActive > 0 {
		dst.MaxActive = int(a.MaxActive)
	}
	if a.RatePerSecond > 0 {
		dst.RatePerSecond = int(a.RatePerSecond)
	}
	if a.TickInterval != nil {
		dst.TickInterval = a.TickInterval.Duration
	}
	if a.TokenTTL != nil {
		dst.TokenTTL = a.TokenTTL.Duration
	}
	if a.ClaimTimeout != nil {
		dst.ClaimTimeout = a.ClaimTimeout.Duration
	}
	if a.SelectionWindow != nil {
		dst.SelectionWindow = a.SelectionWindow.Duration
	}
	if a.PreQueue != "" {
		dst.PreQueue = strings.ToLower(string(a.PreQueue))
	}
	dst.Paused = a.Paused
}

func kafka(dst *config.Kafka, k *ticketsv1alpha1.Kafka, refs envRefs) {
	dst.Brokers = append([]string(nil), k.Brokers...)
	if k.TicketIssuedTopic != "" {
		dst.TopicTicketIssued = k.TicketIssuedTopic
	}
	if k.RefundRequestedTopic != "" {
		dst.TopicRefundRequested = k.RefundRequestedTopic
	}
	kafkaSecurity(dst, k, refs)
}

func httpPort(addr string) (int32, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("http address %q: %w", addr, err)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("http address %q: %w", addr, err)
	}
	return int32(n), nil
}

// envRefs maps a config field (its address, as config.Var.Field gives it)
// to where its value comes from when it is not a literal: a Secret's key or
// a field of the pod. renderEnv turns such a field into a valueFrom env var.
type envRefs map[any]*corev1.EnvVarSource

// secret makes the field's value come from the Secret key s.
func (r envRefs) secret(field *string, s corev1.SecretKeySelector) {
	*field = ""
	r[field] = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: s.Key}}
}

// optSecret is secret when s is set, and otherwise leaves the field alone.
func (r envRefs) optSecret(field *string, s *corev1.SecretKeySelector) {
	if s != nil {
		r.secret(field, *s)
	}
}

// field makes the field's value come from the pod's field at path (the
// downward API).
func (r envRefs) field(field *string, path string) {
	*field = ""
	r[field] = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
}

// of is the source of v's value, nil for a literal.
func (r envRefs) of(v config.Var) *corev1.EnvVarSource {
	if v.Field == nil {
		return nil
	}
	return r[v.Field]
}

// renderedEnv is the env of a container and the ConfigMap data it refers to.
type renderedEnv struct {
	env  []corev1.EnvVar
	data map[string]string
	hash string // of everything read only at start
}

func renderEnv(configMap string, vars []config.Var, refs envRefs) (renderedEnv, error) {
	e := renderedEnv{data: map[string]string{}}
	h := sha256.New()
	used := 0
	for _, v := range vars {
		switch src := refs.of(v); {
		case src != nil:
			used++
			if src.SecretKeyRef != nil && (src.SecretKeyRef.Name == "" || src.SecretKeyRef.Key == "") {
				return e, fmt.Errorf("%s: secret reference %s/%s needs a name and a key", v.Name, src.SecretKeyRef.Name, src.SecretKeyRef.Key)
			}
			e.env = append(e.env, corev1.EnvVar{Name: v.Name, ValueFrom: src.DeepCopy()})
		case v.Secret && v.Value == "":
			// An optional credential that this sale does not use.
		case v.Secret:
			return e, fmt.Errorf("%s is a credential and may only come from a Secret", v.Name)
		case v.Value == "":
			// Unset without a default: the workload's zero value applies anyway.
		default:
			e.data[v.Name] = v.Value
			e.env = append(e.env, corev1.EnvVar{Name: v.Name, ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Key: v.Name},
			}})
			if !v.Live {
				fmt.Fprintf(h, "%s=%s\n", v.Name, v.Value)
			}
		}
	}
	if used != len(refs) {
		// A reference to a field of another struct (a copy, say) would
		// silently lose its Secret.
		return e, fmt.Errorf("%d of %d references are to fields that were not rendered", len(refs)-used, len(refs))
	}
	e.hash = hex.EncodeToString(h.Sum(nil))[:16]
	return e, nil
}

func meta(te *ticketsv1alpha1.TicketEvent, c Component, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: te.Namespace, Labels: Labels(te, c)}
}

func queueRBAC(te *ticketsv1alpha1.TicketEvent) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := ServiceAccountName(te)
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: meta(te, Queue, name),
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: meta(te, Queue, name),
		Rules: []rbacv1.PolicyRule{
			// spec.admission is followed live, of its own TicketEvent only (the
			// queue lists and watches with a metadata.name field selector,
			// which resourceNames allow).
			{APIGroups: []string{ticketsv1alpha1.GroupVersion.Group}, Resources: []string{"ticketevents"}, ResourceNames: []string{te.Name}, Verbs: []string{"get", "list", "watch"}},
			// Admitter election; create cannot be limited to a name.
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{LeaseName(te)}, Verbs: []string{"get", "update"}},
		},
	}
	rb := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: meta(te, Queue, name),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: te.Namespace}},
	}
	return sa, role, rb
}

func workload(te *ticketsv1alpha1.TicketEvent, c Component) ticketsv1alpha1.Workload {
	switch c {
	case Queue:
		return te.Spec.Queue.Workload
	case Booking, Migrate:
		return te.Spec.Booking.Workload
	case Relay:
		return te.Spec.Relay
	default:
		return te.Spec.Tickets
	}
}

func scalable(te *ticketsv1alpha1.TicketEvent, c Component) ticketsv1alpha1.ScalableWorkload {
	if c == Queue {
		return te.Spec.Queue
	}
	return te.Spec.Booking
}

func image(te *ticketsv1alpha1.TicketEvent, opts Options, c Component) string {
	if img := workload(te, c).Image; img != "" {
		return img
	}
	return opts.Image
}

// MigrationJobTTL is how long a finished migration Job is kept.
const MigrationJobTTL = 24 * time.Hour

// MigrationJobName changes with the image, so a new release migrates again.
func MigrationJobName(te *ticketsv1alpha1.TicketEvent, opts Options) string {
	sum := sha256.Sum256([]byte(image(te, opts, Migrate) + "\n" + Seating(te.Spec.Seating.Sections)))
	return te.Name + "-migrate-" + hex.EncodeToString(sum[:])[:8]
}

// migrationJob runs `ticketfair migrate` (schema and seat seeding) with the
// booking configuration, which names the database and the seating.
func migrationJob(te *ticketsv1alpha1.TicketEvent, opts Options, env renderedEnv) *batchv1.Job {
	pod := podSpec(te, opts, Migrate, env, 0)
	pod.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(te, Migrate, MigrationJobName(te, opts)),
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(int32(6)),
			ActiveDeadlineSeconds: ptr.To(int64(900)),
			// Each image and seating has its own Job; finished ones go after a
			// day (time to read a failure's logs) instead of piling up. The
			// reconciler remembers a success in status.migration.
			TTLSecondsAfterFinished: ptr.To(int32(MigrationJobTTL / time.Second)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(te, Migrate)},
				Spec:       pod,
			},
		},
	}
}

// DefaultResources are a component's container resources when the
// TicketEvent sets none. They come from the pods' cgroups under the
// end-to-end sale on a real node (test/e2e): each memory request is about
// three times the peak RSS measured there, each memory limit about twice
// the peak RSS of the same service in the 2,000,000-person local sale, and
// each CPU request about the peak measured there (docs/operator.md,
// Resources). No CPU limit: throttling a sale's pods only adds latency.
func DefaultResources(c Component) corev1.ResourceRequirements {
	r := map[Component]struct{ cpu, memory, limit string }{
		Queue:   {"200m", "64Mi", "256Mi"},
		Booking: {"100m", "64Mi", "256Mi"},
		Relay:   {"50m", "32Mi", "128Mi"},
		Tickets: {"100m", "32Mi", "256Mi"},
		Migrate: {"100m", "64Mi", "256Mi"},
	}[c]
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(r.cpu), corev1.ResourceMemory: resource.MustParse(r.memory)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(r.limit)},
	}
}

// drainDelay is how long a serving pod keeps answering after SIGTERM,
// closing each connection after its response, while its endpoints leave
// kube-proxy and load balancers; then it shuts down with its shutdown grace
// (10s). Both fit in the pod's 30s termination grace period.
const drainDelay = 5 * time.Second

var defaultReplicas = map[Component]int32{Queue: 2, Booking: 2, Relay: 1, Tickets: 2}

func deployment(te *ticketsv1alpha1.TicketEvent, opts Options, c Component, env renderedEnv, port int32) *appsv1.Deployment {
	w := workload(te, c)
	var replicas *int32
	autoscaled := (c == Queue || c == Booking) && scalable(te, c).Autoscaling != nil
	if !autoscaled {
		// Left unset under an HPA, so server-side apply leaves the count to it.
		replicas = ptr.To(defaultReplicas[c])
		if w.Replicas != nil {
			replicas = ptr.To(*w.Replicas)
		}
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
					MaxSurge:       ptr.To(intstr.FromString("25%")),
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      Labels(te, c),
					Annotations: map[string]string{ConfigHashAnnotation: env.hash},
				},
				Spec: podSpec(te, opts, c, env, port),
			},
		},
	}
}

func podSpec(te *ticketsv1alpha1.TicketEvent, opts Options, c Component, env renderedEnv, port int32) corev1.PodSpec {
	w := workload(te, c)
	resources := DefaultResources(c)
	if w.Resources != nil {
		resources = *w.Resources.DeepCopy()
	}
	ctr := corev1.Container{
		Name:      string(c),
		Image:     image(te, opts, c),
		Command:   []string{Binary},
		Args:      []string{string(c)},
		Env:       env.env,
		Resources: resources,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	if c != Migrate {
		ctr.Ports = []corev1.ContainerPort{{Name: HTTPPortName, ContainerPort: port, Protocol: corev1.ProtocolTCP}}
		ctr.LivenessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(HTTPPortName)}},
			PeriodSeconds:    10,
			FailureThreshold: 3,
			TimeoutSeconds:   2,
		}
		ctr.ReadinessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString(HTTPPortName)}},
			PeriodSeconds:    5,
			FailureThreshold: 2,
			TimeoutSeconds:   2,
		}
	}
	spec := corev1.PodSpec{
		Containers:                    []corev1.Container{ctr},
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false), // keep the env exactly what the config renders
		TerminationGracePeriodSeconds: ptr.To(int64(30)),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(int64(nonRootUID)),
			RunAsGroup:     ptr.To(int64(nonRootUID)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		NodeSelector: w.NodeSelector,
		Tolerations:  w.Tolerations,
		Affinity:     w.Affinity,
	}
	if c == Queue {
		spec.ServiceAccountName = ServiceAccountName(te)
		spec.AutomountServiceAccountToken = ptr.To(true)
	}
	if c != Migrate {
		sel := &metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)}
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel, MatchLabelKeys: []string{"pod-template-hash"}},
			{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel, MatchLabelKeys: []string{"pod-template-hash"}},
		}
	}
	return spec
}

func service(te *ticketsv1alpha1.TicketEvent, c Component) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: SelectorLabels(te, c),
			Ports: []corev1.ServicePort{{
				Name: HTTPPortName, Port: 8080, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString(HTTPPortName),
			}},
		},
	}
}

func pdb(te *ticketsv1alpha1.TicketEvent, c Component) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			// A pod that is not ready serves nothing: evicting it must not
			// wait for the budget (a node drain would hang on a crashlooping pod).
			UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow),
			Selector:                   &metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)},
		},
	}
}

// The autoscaling defaults, for a TicketEvent that the API server did not
// default (a Go value rendered directly). They are the CRD's
// +kubebuilder:default markers of spec.<workload>.autoscaling, which
// TestCRDDefaultsMatchConfig keeps them equal to.
const (
	defaultMinReplicas                 int32 = 2
	defaultTargetCPUUtilizationPercent int32 = 70
)

func hpa(te *ticketsv1alpha1.TicketEvent, c Component, as *ticketsv1alpha1.Autoscaling) *autoscalingv2.HorizontalPodAutoscaler {
	minReplicas := as.MinReplicas
	if minReplicas == 0 {
		minReplicas = defaultMinReplicas
	}
	target := as.TargetCPUUtilizationPercentage
	if target == 0 {
		target = defaultTargetCPUUtilizationPercent
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: Name(te, c)},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    as.MaxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)},
				},
			}},
		},
	}
}

// networkPolicy isolates a workload's pods for ingress: only their HTTP port
// is open, to the given peers (to any source when there are none). Egress is
// left open: the operator cannot know where Redis, PostgreSQL, Kafka and the
// API server are.
func networkPolicy(te *ticketsv1alpha1.TicketEvent, c Component, from []networkingv1.NetworkPolicyPeer) *networkingv1.NetworkPolicy {
	var peers []networkingv1.NetworkPolicyPeer
	for _, p := range from {
		peers = append(peers, *p.DeepCopy())
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString(HTTPPortName))}},
				From:  peers,
			}},
		},
	}
}

// All returns the objects in the order they are applied; the migration Job
// and the Deployments that wait for it come last.
func (o *Objects) All() []client.Object {
	var out []client.Object
	for _, c := range Components {
		out = append(out, o.ConfigMaps[c])
	}
	out = append(out, o.ServiceAccount, o.Role, o.RoleBinding)
	for _, c := range sortedKeys(o.Services) {
		out = append(out, o.Services[c], o.PodDisruptionBudgets[c])
	}
	for _, c := range sortedKeys(o.HorizontalPodAutoscalers) {
		out = append(out, o.HorizontalPodAutoscalers[c])
	}
	for _, c := range sortedKeys(o.NetworkPolicies) {
		out = append(out, o.NetworkPolicies[c])
	}
	out = append(out, o.MigrationJob)
	for _, c := range Components {
		out = append(out, o.Deployments[c])
	}
	return out
}

func sortedKeys[V any](m map[Component]V) []Component {
	ks := make([]Component, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}
