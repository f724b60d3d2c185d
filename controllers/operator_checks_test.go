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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
)

// provisionedObjects counts the objects the operator made for a TicketEvent.
func provisionedObjects(t *testing.T, c client.Client, te *ticketsv1alpha1.TicketEvent) int {
	t.Helper()
	n := 0
	for _, l := range []client.ObjectList{&corev1.ConfigMapList{}, &corev1.SecretList{}, &appsv1.DeploymentList{}, &batchv1.JobList{}} {
		if err := c.List(context.Background(), l, client.InNamespace(te.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": te.Name}); err != nil {
			t.Fatal(err)
		}
		switch l := l.(type) {
		case *corev1.ConfigMapList:
			n += len(l.Items)
		case *corev1.SecretList:
			n += len(l.Items)
		case *appsv1.DeploymentList:
			n += len(l.Items)
		case *batchv1.JobList:
			n += len(l.Items)
		}
	}
	return n
}

func createSecrets(t *testing.T, c client.Client, ns string, secrets map[string]map[string]string) {
	t.Helper()
	for name, data := range secrets {
		if err := c.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}); err != nil {
			t.Fatal(err)
		}
	}
}

// provisionableSecrets are the Secrets provisionable() refers to.
var provisionableSecrets = map[string]map[string]string{
	"identity": {"hmac-secret": "s"}, "redis": {"url": "redis://r:6379/0"}, "postgres": {"url": "postgres://p/db"},
}

func gather(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				if m.Counter != nil {
					return m.Counter.GetValue()
				}
				return m.Gauge.GetValue()
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestOperatorChecks covers what the operator refuses or reports instead of
// provisioning blindly, and what it tells about its own work.
func TestOperatorChecks(t *testing.T) {
	op := startOperator(t)
	ctx := context.Background()
	c := op.c

	t.Run("a second TicketEvent with the same eventId is refused", func(t *testing.T) {
		cases := []struct {
			name                  string
			firstNS, secondNS     string
			firstName, secondName string
			eventID               int64
		}{
			// Both orders of creation: the one created first keeps the eventId,
			// whatever the names.
			{"same namespace, a then b", "dup1", "dup1", "a", "b", 501},
			{"same namespace, b then a", "dup2", "dup2", "b", "a", 502},
			{"other namespace, a then b", "dup3a", "dup3b", "a", "b", 503},
			{"other namespace, b then a", "dup4b", "dup4a", "b", "a", 504},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				for _, ns := range []string{tc.firstNS, tc.secondNS} {
					if err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
						op.namespace(t, ns)
						createSecrets(t, c, ns, provisionableSecrets)
					}
				}
				first := provisionable(tc.firstNS, tc.firstName)
				first.Spec.EventID = tc.eventID
				if err := c.Create(ctx, first); err != nil {
					t.Fatal(err)
				}
				waitCondition(t, c, client.ObjectKeyFromObject(first), ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
				time.Sleep(1100 * time.Millisecond) // creationTimestamp has a resolution of a second
				second := provisionable(tc.secondNS, tc.secondName)
				second.Spec.EventID = tc.eventID
				if err := c.Create(ctx, second); err != nil {
					t.Fatal(err)
				}
				got := waitCondition(t, c, client.ObjectKeyFromObject(second), ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonDuplicateEventID)
				msg := condition(got, ticketsv1alpha1.ConditionDegraded).Message
				if !strings.Contains(msg, tc.firstNS+"/"+tc.firstName) || !strings.Contains(msg, fmt.Sprint(tc.eventID)) {
					t.Fatalf("Degraded message %q does not name the TicketEvent holding the eventId", msg)
				}
				if r := condition(got, ticketsv1alpha1.ConditionReady); r.Status != metav1.ConditionFalse || r.Reason != reasonDuplicateEventID {
					t.Fatalf("Ready %+v", r)
				}
				eventWith(t, c, second, corev1.EventTypeWarning, reasonDuplicateEventID)
				consistently(t, time.Second, "nothing provisioned for the duplicate", func() error {
					if n := provisionedObjects(t, c, second); n != 0 {
						return fmt.Errorf("%d objects provisioned", n)
					}
					return nil
				})
				// The first one is untouched.
				if d := condition(getTE(t, c, client.ObjectKeyFromObject(first)), ticketsv1alpha1.ConditionDegraded); d.Reason == reasonDuplicateEventID {
					t.Fatalf("the first TicketEvent was refused: %+v", d)
				}
			})
		}

		// Once the first is gone, the second is provisioned.
		first := getTE(t, c, client.ObjectKey{Namespace: "dup1", Name: "a"})
		if err := c.Delete(ctx, first); err != nil {
			t.Fatal(err)
		}
		waitCondition(t, c, client.ObjectKey{Namespace: "dup1", Name: "b"}, ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
	})

	t.Run("missing Secrets are Degraded until they appear", func(t *testing.T) {
		op.namespace(t, "nosecrets")
		te := provisionable("nosecrets", "sale")
		te.Spec.EventID = 601
		te.Spec.SalesOpenAt = metav1.NewTime(time.Now().Add(240 * time.Hour)) // no timed requeue before opening
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		key := client.ObjectKeyFromObject(te)
		got := waitCondition(t, c, key, ticketsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonMissingSecret)
		msg := condition(got, ticketsv1alpha1.ConditionDegraded).Message
		for _, want := range []string{`Secret "redis" (key "url") does not exist`, `Secret "postgres" (key "url")`, `Secret "identity" (key "hmac-secret")`} {
			if !strings.Contains(msg, want) {
				t.Fatalf("Degraded message %q lacks %s", msg, want)
			}
		}
		// Wrong key: named as such. The Secret watch brings the reconcile.
		createSecrets(t, c, "nosecrets", map[string]map[string]string{"redis": {"uri": "x"}, "postgres": {"url": "x"}, "identity": {"hmac-secret": "x"}})
		eventually(t, "Degraded names the missing key", func() error {
			d := condition(getTE(t, c, key), ticketsv1alpha1.ConditionDegraded)
			if d.Reason != reasonMissingSecret || d.Message != `Secret "redis" has no key "url": pods that need it cannot start until it is created` {
				return fmt.Errorf("Degraded %s: %s", d.Reason, d.Message)
			}
			return nil
		})
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "nosecrets", Name: "redis"}, &s); err != nil {
			t.Fatal(err)
		}
		s.Data["url"] = []byte("redis://r:6379/0")
		if err := c.Update(ctx, &s); err != nil {
			t.Fatal(err)
		}
		got = waitCondition(t, c, key, ticketsv1alpha1.ConditionDegraded, metav1.ConditionFalse, reasonAsExpected)
		if p := condition(got, ticketsv1alpha1.ConditionProgressing); p.Reason != reasonMigrating {
			t.Fatalf("not provisioning: %+v", p)
		}
	})

	t.Run("salesOpenAt already past is warned about", func(t *testing.T) {
		op.namespace(t, "late")
		createSecrets(t, c, "late", provisionableSecrets)
		te := provisionable("late", "late")
		te.Spec.EventID = 701
		te.Spec.SalesOpenAt = metav1.NewTime(time.Now().Add(-48 * time.Hour).Truncate(time.Second))
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		got := waitCondition(t, c, client.ObjectKeyFromObject(te), ticketsv1alpha1.ConditionSalesOpen, metav1.ConditionTrue, reasonSalesOpenAtInPast)
		if msg := condition(got, ticketsv1alpha1.ConditionSalesOpen).Message; !strings.Contains(msg, "already in the past") ||
			!strings.Contains(msg, te.Spec.SalesOpenAt.UTC().Format(time.RFC3339)) {
			t.Fatalf("SalesOpen message %q", msg)
		}
		e := eventWith(t, c, te, corev1.EventTypeWarning, reasonSalesOpenAtInPast)
		if !strings.Contains(e.Note, "already in the past") {
			t.Fatalf("event note %q", e.Note)
		}

		future := provisionable("late", "future")
		future.Spec.EventID = 702
		future.Spec.SalesOpenAt = metav1.NewTime(time.Now().Add(48 * time.Hour))
		if err := c.Create(ctx, future); err != nil {
			t.Fatal(err)
		}
		waitCondition(t, c, client.ObjectKeyFromObject(future), ticketsv1alpha1.ConditionSalesOpen, metav1.ConditionFalse, reasonBeforeSalesOpenAt)
	})

	t.Run("queue Role reads only its own TicketEvent", func(t *testing.T) {
		te := getTE(t, c, client.ObjectKey{Namespace: "late", Name: "late"})
		eventually(t, "queue Role", func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: "late", Name: render.ServiceAccountName(te)}, &rbacv1.Role{})
		})
		cfg := rest.CopyConfig(op.cfg)
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:late:" + render.ServiceAccountName(te),
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:late", "system:authenticated"},
		}
		qc, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "own TicketEvent readable", func() error {
			return qc.Get(ctx, client.ObjectKey{Namespace: "late", Name: "late"}, &ticketsv1alpha1.TicketEvent{})
		})
		var own ticketsv1alpha1.TicketEventList
		if err := qc.List(ctx, &own, client.InNamespace("late"), client.MatchingFields{"metadata.name": "late"}); err != nil || len(own.Items) != 1 {
			t.Fatalf("list own TicketEvent by name: %d, %v", len(own.Items), err)
		}
		if err := qc.Get(ctx, client.ObjectKey{Namespace: "late", Name: "future"}, &ticketsv1alpha1.TicketEvent{}); !apierrors.IsForbidden(err) {
			t.Fatalf("another TicketEvent of the namespace: %v, want forbidden", err)
		}
		if err := qc.List(ctx, &ticketsv1alpha1.TicketEventList{}, client.InNamespace("late")); !apierrors.IsForbidden(err) {
			t.Fatalf("list every TicketEvent: %v, want forbidden", err)
		}
	})

	t.Run("a finished migration Job that was cleaned up is not run again", func(t *testing.T) {
		key := client.ObjectKey{Namespace: "late", Name: "future"}
		te := waitCondition(t, c, key, ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
		jobKey := client.ObjectKey{Namespace: "late", Name: te.Status.Migration.JobName}
		var job batchv1.Job
		if err := c.Get(ctx, jobKey, &job); err != nil {
			t.Fatal(err)
		}
		if job.Spec.TTLSecondsAfterFinished == nil || *job.Spec.TTLSecondsAfterFinished != 86400 {
			t.Fatalf("ttlSecondsAfterFinished %v", job.Spec.TTLSecondsAfterFinished)
		}
		completeJob(t, c, jobKey)
		waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonRollingOut)
		// What the TTL controller does a day later.
		if err := c.Delete(ctx, &job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		// A spec change makes the operator reconcile with the Job gone.
		updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Admission.MaxActive = 77 })
		te = waitCondition(t, c, key, ticketsv1alpha1.ConditionReady, metav1.ConditionFalse, reasonRollingOut)
		if te.Status.Migration.Phase != ticketsv1alpha1.MigrationSucceeded {
			t.Fatalf("migration %+v", te.Status.Migration)
		}
		consistently(t, time.Second, "the Job is not created again", func() error {
			if err := c.Get(ctx, jobKey, &batchv1.Job{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Job %s: %v", jobKey.Name, err)
			}
			return nil
		})
	})

	t.Run("each step logs what it changed", func(t *testing.T) {
		op.namespace(t, "logs")
		createSecrets(t, c, "logs", provisionableSecrets)
		te := provisionable("logs", "logged")
		te.Spec.EventID = 801
		te.Spec.SalesOpenAt = metav1.NewTime(time.Now().Add(48 * time.Hour))
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		key := client.ObjectKeyFromObject(te)
		waitCondition(t, c, key, ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
		for _, want := range [][]string{
			{`"step"="keys"`, `"msg"="created"`, `"kind"="Secret"`, `"name"="logged-keys"`},
			{`"step"="configuration"`, `"msg"="created"`, `"kind"="ConfigMap"`, `"name"="logged-queue"`},
			{`"step"="queue"`, `"msg"="created"`, `"kind"="Deployment"`, `"name"="logged-queue"`},
			{`"step"="migration"`, `"msg"="created"`, `"kind"="Job"`},
		} {
			if len(op.logs.since(0, append(want, `"TicketEvent"={"name"="logged" "namespace"="logs"}`)...)) == 0 {
				t.Fatalf("no log line with %v in:\n%s", want, strings.Join(op.logs.since(0, "logged"), "\n"))
			}
		}
		// Reconciles that change nothing log nothing at info.
		n := op.logs.len()
		markAvailable(t, c, client.ObjectKey{Namespace: "logs", Name: "logged-queue"}) // status only: reconciles, changes nothing
		time.Sleep(time.Second)
		if lines := op.logs.since(n, `"namespace"="logs"`); len(lines) != 0 {
			t.Fatalf("no-op reconciles logged:\n%s", strings.Join(lines, "\n"))
		}
		updateSpec(t, c, key, func(te *ticketsv1alpha1.TicketEvent) { te.Spec.Admission.MaxActive = 1234 })
		eventually(t, "the change is logged", func() error {
			if len(op.logs.since(n, `"msg"="changed"`, `"kind"="ConfigMap"`, `"name"="logged-queue"`, `"step"="configuration"`)) == 0 {
				return fmt.Errorf("no changed line:\n%s", strings.Join(op.logs.since(n, "logged"), "\n"))
			}
			return nil
		})
		if lines := op.logs.since(n, `"msg"="changed"`, `"kind"="Deployment"`, `"name"="logged-queue"`); len(lines) != 0 {
			t.Fatalf("the queue Deployment was not changed by a live setting, yet logged: %v", lines)
		}
	})

	t.Run("the operator's own metrics", func(t *testing.T) {
		if v := gather(t, "ticketfair_operator_reconcile_steps_total", map[string]string{"step": "queue", "result": resultSuccess}); v < 1 {
			t.Fatalf("queue steps counted %v", v)
		}
		if v := gather(t, "ticketfair_operator_ticketevents", map[string]string{"condition": "Degraded", "status": "True"}); v < 1 {
			t.Fatalf("Degraded TicketEvents %v; the duplicates are", v)
		}
		if v := gather(t, "ticketfair_operator_ticketevents", map[string]string{"condition": "Progressing", "status": "True"}); v < 1 {
			t.Fatalf("Progressing TicketEvents %v", v)
		}
		// Stats fetched from the (fake) queue of a sale whose queue is ready.
		before := gather(t, "ticketfair_operator_stats_fetch_errors_total", nil)
		op.queue.set(Stats{}, true)
		eventually(t, "stats fetch errors counted", func() error {
			if v := gather(t, "ticketfair_operator_stats_fetch_errors_total", nil); v <= before {
				return fmt.Errorf("stats fetch errors %v, before %v", v, before)
			}
			return nil
		})
		problems, err := testutil.GatherAndLint(ctrlmetrics.Registry, "ticketfair_operator_reconcile_steps_total",
			"ticketfair_operator_stats_fetch_errors_total", "ticketfair_operator_ticketevents")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("promlint %s: %s", p.Metric, p.Text)
		}
	})
}

// The sample opens far in the future: applied as it is, it must not open at
// once (a salesOpenAt already past is warned about, see TestOperatorChecks).
func TestSampleOpensInTheFuture(t *testing.T) {
	if at := loadSample(t).Spec.SalesOpenAt.Time; at.Before(time.Now().AddDate(1, 0, 0)) {
		t.Fatalf("the sample's salesOpenAt %s is less than a year ahead", at)
	}
}
