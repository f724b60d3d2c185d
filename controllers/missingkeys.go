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
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
)

// addMissingKeys adds to a sale's existing keys Secret the generated keys
// it lacks (a key a newer operator generates, such as the proof of work's),
// and leaves every key it has untouched: rewriting one would invalidate
// the tokens and tickets it signed.
func (r *TicketEventReconciler) addMissingKeys(ctx context.Context, te *ticketsv1alpha1.TicketEvent, s *corev1.Secret) error {
	gen, err := render.GenerateKeys()
	if err != nil {
		return err
	}
	var added []string
	patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
	for k, v := range gen {
		if _, ok := s.Data[k]; ok {
			continue
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = v
		added = append(added, k)
	}
	if len(added) == 0 {
		return nil
	}
	sort.Strings(added)
	if err := r.Patch(ctx, s, patch); err != nil {
		return fmt.Errorf("add %s to Secret %s: %w", strings.Join(added, ", "), s.Name, err)
	}
	log.FromContext(ctx).Info("added keys", "kind", "Secret", "name", s.Name, "keys", added)
	r.event(te, corev1.EventTypeNormal, "KeysGenerated", "Generate", "added %s to Secret %s", strings.Join(added, ", "), s.Name)
	return nil
}
