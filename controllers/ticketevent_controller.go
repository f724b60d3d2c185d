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

// Package controllers holds the TicketEvent reconciler.
package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// TicketEventReconciler provisions and reports one sale per TicketEvent.
type TicketEventReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// +kubebuilder:rbac:groups=tickets.ticketfair.io,resources=ticketevents,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=tickets.ticketfair.io,resources=ticketevents/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=tickets.ticketfair.io,resources=ticketevents/finalizers,verbs=update

// Reconcile records that the current generation was observed.
func (r *TicketEventReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var te ticketsv1alpha1.TicketEvent
	if err := r.Get(ctx, req.NamespacedName, &te); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get TicketEvent: %w", err)
	}
	if te.Status.ObservedGeneration == te.Generation {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(te.DeepCopy())
	te.Status.ObservedGeneration = te.Generation
	if err := r.Status().Patch(ctx, &te, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", err)
	}
	log.FromContext(ctx).Info("observed", "generation", te.Generation)
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler.
func (r *TicketEventReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&ticketsv1alpha1.TicketEvent{}).
		Named("ticketevent").
		Complete(r)
}
