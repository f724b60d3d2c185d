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
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// Field indexes of the TicketEvent cache.
const (
	indexEventID     = "spec.eventId"
	indexSecretNames = "spec.secretNames"
)

func indexByEventID(o client.Object) []string {
	return []string{strconv.FormatInt(o.(*ticketsv1alpha1.TicketEvent).Spec.EventID, 10)}
}

func indexBySecretNames(o client.Object) []string {
	var names []string
	for _, ref := range secretRefs(o.(*ticketsv1alpha1.TicketEvent)) {
		if !slices.Contains(names, ref.Name) {
			names = append(names, ref.Name)
		}
	}
	return names
}

// older orders TicketEvents by creation: the first one created keeps an
// eventId. creationTimestamp has a resolution of a second, so two created
// in the same second are ordered by namespace and name.
func older(a, b *ticketsv1alpha1.TicketEvent) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// duplicateOf returns the TicketEvent that holds te's eventId, if another
// one (in any watched namespace) was created before te. Two sales with one
// eventId would share the Redis keys tf:{eventId}:* and the REST paths, so
// the later one is never provisioned. One being deleted still holds the id
// until it is gone: its finalizer may be deleting those keys.
func (r *TicketEventReconciler) duplicateOf(ctx context.Context, te *ticketsv1alpha1.TicketEvent) (*ticketsv1alpha1.TicketEvent, error) {
	var list ticketsv1alpha1.TicketEventList
	if err := r.List(ctx, &list, client.MatchingFields{indexEventID: strconv.FormatInt(te.Spec.EventID, 10)}); err != nil {
		return nil, fmt.Errorf("list TicketEvents with eventId %d: %w", te.Spec.EventID, err)
	}
	var first *ticketsv1alpha1.TicketEvent
	for i := range list.Items {
		o := &list.Items[i]
		if o.UID == te.UID || !older(o, te) {
			continue
		}
		if first == nil || older(o, first) {
			first = o
		}
	}
	return first, nil
}

// sameEventID wakes the other TicketEvents of an eventId when one changes
// or goes, so a refused duplicate is provisioned once the first is deleted.
func (r *TicketEventReconciler) sameEventID(ctx context.Context, o client.Object) []reconcile.Request {
	var list ticketsv1alpha1.TicketEventList
	if err := r.List(ctx, &list, client.MatchingFields{indexEventID: indexByEventID(o)[0]}); err != nil {
		log.FromContext(ctx).Error(err, "list TicketEvents of the same eventId")
		return nil
	}
	var reqs []reconcile.Request
	for _, te := range list.Items {
		if te.UID != o.GetUID() {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: te.Namespace, Name: te.Name}})
		}
	}
	return reqs
}

// referencingSecret wakes the TicketEvents that refer to a Secret when it
// is created, changed or deleted.
func (r *TicketEventReconciler) referencingSecret(ctx context.Context, s *metav1.PartialObjectMetadata) []reconcile.Request {
	var list ticketsv1alpha1.TicketEventList
	if err := r.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingFields{indexSecretNames: s.Name}); err != nil {
		log.FromContext(ctx).Error(err, "list TicketEvents referring to a Secret")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, te := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: te.Namespace, Name: te.Name}})
	}
	return reqs
}

// secretRefs are the Secret keys the spec refers to; the operator's own
// keys Secret is not among them.
func secretRefs(te *ticketsv1alpha1.TicketEvent) []corev1.SecretKeySelector {
	var refs []corev1.SecretKeySelector
	s := te.Spec
	if s.Redis != nil {
		refs = append(refs, s.Redis.URLSecretRef)
	}
	if s.Postgres != nil {
		refs = append(refs, s.Postgres.URLSecretRef)
	}
	if s.Identity != nil && s.Identity.HMACSecretRef != nil {
		refs = append(refs, *s.Identity.HMACSecretRef)
	}
	if s.Payment.WebhookSecretRef != nil {
		refs = append(refs, *s.Payment.WebhookSecretRef)
	}
	if s.Payment.StripeWebhookSecretRef != nil {
		refs = append(refs, *s.Payment.StripeWebhookSecretRef)
	}
	if m := s.Delivery.Mail; m != nil && m.SMTP.CredentialsSecretRef != nil {
		for _, key := range []string{ticketsv1alpha1.SMTPUsernameKey, ticketsv1alpha1.SMTPPasswordKey} {
			refs = append(refs, corev1.SecretKeySelector{LocalObjectReference: *m.SMTP.CredentialsSecretRef, Key: key})
		}
	}
	if s.Gates.GateSecretRef != nil {
		refs = append(refs, *s.Gates.GateSecretRef)
	}
	return refs
}

// missingSecrets lists the Secret keys the spec refers to that do not
// exist, e.g. `Secret "ticketfair-redis" (key "url")`. Pods that need them
// would not start. Read uncached: only the operator's own Secrets are in
// its cache; the Secret watch only says when to look again.
func (r *TicketEventReconciler) missingSecrets(ctx context.Context, te *ticketsv1alpha1.TicketEvent) ([]string, error) {
	var missing []string
	secrets := map[string]*corev1.Secret{}
	for _, ref := range secretRefs(te) {
		if ref.Optional != nil && *ref.Optional {
			continue
		}
		s, seen := secrets[ref.Name]
		if !seen {
			s = &corev1.Secret{}
			err := r.apiReader().Get(ctx, client.ObjectKey{Namespace: te.Namespace, Name: ref.Name}, s)
			switch {
			case apierrors.IsNotFound(err):
				s = nil
			case err != nil:
				return nil, fmt.Errorf("get Secret %s: %w", ref.Name, err)
			}
			secrets[ref.Name] = s
		}
		var what string
		switch {
		case s == nil:
			what = fmt.Sprintf("Secret %q (key %q) does not exist", ref.Name, ref.Key)
		case !hasKey(s, ref.Key):
			what = fmt.Sprintf("Secret %q has no key %q", ref.Name, ref.Key)
		default:
			continue
		}
		if !slices.Contains(missing, what) {
			missing = append(missing, what)
		}
	}
	return missing, nil
}

func hasKey(s *corev1.Secret, key string) bool {
	if _, ok := s.Data[key]; ok {
		return true
	}
	_, ok := s.StringData[key]
	return ok
}
