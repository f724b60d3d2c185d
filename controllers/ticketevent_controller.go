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

// Package controllers holds the TicketEvent reconciler. The objects it
// writes are rendered by package controllers/render.
package controllers

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/workloads/keyspace"
)

// FieldOwner is the server-side apply field manager of the operator.
const FieldOwner = "ticketfair-operator"

// DefaultStatsInterval is how often the StatsPoller fetches sale figures
// while the queue runs.
const DefaultStatsInterval = 5 * time.Second

// TicketEventReconciler provisions and reports one sale per TicketEvent.
type TicketEventReconciler struct {
	client.Client
	Scheme *runtime.Scheme
	// Options are the operator-wide rendering inputs (the workload image).
	Options render.Options
	// Recorder records Events on the TicketEvent; nil records none.
	Recorder events.EventRecorder
	// Stats fetches the sale figures for the StatsPoller that
	// SetupWithManager adds; nil uses HTTPStats on the queue Service's ClusterIP.
	Stats StatsFetcher
	// StatsInterval is the StatsPoller's interval; defaults to DefaultStatsInterval.
	StatsInterval time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
	// RedisCleanup (--redis-cleanup) adds FinalizerRedisCleanup to every
	// TicketEvent; deleting one then stops its queue and booking pods and
	// deletes its Redis keys. PostgreSQL is never touched. A finalizer left
	// from an earlier run is removed without cleaning when it is false.
	RedisCleanup bool
	// APIReader reads, uncached, what the cache does not hold: the Secrets
	// the spec refers to and the sale's pods. nil uses Client.
	APIReader client.Reader
	// Namespaces are the watched namespaces (--watch-namespaces); empty
	// means all. The Secret watch is limited to them.
	Namespaces []string
	// PodMonitors applies a PodMonitor per TicketEvent (podmonitor.go).
	PodMonitors bool

	// applied skips applies that would change nothing (apply.go).
	applied appliedChildren
}

// +kubebuilder:rbac:groups=tickets.ticketfair.io,resources=ticketevents,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=tickets.ticketfair.io,resources=ticketevents/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=tickets.ticketfair.io,resources=ticketevents/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;serviceaccounts;services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete
// NetworkPolicies are only ever server-side applied (patch, plus create for a new one) and deleted.
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// The finalizer lists the sale's pods uncached (APIReader) to see that they stopped writing Redis.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list

// observed is what one reconcile learned; status is computed from it.
type observed struct {
	duplicateOf *ticketsv1alpha1.TicketEvent // holds the eventId; nothing is provisioned
	missing     []string
	invalid     error    // a workload would refuse its configuration; nothing is provisioned
	secrets     []string // referred to but missing
	migration   ticketsv1alpha1.MigrationStatus
	deployments map[render.Component]*appsv1.Deployment // nil entry: not created yet
}

// Reconcile runs the steps of a sale in order; each step is idempotent.
func (r *TicketEventReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var te ticketsv1alpha1.TicketEvent
	if err := r.Get(ctx, req.NamespacedName, &te); err != nil {
		if apierrors.IsNotFound(err) {
			ticketEvents.forget(req.NamespacedName)
			r.applied.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !te.DeletionTimestamp.IsZero() {
		// Owned objects are garbage-collected; orders and seats stay in
		// PostgreSQL; with --redis-cleanup the Redis keys are deleted first.
		return r.finalize(ctx, &te)
	}
	obs := observed{deployments: map[render.Component]*appsv1.Deployment{}}
	// Before anything, the finalizer included: a second sale with this
	// eventId would share the first one's Redis keys.
	first, err := r.duplicateOf(ctx, &te)
	if err != nil {
		return ctrl.Result{}, err
	}
	if first != nil {
		obs.duplicateOf = first
		if c := meta.FindStatusCondition(te.Status.Conditions, ticketsv1alpha1.ConditionDegraded); c == nil || c.Reason != reasonDuplicateEventID {
			r.event(&te, corev1.EventTypeWarning, reasonDuplicateEventID, "Provision",
				"eventId %d is already used by TicketEvent %s/%s: nothing is provisioned for this one", te.Spec.EventID, first.Namespace, first.Name)
		}
		return r.writeStatus(ctx, &te, obs)
	}
	ok, err := r.addFinalizer(ctx, &te)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ok {
		// A newer version is on its way through the watch.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if obs.missing = render.Missing(&te); len(obs.missing) > 0 {
		return r.writeStatus(ctx, &te, obs)
	}
	// Provisioning goes on without them (running pods keep running, new
	// ones start once the Secret exists), but Degraded names them.
	if obs.secrets, err = r.missingSecrets(ctx, &te); err != nil {
		return ctrl.Result{}, err
	}
	objs, err := render.Render(&te, r.Options)
	if err != nil {
		// The spec got past the CRD, but a workload would refuse what it
		// renders to: say so in status until the spec changes, rather
		// than retry what cannot work.
		obs.invalid = err
		return r.writeStatus(ctx, &te, obs)
	}
	steps := []struct {
		name string
		run  func(context.Context, *ticketsv1alpha1.TicketEvent, *render.Objects, *observed) error
	}{
		{"keys", r.stepKeys},
		{"configuration", r.stepConfiguration},
		{"queue-rbac", r.stepQueueRBAC},
		{"services", r.stepServices},
		{"autoscaling", r.stepAutoscaling},
		{"networkpolicies", r.stepNetworkPolicies},
		{"podmonitor", r.stepPodMonitor},
		{"queue", r.stepQueue},
		{"migration", r.stepMigration},
		{"workloads", r.stepWorkloads},
	}
	logger := log.FromContext(ctx)
	for _, s := range steps {
		err := s.run(log.IntoContext(ctx, logger.WithValues("step", s.name)), &te, objs, &obs)
		if err != nil {
			reconcileSteps.WithLabelValues(s.name, resultError).Inc()
			return ctrl.Result{}, fmt.Errorf("step %s: %w", s.name, err)
		}
		reconcileSteps.WithLabelValues(s.name, resultSuccess).Inc()
	}
	return r.writeStatus(ctx, &te, obs)
}

// stepKeys creates the Secret of generated keys once; it is never rewritten,
// because rotating it would invalidate issued access tokens and tickets.
func (r *TicketEventReconciler) stepKeys(ctx context.Context, te *ticketsv1alpha1.TicketEvent, _ *render.Objects, _ *observed) error {
	key := client.ObjectKey{Namespace: te.Namespace, Name: render.KeysSecretName(te)}
	var existing corev1.Secret
	err := r.Get(ctx, key, &existing)
	if err == nil {
		return r.addMissingKeys(ctx, te, &existing)
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get Secret %s: %w", key.Name, err)
	}
	data, err := render.GenerateKeys()
	if err != nil {
		return err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: render.Labels(te, "keys")},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	if err := controllerutil.SetControllerReference(te, s, r.Scheme); err != nil {
		return err
	}
	if err := r.Create(ctx, s); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // another reconcile won; keep its keys
		}
		return fmt.Errorf("create Secret %s: %w", key.Name, err)
	}
	log.FromContext(ctx).Info("created", "kind", "Secret", "name", key.Name)
	r.event(te, corev1.EventTypeNormal, "KeysGenerated", "Generate", "generated access-token, ticket and service keys in Secret %s", key.Name)
	return nil
}

func (r *TicketEventReconciler) stepConfiguration(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, _ *observed) error {
	for _, c := range render.Components {
		if err := r.apply(ctx, te, o.ConfigMaps[c]); err != nil {
			return err
		}
	}
	return nil
}

func (r *TicketEventReconciler) stepQueueRBAC(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, _ *observed) error {
	for _, obj := range []client.Object{o.ServiceAccount, o.Role, o.RoleBinding} {
		if err := r.apply(ctx, te, obj); err != nil {
			return err
		}
	}
	return nil
}

func (r *TicketEventReconciler) stepServices(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, _ *observed) error {
	for _, c := range render.Served {
		if err := r.apply(ctx, te, o.Services[c]); err != nil {
			return err
		}
		if err := r.apply(ctx, te, o.PodDisruptionBudgets[c]); err != nil {
			return err
		}
	}
	return nil
}

// stepAutoscaling applies the HPAs that are asked for and deletes those no
// longer asked for, which would otherwise keep scaling the Deployment.
func (r *TicketEventReconciler) stepAutoscaling(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, _ *observed) error {
	for _, c := range []render.Component{render.Queue, render.Booking} {
		if err := applyOrDelete(ctx, r, te, o.HorizontalPodAutoscalers, c); err != nil {
			return err
		}
	}
	return nil
}

// stepNetworkPolicies applies the NetworkPolicies when spec.networkPolicy is
// enabled and deletes those it created when it no longer is. It runs before
// the Deployments, so new pods start isolated.
func (r *TicketEventReconciler) stepNetworkPolicies(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, _ *observed) error {
	for _, c := range render.Components {
		if err := applyOrDelete(ctx, r, te, o.NetworkPolicies, c); err != nil {
			return err
		}
	}
	return nil
}

// applyOrDelete applies a component's optional object when the spec asks for
// it (it is in want) and otherwise deletes the object of that name, but only
// if this TicketEvent controls it: a same-named object someone else made is
// left alone.
func applyOrDelete[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, r *TicketEventReconciler, te *ticketsv1alpha1.TicketEvent, want map[render.Component]PT, c render.Component) error {
	if obj, ok := want[c]; ok {
		return r.apply(ctx, te, obj)
	}
	kind, name := reflect.TypeFor[T]().Name(), render.Name(te, c)
	have := PT(new(T))
	err := r.Get(ctx, client.ObjectKey{Namespace: te.Namespace, Name: name}, have)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", kind, name, err)
	}
	if !metav1.IsControlledBy(have, te) {
		return nil
	}
	if err := r.Delete(ctx, have); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s %s: %w", kind, name, err)
	}
	log.FromContext(ctx).Info("deleted", "kind", kind, "name", name)
	return nil
}

// stepQueue starts the waiting room first: it needs only Redis, and people
// may join the pre-queue while the database is still being migrated.
func (r *TicketEventReconciler) stepQueue(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, obs *observed) error {
	return r.applyDeployment(ctx, te, o.Deployments[render.Queue], render.Queue, obs)
}

// stepMigration runs the migration Job and reports its phase; the database
// users wait for it to succeed.
func (r *TicketEventReconciler) stepMigration(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, obs *observed) error {
	job := o.MigrationJob
	var existing batchv1.Job
	err := r.Get(ctx, client.ObjectKeyFromObject(job), &existing)
	if apierrors.IsNotFound(err) {
		done, lerr := r.migrated(ctx, te, job.Name)
		if lerr != nil {
			return lerr
		}
		if done {
			// The Job succeeded and was removed after ttlSecondsAfterFinished:
			// this image and seating are migrated, nothing to run again.
			obs.migration = ticketsv1alpha1.MigrationStatus{JobName: job.Name, Phase: ticketsv1alpha1.MigrationSucceeded}
			return nil
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		// A Job's pod template is immutable: apply only when creating it.
		if err := r.apply(ctx, te, job); err != nil {
			return err
		}
		r.event(te, corev1.EventTypeNormal, "MigrationStarted", "Migrate", "started Job %s (schema and %d seats)", job.Name, render.SeatsTotal(te))
		obs.migration = ticketsv1alpha1.MigrationStatus{JobName: job.Name, Phase: ticketsv1alpha1.MigrationPending}
		return nil
	case err != nil:
		return fmt.Errorf("get Job %s: %w", job.Name, err)
	}
	obs.migration = ticketsv1alpha1.MigrationStatus{JobName: job.Name, Phase: jobPhase(&existing)}
	if prev := te.Status.Migration; prev.JobName != job.Name || prev.Phase != obs.migration.Phase {
		switch obs.migration.Phase {
		case ticketsv1alpha1.MigrationSucceeded:
			r.event(te, corev1.EventTypeNormal, "MigrationSucceeded", "Migrate", "Job %s succeeded", job.Name)
		case ticketsv1alpha1.MigrationFailed:
			r.event(te, corev1.EventTypeWarning, "MigrationFailed", "Migrate", "Job %s failed; see its pod logs", job.Name)
		}
	}
	return nil
}

// migrated reports whether the status records Job name as succeeded. The
// Job's deletion can reach the reconciler before the cache holds the status
// write that recorded its success, so a cached "no" is read again, uncached,
// before the Job is run a second time.
func (r *TicketEventReconciler) migrated(ctx context.Context, te *ticketsv1alpha1.TicketEvent, name string) (bool, error) {
	succeeded := func(m ticketsv1alpha1.MigrationStatus) bool {
		return m.JobName == name && m.Phase == ticketsv1alpha1.MigrationSucceeded
	}
	if succeeded(te.Status.Migration) {
		return true, nil
	}
	var live ticketsv1alpha1.TicketEvent
	if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(te), &live); err != nil {
		return false, fmt.Errorf("read TicketEvent %s uncached: %w", te.Name, err)
	}
	return succeeded(live.Status.Migration), nil
}

func jobPhase(j *batchv1.Job) ticketsv1alpha1.MigrationPhase {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return ticketsv1alpha1.MigrationSucceeded
		case batchv1.JobFailed:
			return ticketsv1alpha1.MigrationFailed
		}
	}
	if j.Status.Active > 0 {
		return ticketsv1alpha1.MigrationRunning
	}
	return ticketsv1alpha1.MigrationPending
}

// stepWorkloads rolls out booking, relay and tickets once the schema and
// seats exist.
func (r *TicketEventReconciler) stepWorkloads(ctx context.Context, te *ticketsv1alpha1.TicketEvent, o *render.Objects, obs *observed) error {
	for _, c := range []render.Component{render.Booking, render.Relay, render.Tickets} {
		if obs.migration.Phase != ticketsv1alpha1.MigrationSucceeded {
			// Already running pods (an earlier release) keep running.
			if err := r.observeDeployment(ctx, te, c, obs); err != nil {
				return err
			}
			continue
		}
		if err := r.applyDeployment(ctx, te, o.Deployments[c], c, obs); err != nil {
			return err
		}
	}
	return nil
}

func (r *TicketEventReconciler) applyDeployment(ctx context.Context, te *ticketsv1alpha1.TicketEvent, d *appsv1.Deployment, c render.Component, obs *observed) error {
	if err := r.apply(ctx, te, d); err != nil {
		return err
	}
	return r.observeDeployment(ctx, te, c, obs)
}

func (r *TicketEventReconciler) observeDeployment(ctx context.Context, te *ticketsv1alpha1.TicketEvent, c render.Component, obs *observed) error {
	var d appsv1.Deployment
	err := r.Get(ctx, client.ObjectKey{Namespace: te.Namespace, Name: render.Name(te, c)}, &d)
	if apierrors.IsNotFound(err) {
		obs.deployments[c] = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("get Deployment %s: %w", render.Name(te, c), err)
	}
	obs.deployments[c] = &d
	return nil
}

func (r *TicketEventReconciler) event(te *ticketsv1alpha1.TicketEvent, typ, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(te, nil, typ, reason, action, note, args...)
	}
}

func (r *TicketEventReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Condition reasons.
const (
	reasonMissingConfiguration = "MissingConfiguration"
	reasonInvalidConfiguration = "InvalidConfiguration"
	reasonMigrationFailed      = "MigrationFailed"
	reasonMigrating            = "Migrating"
	reasonRollingOut           = "RollingOut"
	reasonAvailable            = "Available"
	reasonAsExpected           = "AsExpected"
	reasonStatsReported        = "StatsReported"
	reasonStatsUnavailable     = "StatsUnavailable"
	reasonBeforeSalesOpenAt    = "BeforeSalesOpenAt"
	reasonSalesOpenAtPassed    = "SalesOpenAtPassed"
	reasonDuplicateEventID     = "DuplicateEventID"
	reasonMissingSecret        = "MissingSecret"
	reasonSalesOpenAtInPast    = "SalesOpenAtInPast"
)

// writeStatus computes the status on a copy, writes it only when it changed,
// and says when to look again.
func (r *TicketEventReconciler) writeStatus(ctx context.Context, te *ticketsv1alpha1.TicketEvent, obs observed) (ctrl.Result, error) {
	next := te.DeepCopy()
	r.computeStatus(next, obs)
	ticketEvents.set(types.NamespacedName{Namespace: te.Namespace, Name: te.Name}, next.Status.Conditions)
	if te.Status.ObservedGeneration == 0 && salesOpenAtInPast(te) {
		// Once, on the first reconcile: later it is simply the past.
		r.event(te, corev1.EventTypeWarning, reasonSalesOpenAtInPast, "Provision", "%s", pastOpeningNote(te))
	}
	if !equality.Semantic.DeepEqual(te.Status, next.Status) {
		if err := r.Status().Update(ctx, next); err != nil {
			if apierrors.IsConflict(err) {
				// A newer version is on its way through the watch.
				return ctrl.Result{RequeueAfter: time.Second}, nil
			}
			return ctrl.Result{}, fmt.Errorf("update status: %w", err)
		}
		log.FromContext(ctx).V(1).Info("status updated", "generation", next.Generation)
	}
	return ctrl.Result{RequeueAfter: r.requeueAfter(next)}, nil
}

// requeueAfter is the one timer of a reconcile: at salesOpenAt, so that
// SalesOpen flips in time while no queue reports it. Everything else is
// driven by watches; the sale figures by the StatsPoller.
func (r *TicketEventReconciler) requeueAfter(te *ticketsv1alpha1.TicketEvent) time.Duration {
	if until := te.Spec.SalesOpenAt.Sub(r.now()); until > 0 {
		return until + time.Second
	}
	return 0
}

func (r *TicketEventReconciler) computeStatus(te *ticketsv1alpha1.TicketEvent, obs observed) {
	st := &te.Status
	gen := te.Generation
	st.ObservedGeneration = gen
	st.SeatsTotal = render.SeatsTotal(te)
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen})
	}

	if f := obs.duplicateOf; f != nil {
		msg := fmt.Sprintf("eventId %d is already used by TicketEvent %s/%s (created first); nothing is provisioned for this one, "+
			"which would share its Redis keys %s*: give it another eventId", te.Spec.EventID, f.Namespace, f.Name, keyspace.Prefix(te.Spec.EventID))
		set(ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonDuplicateEventID, msg)
		set(ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonDuplicateEventID, msg)
		set(ticketsv1alpha1.ConditionProgressing, metav1.ConditionFalse, reasonDuplicateEventID, msg)
		r.salesOpenCondition(te, obs, set)
		return
	}
	if len(obs.missing) > 0 {
		msg := "set " + strings.Join(obs.missing, ", ") + " to provision the sale"
		set(ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonMissingConfiguration, msg)
		set(ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonMissingConfiguration, msg)
		set(ticketsv1alpha1.ConditionProgressing, metav1.ConditionFalse, reasonMissingConfiguration, msg)
		r.salesOpenCondition(te, obs, set)
		return
	}
	if obs.invalid != nil {
		msg := "nothing is provisioned: " + obs.invalid.Error()
		set(ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonInvalidConfiguration, msg)
		set(ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonInvalidConfiguration, msg)
		set(ticketsv1alpha1.ConditionProgressing, metav1.ConditionFalse, reasonInvalidConfiguration, msg)
		r.salesOpenCondition(te, obs, set)
		return
	}

	st.Migration = obs.migration
	comp := func(c render.Component) ticketsv1alpha1.ComponentStatus {
		d := obs.deployments[c]
		if d == nil {
			return ticketsv1alpha1.ComponentStatus{}
		}
		return ticketsv1alpha1.ComponentStatus{Replicas: desired(d), ReadyReplicas: d.Status.ReadyReplicas}
	}
	st.Components = ticketsv1alpha1.ComponentsStatus{
		Queue: comp(render.Queue), Booking: comp(render.Booking), Relay: comp(render.Relay), Tickets: comp(render.Tickets),
	}

	switch {
	case len(obs.secrets) > 0:
		set(ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonMissingSecret,
			strings.Join(obs.secrets, "; ")+": pods that need it cannot start until it is created")
	case obs.migration.Phase == ticketsv1alpha1.MigrationFailed:
		set(ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonMigrationFailed,
			fmt.Sprintf("migration Job %s failed; booking, relay and tickets wait for it (delete the Job to retry)", obs.migration.JobName))
	default:
		set(ticketsv1alpha1.ConditionDegraded, metav1.ConditionFalse, reasonAsExpected, "no failures")
	}

	var notReady []string
	for _, c := range render.Components {
		if d := obs.deployments[c]; d == nil || !rolledOut(d) {
			notReady = append(notReady, string(c))
		}
	}
	switch {
	case obs.migration.Phase == ticketsv1alpha1.MigrationFailed:
		msg := fmt.Sprintf("migration Job %s failed", obs.migration.JobName)
		set(ticketsv1alpha1.ConditionProgressing, metav1.ConditionFalse, reasonMigrationFailed, msg)
		set(ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonMigrationFailed, msg)
	case obs.migration.Phase != ticketsv1alpha1.MigrationSucceeded:
		msg := fmt.Sprintf("migration Job %s is %s; booking, relay and tickets start after it", obs.migration.JobName, obs.migration.Phase)
		set(ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating, msg)
		set(ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonMigrating, msg)
	case len(notReady) > 0:
		msg := "waiting for " + strings.Join(notReady, ", ") + " to be available"
		set(ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonRollingOut, msg)
		set(ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonRollingOut, msg)
	default:
		set(ticketsv1alpha1.ConditionProgressing, metav1.ConditionFalse, reasonAvailable, "every service is rolled out")
		set(ticketsv1alpha1.ConditionReady, metav1.ConditionTrue, reasonAvailable, "migration succeeded and every service is available")
	}
	r.salesOpenCondition(te, obs, set)
}

// salesOpenCondition sets SalesOpen from the clock, unless a ready queue
// reports it: then it is the StatsPoller's, and only re-stamped with the
// generation.
func (r *TicketEventReconciler) salesOpenCondition(te *ticketsv1alpha1.TicketEvent, obs observed, set func(string, metav1.ConditionStatus, string, string)) {
	if d := obs.deployments[render.Queue]; d != nil && d.Status.ReadyReplicas > 0 {
		if c := meta.FindStatusCondition(te.Status.Conditions, ticketsv1alpha1.ConditionSalesOpen); c != nil && fromQueue(c) {
			set(c.Type, c.Status, c.Reason, c.Message)
			return
		}
	}
	status, reason, msg := timedSalesOpen(te, r.now())
	set(ticketsv1alpha1.ConditionSalesOpen, status, reason, msg)
}

// fromQueue tells a SalesOpen condition the StatsPoller wrote.
func fromQueue(c *metav1.Condition) bool {
	return c.Reason == reasonStatsReported || c.Reason == reasonStatsUnavailable
}

// timedSalesOpen is SalesOpen as the clock and salesOpenAt say.
func timedSalesOpen(te *ticketsv1alpha1.TicketEvent, now time.Time) (metav1.ConditionStatus, string, string) {
	status, reason, msg := metav1.ConditionFalse, reasonBeforeSalesOpenAt, "sales open at "+te.Spec.SalesOpenAt.UTC().Format(time.RFC3339)
	if !now.Before(te.Spec.SalesOpenAt.Time) {
		status, reason, msg = metav1.ConditionTrue, reasonSalesOpenAtPassed, "salesOpenAt has passed"
	}
	if salesOpenAtInPast(te) {
		reason, msg = reasonSalesOpenAtInPast, pastOpeningNote(te)
	}
	return status, reason, msg
}

// salesOpenAtInPast reports a salesOpenAt that had already passed when the
// TicketEvent was created: most likely a mistake (a copied sample, a wrong
// year), and the sale opened at once, without a pre-queue.
func salesOpenAtInPast(te *ticketsv1alpha1.TicketEvent) bool {
	return te.Spec.SalesOpenAt.Before(&te.CreationTimestamp)
}

func pastOpeningNote(te *ticketsv1alpha1.TicketEvent) string {
	return fmt.Sprintf("salesOpenAt %s was already in the past when the TicketEvent was created (%s): sales opened at once, "+
		"without a pre-queue, so the first to join are admitted first", te.Spec.SalesOpenAt.UTC().Format(time.RFC3339),
		te.CreationTimestamp.UTC().Format(time.RFC3339))
}

func desired(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// rolledOut is kubectl rollout status's test: the controller saw the latest
// spec and every desired replica is updated and available.
func rolledOut(d *appsv1.Deployment) bool {
	want := desired(d)
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas >= want &&
		d.Status.AvailableReplicas >= want
}

// SetupWithManager registers the reconciler and watches what it owns, the
// other TicketEvents of an eventId, and the Secrets the spec refers to.
func (r *TicketEventReconciler) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &ticketsv1alpha1.TicketEvent{}, indexEventID, indexByEventID); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &ticketsv1alpha1.TicketEvent{}, indexSecretNames, indexBySecretNames); err != nil {
		return err
	}
	// The manager's cache holds only the operator's own Secrets. A second
	// cache watches the metadata of every Secret of the watched namespaces
	// (never their data), to look again when a referred Secret appears.
	secretOpts := cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()}
	if len(r.Namespaces) > 0 {
		secretOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range r.Namespaces {
			secretOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	secretCache, err := cache.New(mgr.GetConfig(), secretOpts)
	if err != nil {
		return fmt.Errorf("cache of Secret metadata: %w", err)
	}
	if err := mgr.Add(secretCache); err != nil {
		return err
	}
	// The sale figures are the StatsPoller's, apart from provisioning.
	stats := r.Stats
	if stats == nil {
		stats = &HTTPStats{Services: mgr.GetClient()}
	}
	if err := mgr.Add(&StatsPoller{
		Client: mgr.GetClient(), Stats: stats, Interval: r.StatsInterval, Recorder: r.Recorder, Now: r.Now,
		Log: mgr.GetLogger().WithName("stats"),
	}); err != nil {
		return fmt.Errorf("stats poller: %w", err)
	}
	secretMeta := &metav1.PartialObjectMetadata{}
	secretMeta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	// A write to status alone (the reconciler's own, the StatsPoller's)
	// changes nothing to provision.
	notStatusOnly := builder.WithPredicates(predicate.Or[client.Object](
		predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return !equality.Semantic.DeepEqual(e.ObjectOld.GetFinalizers(), e.ObjectNew.GetFinalizers()) ||
				!e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
		}}))
	return ctrl.NewControllerManagedBy(mgr).
		For(&ticketsv1alpha1.TicketEvent{}, notStatusOnly).
		Watches(&ticketsv1alpha1.TicketEvent{}, handler.EnqueueRequestsFromMapFunc(r.sameEventID), notStatusOnly).
		WatchesRawSource(source.Kind(secretCache, secretMeta, handler.TypedEnqueueRequestsFromMapFunc(r.referencingSecret))).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&corev1.Service{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Owns(&batchv1.Job{}).
		Owns(&appsv1.Deployment{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Named("ticketevent").
		Complete(r)
}
