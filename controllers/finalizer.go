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
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/workloads/config"
	"github.com/ticketfair/ticketfair/workloads/keyspace"
	"github.com/ticketfair/ticketfair/workloads/redisconn"
)

// FinalizerRedisCleanup holds a deleted TicketEvent until its Redis keys
// (every key starting with keyspace.Prefix(eventId)) are deleted. The
// operator adds it only with --redis-cleanup.
const FinalizerRedisCleanup = "tickets.ticketfair.io/redis-cleanup"

const (
	// writersPollInterval is how often a deletion looks again whether the
	// queue and booking pods are gone (pods are not watched).
	writersPollInterval = 3 * time.Second
	// redisCleanupTimeout bounds one cleanup attempt; a retry starts the
	// SCAN again, and keys already deleted stay deleted.
	redisCleanupTimeout = time.Minute
	// scanCount is the COUNT hint of each SCAN; the keys of a page are
	// deleted with one UNLINK.
	scanCount = 1000
)

// writers are the components that write the event's Redis keys.
var writers = []render.Component{render.Queue, render.Booking}

// errNoRedis marks a cleanup no retry can make possible (no spec.redis, no
// Secret, no key in it, an unparsable URL): it is abandoned, not retried,
// so the deletion never hangs on it.
var errNoRedis = errors.New("no Redis to clean")

// Event reasons of the finalizer.
const (
	reasonStoppingWriters     = "StoppingWriters"
	reasonRedisCleanedUp      = "RedisCleanedUp"
	reasonRedisCleanupFailed  = "RedisCleanupFailed"
	reasonRedisCleanupSkipped = "RedisCleanupSkipped"
	reasonRedisKeysKept       = "RedisKeysKept"
)

// addFinalizer adds FinalizerRedisCleanup with --redis-cleanup, before
// anything is provisioned. It reports false when the update lost a race
// (a newer version is on its way through the watch).
func (r *TicketEventReconciler) addFinalizer(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (bool, error) {
	if !r.RedisCleanup || controllerutil.ContainsFinalizer(te, FinalizerRedisCleanup) {
		return true, nil
	}
	if err := r.patchFinalizers(ctx, te, controllerutil.AddFinalizer); err != nil {
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return false, fmt.Errorf("add finalizer %s: %w", FinalizerRedisCleanup, err)
	}
	return true, nil
}

// finalize runs while a TicketEvent is being deleted. Owned objects are
// garbage-collected once it is gone and orders and seats stay in
// PostgreSQL; with FinalizerRedisCleanup the event's Redis keys are deleted
// first, after the pods writing them stopped.
func (r *TicketEventReconciler) finalize(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(te, FinalizerRedisCleanup) {
		return ctrl.Result{}, nil
	}
	prefix := keyspace.Prefix(te.Spec.EventID)
	if !r.RedisCleanup {
		// The flag was turned off after the finalizer was added: never hang.
		r.event(te, corev1.EventTypeNormal, reasonRedisKeysKept, "CleanupRedis",
			"--redis-cleanup is off: the Redis keys %s* were kept", prefix)
		return r.removeFinalizer(ctx, te)
	}
	if first, err := r.duplicateOf(ctx, te); err != nil {
		return ctrl.Result{}, err
	} else if first != nil {
		// The keys are the sale of the TicketEvent that holds the eventId.
		r.event(te, corev1.EventTypeNormal, reasonRedisKeysKept, "CleanupRedis",
			"the Redis keys %s* belong to TicketEvent %s/%s, which holds eventId %d: kept", prefix, first.Namespace, first.Name, te.Spec.EventID)
		return r.removeFinalizer(ctx, te)
	}
	if te.Spec.Redis == nil {
		r.event(te, corev1.EventTypeWarning, reasonRedisCleanupSkipped, "CleanupRedis",
			"Redis keys %s* not deleted: spec.redis is not set", prefix)
		return r.removeFinalizer(ctx, te)
	}
	running, err := r.stopWriters(ctx, te)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("stop writers: %w", err)
	}
	if len(running) > 0 {
		log.FromContext(ctx).V(1).Info("waiting for the Redis writers to stop", "running", running)
		return ctrl.Result{RequeueAfter: writersPollInterval}, nil
	}
	n, err := r.cleanRedis(ctx, te)
	switch {
	case errors.Is(err, errNoRedis):
		r.event(te, corev1.EventTypeWarning, reasonRedisCleanupSkipped, "CleanupRedis",
			"Redis keys %s* not deleted: %v", prefix, err)
	case err != nil:
		r.event(te, corev1.EventTypeWarning, reasonRedisCleanupFailed, "CleanupRedis",
			"deleting Redis keys %s* failed after %d keys, retrying (remove the finalizer %s to keep the rest): %v", prefix, n, FinalizerRedisCleanup, err)
		return ctrl.Result{}, fmt.Errorf("redis cleanup: %w", err)
	default:
		r.event(te, corev1.EventTypeNormal, reasonRedisCleanedUp, "CleanupRedis",
			"deleted %d Redis keys %s*", n, prefix)
	}
	return r.removeFinalizer(ctx, te)
}

func (r *TicketEventReconciler) removeFinalizer(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (ctrl.Result, error) {
	if err := r.patchFinalizers(ctx, te, controllerutil.RemoveFinalizer); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return ctrl.Result{}, nil
		case apierrors.IsConflict(err):
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, fmt.Errorf("remove finalizer %s: %w", FinalizerRedisCleanup, err)
	}
	return ctrl.Result{}, nil
}

// patchFinalizers adds or removes FinalizerRedisCleanup with a merge patch
// of metadata.finalizers alone, guarded by the resourceVersion (a conflict
// when it changed): an update would write back the whole spec as the typed
// struct serializes it, bumping the generation.
func (r *TicketEventReconciler) patchFinalizers(ctx context.Context, te *ticketsv1alpha1.TicketEvent, change func(client.Object, string) bool) error {
	patch := client.MergeFromWithOptions(te.DeepCopy(), client.MergeFromWithOptimisticLock{})
	change(te, FinalizerRedisCleanup)
	return r.Patch(ctx, te, patch)
}

// stopWriters deletes the queue and booking Deployments the TicketEvent
// controls (the garbage collector would delete them only after the
// TicketEvent is gone, and their pods keep writing the keys until then) and
// returns what still runs: those Deployments and pods with their selector
// labels. Background propagation: the Deployment goes at once and the
// garbage collector removes its ReplicaSets and pods.
func (r *TicketEventReconciler) stopWriters(ctx context.Context, te *ticketsv1alpha1.TicketEvent) ([]string, error) {
	var running, deleted []string
	for _, c := range writers {
		name := render.Name(te, c)
		var d appsv1.Deployment
		err := r.Get(ctx, client.ObjectKey{Namespace: te.Namespace, Name: name}, &d)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("get Deployment %s: %w", name, err)
		case !metav1.IsControlledBy(&d, te):
			// Not the sale's; its pods, if they carry the labels, are counted below.
		case d.DeletionTimestamp.IsZero():
			if err := r.Delete(ctx, &d, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("delete Deployment %s: %w", name, err)
			}
			deleted = append(deleted, name)
			running = append(running, "Deployment "+name)
		default:
			running = append(running, "Deployment "+name)
		}
	}
	if len(deleted) > 0 {
		r.event(te, corev1.EventTypeNormal, reasonStoppingWriters, "CleanupRedis",
			"deleted Deployments %s; the Redis keys are deleted once their pods are gone", strings.Join(deleted, ", "))
	}
	pods, err := r.writerPods(ctx, te)
	if err != nil {
		return nil, err
	}
	return append(running, pods...), nil
}

// writerPods lists, uncached, the queue and booking pods that may still
// write: every pod with their selector labels, terminating ones included,
// except those whose containers all ended (Succeeded, Failed).
func (r *TicketEventReconciler) writerPods(ctx context.Context, te *ticketsv1alpha1.TicketEvent) ([]string, error) {
	var out []string
	for _, c := range writers {
		var pods corev1.PodList
		if err := r.apiReader().List(ctx, &pods, client.InNamespace(te.Namespace), client.MatchingLabels(render.SelectorLabels(te, c))); err != nil {
			return nil, fmt.Errorf("list %s pods: %w", c, err)
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				out = append(out, "Pod "+p.Name)
			}
		}
	}
	return out, nil
}

// redisConfig is spec.redis with its Secrets read, uncached: the operator
// caches only its own Secrets.
func (r *TicketEventReconciler) redisConfig(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (config.Redis, error) {
	if te.Spec.Redis == nil {
		return config.Redis{}, fmt.Errorf("%w: spec.redis is not set", errNoRedis)
	}
	withRefs, err := render.RedisEnv(te.Spec.Redis)
	if err != nil {
		return config.Redis{}, err
	}
	env := map[string]string{}
	secrets := map[string]*corev1.Secret{}
	for _, v := range withRefs {
		if v.ValueFrom == nil || v.ValueFrom.SecretKeyRef == nil {
			env[v.Name] = v.Value
			continue
		}
		ref := *v.ValueFrom.SecretKeyRef
		s, ok := secrets[ref.Name]
		if !ok {
			s = &corev1.Secret{}
			err := r.apiReader().Get(ctx, client.ObjectKey{Namespace: te.Namespace, Name: ref.Name}, s)
			if apierrors.IsNotFound(err) {
				return config.Redis{}, fmt.Errorf("%w: Secret %s not found", errNoRedis, ref.Name)
			}
			if err != nil {
				return config.Redis{}, fmt.Errorf("get Secret %s: %w", ref.Name, err)
			}
			secrets[ref.Name] = s
		}
		val, ok := s.Data[ref.Key]
		if !ok || len(val) == 0 {
			return config.Redis{}, fmt.Errorf("%w: Secret %s has no key %s", errNoRedis, ref.Name, ref.Key)
		}
		env[v.Name] = string(val)
	}
	var cfg config.Redis
	if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &cfg); err != nil {
		return config.Redis{}, fmt.Errorf("%w: %v", errNoRedis, err)
	}
	return cfg, nil
}

// cleanRedis deletes every key of the event from the Redis of spec.redis
// and returns how many it deleted.
func (r *TicketEventReconciler) cleanRedis(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (int64, error) {
	cfg, err := r.redisConfig(ctx, te)
	if err != nil {
		return 0, err
	}
	// redisconn's errors never quote the URL (it may carry a password).
	rdb, err := redisconn.New(cfg)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNoRedis, err)
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, redisCleanupTimeout)
	defer cancel()
	return deleteEventKeys(ctx, rdb, te.Spec.EventID)
}

// deleteEventKeys deletes the event's keys from a server, a Sentinel
// master or a cluster.
func deleteEventKeys(ctx context.Context, rdb redis.UniversalClient, eventID int64) (int64, error) {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		// SCAN sees one node: the event's keys share a hash slot, so they
		// are on one master, and the others find none.
		var total atomic.Int64
		err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			n, err := deleteKeys(ctx, m, eventID)
			total.Add(n)
			return err
		})
		return total.Load(), err
	}
	return deleteKeys(ctx, rdb, eventID)
}

// deleteKeys SCANs for the event's keys (keyspace.Pattern) and UNLINKs each
// page of them: UNLINK frees a large value (a queue of millions) off the
// main thread. Only keys that start with the event's prefix are deleted,
// whatever the server's pattern matching returned.
func deleteKeys(ctx context.Context, rdb redis.Cmdable, eventID int64) (int64, error) {
	prefix, pattern := keyspace.Prefix(eventID), keyspace.Pattern(eventID)
	var deleted int64
	var cursor uint64
	for {
		page, next, err := rdb.Scan(ctx, cursor, pattern, scanCount).Result()
		if err != nil {
			return deleted, fmt.Errorf("scan %s: %w", pattern, err)
		}
		keys := page[:0]
		for _, k := range page {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			n, err := rdb.Unlink(ctx, keys...).Result()
			if err != nil {
				return deleted, fmt.Errorf("unlink %d keys: %w", len(keys), err)
			}
			deleted += n
		}
		if cursor = next; cursor == 0 {
			return deleted, nil
		}
	}
}

func (r *TicketEventReconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
