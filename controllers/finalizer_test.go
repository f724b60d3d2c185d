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
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/keyspace"
)

// withRedisCleanup sets --redis-cleanup and the uncached reader, as main does.
func withRedisCleanup(on bool) func(*TicketEventReconciler, ctrl.Manager) {
	return func(r *TicketEventReconciler, mgr ctrl.Manager) {
		r.RedisCleanup = on
		r.APIReader = mgr.GetAPIReader()
	}
}

// noQueue is a queue address nothing listens on; these tests never mark a
// queue ready, so the stats are never fetched.
func noQueue(*ticketsv1alpha1.TicketEvent) string { return "http://127.0.0.1:1" }

const seededKeysPerEvent = 12

// seedEvent writes the keys a running sale of eventID has in Redis (see
// workloads/internal/queue/keys.go and zone.go), with `waiting` customers in
// the queue, and returns their names.
func seedEvent(t *testing.T, rdb *redis.Client, eventID int64, waiting int) []string {
	t.Helper()
	ctx := context.Background()
	p := keyspace.Prefix(eventID)
	pipe := rdb.Pipeline()
	for i := 0; i < waiting; i += 1000 {
		var zs []redis.Z
		var hs []any
		for j := i; j < min(i+1000, waiting); j++ {
			cust := "c" + strconv.Itoa(j)
			zs = append(zs, redis.Z{Score: float64(j), Member: cust})
			hs = append(hs, cust, fmt.Sprintf("waiting|%d|%d|", j, j))
		}
		pipe.ZAdd(ctx, p+"queue", zs...)
		pipe.HSet(ctx, p+"customers", hs...)
	}
	pipe.ZAdd(ctx, p+"active", redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "sid-1"})
	pipe.Set(ctx, p+"remaining", 180, 0)
	pipe.HSet(ctx, p+"inventory", "held", 12, "sold", 8)
	for _, k := range []string{"arrival", "fifo", "prerank", "epoch", "watermark", "admitted"} {
		pipe.Set(ctx, p+k, 7, 0)
	}
	pipe.RPush(ctx, p+"admitlog", "c1|1|1", "c2|2|2")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	keys := eventKeys(t, rdb, eventID)
	if len(keys) != seededKeysPerEvent {
		t.Fatalf("seeded %d keys of event %d: %v", len(keys), eventID, keys)
	}
	return keys
}

// eventKeys returns the keys of one event (KEYS: fine in a test database).
func eventKeys(t *testing.T, rdb *redis.Client, eventID int64) []string {
	t.Helper()
	return allKeys(t, rdb, keyspace.Pattern(eventID))
}

func allKeys(t *testing.T, rdb *redis.Client, pattern string) []string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

// seedUnrelated writes n keys of another application, so the SCAN of a
// cleanup needs several pages.
func seedUnrelated(t *testing.T, rdb *redis.Client, n int) {
	t.Helper()
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for i := range n {
		pipe.Set(ctx, "other-app:session:"+strconv.Itoa(i), i, 0)
	}
	// Look-alikes of event 42's prefix that are not its keys.
	pipe.Set(ctx, "tf:42:queue", "x", 0)
	pipe.Set(ctx, "tf:{42}", "x", 0)
	pipe.Set(ctx, "x:tf:{42}:queue", "x", 0)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// scanCalls reads how many SCAN commands the server ran (INFO commandstats).
func scanCalls(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_scan:calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

func redisSecret(ns, url string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "redis", Namespace: ns}, StringData: map[string]string{"url": url}}
}

// eventWith waits for an Event about the TicketEvent with this type and reason.
func eventWith(t *testing.T, c client.Client, te *ticketsv1alpha1.TicketEvent, typ, reason string) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	eventually(t, fmt.Sprintf("%s Event %s on %s", typ, reason, te.Name), func() error {
		var l eventsv1.EventList
		if err := c.List(context.Background(), &l, client.InNamespace(te.Namespace)); err != nil {
			return err
		}
		var seen []string
		for _, e := range l.Items {
			if e.Regarding.Name == te.Name && e.Regarding.Kind == "TicketEvent" && e.Type == typ && e.Reason == reason {
				found = e
				return nil
			}
			seen = append(seen, e.Type+"/"+e.Reason)
		}
		return fmt.Errorf("events seen: %v", seen)
	})
	return found
}

// consistently fails if fn returns an error at any time during d.
func consistently(t *testing.T, d time.Duration, what string, fn func() error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// waitFinalized waits until the operator added the finalizer and went on to
// provision (or to report missing configuration).
func waitFinalized(t *testing.T, c client.Client, te *ticketsv1alpha1.TicketEvent, reason string) *ticketsv1alpha1.TicketEvent {
	t.Helper()
	typ := ticketsv1alpha1.ConditionProgressing
	if reason == reasonMissingConfiguration {
		typ = ticketsv1alpha1.ConditionDegraded
	}
	got := waitCondition(t, c, client.ObjectKeyFromObject(te), typ, metav1.ConditionTrue, reason)
	if !reflect.DeepEqual(got.Finalizers, []string{FinalizerRedisCleanup}) {
		t.Fatalf("%s finalizers %v, want [%s]", te.Name, got.Finalizers, FinalizerRedisCleanup)
	}
	// Only metadata.finalizers was written: the spec, and so the generation, are untouched.
	if got.Generation != 1 {
		t.Fatalf("%s generation %d after adding the finalizer, want 1", te.Name, got.Generation)
	}
	return got
}

func waitGone(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s deleted", obj, obj.GetName()), func() error {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: deletionTimestamp %v, finalizers %v", obj.GetDeletionTimestamp(), obj.GetFinalizers())
	})
}

func writerPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		// Bound to a node, so deleting it is graceful: it stays Terminating
		// until the (absent) kubelet confirms, as a stopping pod does.
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: testImage}}},
	}
}

func TestRedisCleanupFinalizer(t *testing.T) {
	redisURL, rdb := testenv.RedisDB(t)
	op := startOperatorWith(t, noQueue, withRedisCleanup(true))
	ctx := context.Background()
	c := op.c

	t.Run("keys deleted only after the writers stopped, and only this event's", func(t *testing.T) {
		const ns = "sale-over"
		op.namespace(t, ns)
		if err := c.Create(ctx, redisSecret(ns, redisURL)); err != nil {
			t.Fatal(err)
		}
		te := provisionable(ns, "fest") // event 42
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		// The finalizer is added and provisioning goes on.
		te = waitFinalized(t, c, te, reasonMigrating)
		queue := deploymentOf(t, c, te, render.Queue)

		// Keep the queue Deployment Terminating once deleted, and run a
		// queue pod, a finished booking pod and another sale's queue pod.
		const hold = "test.ticketfair.io/hold"
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(queue), queue); err != nil {
				return err
			}
			controllerutil.AddFinalizer(queue, hold)
			return c.Update(ctx, queue)
		}); err != nil {
			t.Fatal(err)
		}
		queuePod := writerPod(ns, "fest-queue-7d9f-abcde", render.SelectorLabels(te, render.Queue))
		bookingPod := writerPod(ns, "fest-booking-5c8b-fghij", render.SelectorLabels(te, render.Booking))
		otherSale := writerPod(ns, "other-queue-1a2b-klmno", map[string]string{"app.kubernetes.io/name": "ticketfair", "app.kubernetes.io/instance": "other", "app.kubernetes.io/component": "queue"})
		for _, p := range []*corev1.Pod{queuePod, bookingPod, otherSale} {
			if err := c.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		bookingPod.Status.Phase = corev1.PodSucceeded
		if err := c.Status().Update(ctx, bookingPod); err != nil {
			t.Fatal(err)
		}

		// Event 42's sale in Redis, event 421's (same leading digits) and
		// 3,000 keys of another application: SCAN needs several pages.
		mine := seedEvent(t, rdb, 42, 5000)
		theirs := seedEvent(t, rdb, 421, 300)
		seedUnrelated(t, rdb, 3000)
		before := allKeys(t, rdb, "*")
		if len(before) != 2*seededKeysPerEvent+3003 {
			t.Fatalf("%d keys seeded", len(before))
		}
		scansBefore := scanCalls(t, rdb)

		if err := c.Delete(ctx, te); err != nil {
			t.Fatal(err)
		}
		// The writers are stopped first: the queue Deployment is deleted,
		// with background propagation (no foregroundDeletion finalizer).
		eventually(t, "queue Deployment deleted by the operator", func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(queue), queue); err != nil {
				return err
			}
			if queue.DeletionTimestamp.IsZero() {
				return fmt.Errorf("not deleted yet")
			}
			return nil
		})
		if !reflect.DeepEqual(queue.Finalizers, []string{hold}) {
			t.Fatalf("queue Deployment finalizers %v: not deleted with background propagation", queue.Finalizers)
		}
		if ev := eventWith(t, c, te, corev1.EventTypeNormal, reasonStoppingWriters); ev.Note != "deleted Deployments fest-queue; the Redis keys are deleted once their pods are gone" {
			t.Fatalf("StoppingWriters note %q", ev.Note)
		}
		keysStay := func(what string) {
			t.Helper()
			consistently(t, 2*time.Second, what, func() error {
				if got := allKeys(t, rdb, "*"); !slices.Equal(got, before) {
					return fmt.Errorf("%d keys left of %d", len(got), len(before))
				}
				got := getTE(t, c, client.ObjectKeyFromObject(te))
				if !controllerutil.ContainsFinalizer(got, FinalizerRedisCleanup) {
					return fmt.Errorf("finalizer removed")
				}
				return nil
			})
		}
		keysStay("keys kept while the queue Deployment exists")

		// The Deployment goes; its pod is still running.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(queue), queue); err != nil {
				return err
			}
			controllerutil.RemoveFinalizer(queue, hold)
			return c.Update(ctx, queue)
		}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: queue.Name}})
		keysStay("keys kept while a queue pod runs")

		// The pod is terminating (graceful deletion): still writing.
		if err := c.Delete(ctx, queuePod); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(queuePod), queuePod); err != nil || queuePod.DeletionTimestamp.IsZero() {
			t.Fatalf("queue pod not terminating: %v", err)
		}
		keysStay("keys kept while a queue pod terminates")

		// The pod is gone: the keys are deleted and the TicketEvent with them.
		if err := c.Delete(ctx, queuePod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		waitGone(t, c, &ticketsv1alpha1.TicketEvent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: te.Name}})

		if got := eventKeys(t, rdb, 42); len(got) != 0 {
			t.Fatalf("event 42 keys left: %v", got)
		}
		var want []string
		for _, k := range before {
			if !slices.Contains(mine, k) {
				want = append(want, k)
			}
		}
		if got := allKeys(t, rdb, "*"); !slices.Equal(got, want) || len(got) != seededKeysPerEvent+3003 {
			t.Fatalf("keys after cleanup: %d, want the %d that are not event 42's", len(got), len(want))
		}
		if got := eventKeys(t, rdb, 421); !slices.Equal(got, theirs) {
			t.Fatalf("event 421 keys %v, want %v", got, theirs)
		}
		if n, err := rdb.ZCard(ctx, keyspace.Prefix(421)+"queue").Result(); err != nil || n != 300 {
			t.Fatalf("event 421 queue has %d members (%v), want 300", n, err)
		}
		if calls := scanCalls(t, rdb) - scansBefore; calls < 3 {
			t.Fatalf("%d SCAN calls over %d keys with COUNT %d, want several pages", calls, len(before), scanCount)
		}
		if ev := eventWith(t, c, te, corev1.EventTypeNormal, reasonRedisCleanedUp); ev.Note != "deleted 12 Redis keys tf:{42}:*" {
			t.Fatalf("RedisCleanedUp note %q", ev.Note)
		}
		// Another sale's pod is not the operator's to wait for or touch.
		if err := c.Get(ctx, client.ObjectKeyFromObject(otherSale), otherSale); err != nil || !otherSale.DeletionTimestamp.IsZero() {
			t.Fatalf("another sale's pod: %v", err)
		}
	})

	t.Run("Redis unreachable keeps the finalizer until it is reachable", func(t *testing.T) {
		const ns = "redis-down"
		op.namespace(t, ns)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := l.Addr().String()
		l.Close()
		if err := c.Create(ctx, redisSecret(ns, "redis://"+closed+"/0")); err != nil {
			t.Fatal(err)
		}
		te := provisionable(ns, "down")
		te.Spec.EventID = 43
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		te = waitFinalized(t, c, te, reasonMigrating)
		keys := seedEvent(t, rdb, 43, 2000)

		if err := c.Delete(ctx, te); err != nil {
			t.Fatal(err)
		}
		ev := eventWith(t, c, te, corev1.EventTypeWarning, reasonRedisCleanupFailed)
		if !strings.Contains(ev.Note, closed) || !strings.Contains(ev.Note, "tf:{43}:*") || !strings.Contains(ev.Note, FinalizerRedisCleanup) {
			t.Fatalf("RedisCleanupFailed note %q", ev.Note)
		}
		consistently(t, time.Second, "TicketEvent held while Redis is unreachable", func() error {
			got := getTE(t, c, client.ObjectKeyFromObject(te))
			if got.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(got, FinalizerRedisCleanup) {
				return fmt.Errorf("deletionTimestamp %v, finalizers %v", got.DeletionTimestamp, got.Finalizers)
			}
			if k := eventKeys(t, rdb, 43); !slices.Equal(k, keys) {
				return fmt.Errorf("keys %v", k)
			}
			return nil
		})

		// Fixing the URL lets the retry (controller-runtime's backoff) finish.
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "redis"}, &s); err != nil {
			t.Fatal(err)
		}
		s.Data["url"] = []byte(redisURL)
		if err := c.Update(ctx, &s); err != nil {
			t.Fatal(err)
		}
		eventuallyWithin(t, time.Minute, "TicketEvent deleted", func() error {
			err := c.Get(ctx, client.ObjectKeyFromObject(te), &ticketsv1alpha1.TicketEvent{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
		if k := eventKeys(t, rdb, 43); len(k) != 0 {
			t.Fatalf("event 43 keys left: %v", k)
		}
		if ev := eventWith(t, c, te, corev1.EventTypeNormal, reasonRedisCleanedUp); ev.Note != "deleted 12 Redis keys tf:{43}:*" {
			t.Fatalf("RedisCleanedUp note %q", ev.Note)
		}
	})

	t.Run("without a Secret or spec.redis the deletion completes and keys stay", func(t *testing.T) {
		const ns = "no-secret"
		op.namespace(t, ns)
		te := provisionable(ns, "orphan") // its Secret "redis" does not exist
		te.Spec.EventID = 44
		if err := c.Create(ctx, te); err != nil {
			t.Fatal(err)
		}
		te = waitFinalized(t, c, te, reasonMigrating)
		keys := seedEvent(t, rdb, 44, 100)
		if err := c.Delete(ctx, te); err != nil {
			t.Fatal(err)
		}
		waitGone(t, c, &ticketsv1alpha1.TicketEvent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: te.Name}})
		if ev := eventWith(t, c, te, corev1.EventTypeWarning, reasonRedisCleanupSkipped); ev.Note != "Redis keys tf:{44}:* not deleted: no Redis to clean: Secret redis not found" {
			t.Fatalf("RedisCleanupSkipped note %q", ev.Note)
		}
		if k := eventKeys(t, rdb, 44); !slices.Equal(k, keys) {
			t.Fatalf("event 44 keys %v, want %v", k, keys)
		}

		// Every TicketEvent gets the finalizer, even one not provisioned yet.
		bare := minimalEvent(ns, "unconfigured")
		bare.Spec.EventID = 45
		if err := c.Create(ctx, bare); err != nil {
			t.Fatal(err)
		}
		bare = waitFinalized(t, c, bare, reasonMissingConfiguration)
		if err := c.Delete(ctx, bare); err != nil {
			t.Fatal(err)
		}
		waitGone(t, c, &ticketsv1alpha1.TicketEvent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: bare.Name}})
		if ev := eventWith(t, c, bare, corev1.EventTypeWarning, reasonRedisCleanupSkipped); ev.Note != "Redis keys tf:{45}:* not deleted: spec.redis is not set" {
			t.Fatalf("RedisCleanupSkipped note %q", ev.Note)
		}
	})

	t.Run("the operator's ClusterRole allows what the finalizer does", func(t *testing.T) {
		root, err := testenv.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "role.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(b, &role); err != nil {
			t.Fatal(err)
		}
		var podVerbs []string
		for _, r := range role.Rules {
			if slices.Equal(r.APIGroups, []string{""}) && slices.Contains(r.Resources, "pods") {
				podVerbs = append(podVerbs, r.Verbs...)
			}
		}
		// Pods are listed uncached, never watched or read one by one.
		if !slices.Equal(podVerbs, []string{"list"}) {
			t.Fatalf("pods verbs %v, want [list]", podVerbs)
		}
		role.ObjectMeta = metav1.ObjectMeta{Name: "finalizer-test-manager"}
		if err := c.Create(ctx, &role); err != nil {
			t.Fatal(err)
		}
		const user = "finalizer-test-operator"
		if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(op.cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		scheme := newScheme(t)
		rc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}

		// A sale that exists only here, so the running operator leaves its
		// Deployment alone: the finalizer's steps run as the operator's user.
		const ns = "rbac"
		op.namespace(t, ns)
		if err := c.Create(ctx, redisSecret(ns, redisURL)); err != nil {
			t.Fatal(err)
		}
		owner := provisionable(ns, "ghost")
		owner.UID = "00000000-0000-0000-0000-000000000002"
		objs, err := render.Render(owner, render.Options{Image: testImage})
		if err != nil {
			t.Fatal(err)
		}
		d := objs.Deployments[render.Queue]
		if err := controllerutil.SetControllerReference(owner, d, scheme); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		r := &TicketEventReconciler{Client: rc, APIReader: rc, Scheme: scheme, RedisCleanup: true}
		var running []string
		eventually(t, "RBAC binding in effect", func() error {
			running, err = r.stopWriters(ctx, owner)
			return err
		})
		if !slices.Equal(running, []string{"Deployment ghost-queue"}) {
			t.Fatalf("running %v", running)
		}
		waitGone(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: d.Name}})
		if running, err := r.stopWriters(ctx, owner); err != nil || len(running) != 0 {
			t.Fatalf("after the Deployment went: running %v, %v", running, err)
		}
		if rc, err := r.redisConfig(ctx, owner); err != nil || rc.RedisURL != redisURL {
			t.Fatalf("Redis URL %q, %v", rc.RedisURL, err)
		}
		// Not granted, because not needed.
		if err := rc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "any"}, &corev1.Pod{}); !apierrors.IsForbidden(err) {
			t.Fatalf("get pod: %v", err)
		}
		if _, err := rc.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
			t.Fatalf("watch pods: %v", err)
		}
	})
}

// With --redis-cleanup off, a finalizer left from an earlier run is removed
// without cleaning (deletion never hangs) and no new one is added.
func TestRedisCleanupOffRemovesFinalizer(t *testing.T) {
	redisURL, rdb := testenv.RedisDB(t)
	op := startOperatorWith(t, noQueue, withRedisCleanup(false))
	ctx := context.Background()
	c := op.c
	const ns = "kept"
	op.namespace(t, ns)
	if err := c.Create(ctx, redisSecret(ns, redisURL)); err != nil {
		t.Fatal(err)
	}

	fresh := provisionable(ns, "fresh")
	fresh.Spec.EventID = 7
	if err := c.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if got := waitCondition(t, c, client.ObjectKeyFromObject(fresh), ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating); len(got.Finalizers) != 0 {
		t.Fatalf("finalizers added with --redis-cleanup off: %v", got.Finalizers)
	}

	legacy := provisionable(ns, "legacy") // event 42
	legacy.Finalizers = []string{FinalizerRedisCleanup}
	if err := c.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	legacy = waitCondition(t, c, client.ObjectKeyFromObject(legacy), ticketsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonMigrating)
	queue := deploymentOf(t, c, legacy, render.Queue)
	keys := seedEvent(t, rdb, 42, 1000)

	if err := c.Delete(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, &ticketsv1alpha1.TicketEvent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: legacy.Name}})
	if ev := eventWith(t, c, legacy, corev1.EventTypeNormal, reasonRedisKeysKept); ev.Note != "--redis-cleanup is off: the Redis keys tf:{42}:* were kept" {
		t.Fatalf("RedisKeysKept note %q", ev.Note)
	}
	if k := eventKeys(t, rdb, 42); !slices.Equal(k, keys) {
		t.Fatalf("keys %v, want %v", k, keys)
	}
	if n, err := rdb.ZCard(ctx, keyspace.Prefix(42)+"queue").Result(); err != nil || n != 1000 {
		t.Fatalf("queue has %d members (%v), want 1000", n, err)
	}
	// Nothing was stopped: the Deployment is left to the garbage collector.
	if err := c.Get(ctx, client.ObjectKeyFromObject(queue), queue); err != nil || !queue.DeletionTimestamp.IsZero() {
		t.Fatalf("queue Deployment: %v, deletionTimestamp %v", err, queue.DeletionTimestamp)
	}
}
