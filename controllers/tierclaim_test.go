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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// spec.identity.tierClaim is a claim name and not one the verifier reads
// itself; the API server says so, naming the field.
func TestTierClaimValidated(t *testing.T) {
	_, cfg := testenv.Kube(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}
	for i, claim := range []string{"sub", "exp", "has space", "1tier", "tier\"", strings.Repeat("t", 65)} {
		te := minimalEvent("default", fmt.Sprintf("tier-bad-%d", i))
		te.Spec.Identity = &ticketsv1alpha1.Identity{HMACSecretRef: ref, TierClaim: claim}
		err := c.Create(ctx, te)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.identity.tierClaim") {
			t.Errorf("tier claim %q: %v, want invalid at spec.identity.tierClaim", claim, err)
		}
	}
	for i, claim := range []string{"tier", "membership", "https://ticketfair.io/tier", "plan_v2"} {
		te := minimalEvent("default", fmt.Sprintf("tier-ok-%d", i))
		te.Spec.Identity = &ticketsv1alpha1.Identity{HMACSecretRef: ref, TierClaim: claim}
		if err := c.Create(ctx, te); err != nil {
			t.Errorf("tier claim %q: %v", claim, err)
		}
	}
}
