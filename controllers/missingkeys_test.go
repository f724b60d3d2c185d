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
	"encoding/base64"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

// TestKeysSecretGainsMissingKeys: a sale's keys Secret written by an older
// operator (no proof-of-work key) gets the key it lacks, and keeps every
// key it had, byte for byte; a second pass changes nothing.
func TestKeysSecretGainsMissingKeys(t *testing.T) {
	_, cfg := testenv.Kube(t)
	scheme := newScheme(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "oldkeys"}}); err != nil {
		t.Fatal(err)
	}
	te := &ticketsv1alpha1.TicketEvent{ObjectMeta: metav1.ObjectMeta{Namespace: "oldkeys", Name: "spring"}}
	old := map[string][]byte{
		render.KeyAccessTokenKeys: []byte("a1:old-access"),
		render.KeyTicketKeys:      []byte("t1:old-ticket"),
		render.KeyServiceToken:    []byte("old-service-token"),
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "oldkeys", Name: render.KeysSecretName(te)}, Data: old}); err != nil {
		t.Fatal(err)
	}
	r := &TicketEventReconciler{Client: c, Scheme: scheme}
	read := func() map[string][]byte {
		t.Helper()
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "oldkeys", Name: render.KeysSecretName(te)}, &s); err != nil {
			t.Fatal(err)
		}
		return s.Data
	}
	if err := r.stepKeys(ctx, te, nil, nil); err != nil {
		t.Fatal(err)
	}
	got := read()
	for k, v := range old {
		if string(got[k]) != string(v) {
			t.Fatalf("%s rewritten: %q -> %q", k, v, got[k])
		}
	}
	pow, err := base64.StdEncoding.DecodeString(string(got[render.KeyPowKeys]))
	if err != nil || len(pow) != 32 {
		t.Fatalf("%s = %q", render.KeyPowKeys, got[render.KeyPowKeys])
	}
	if err := r.stepKeys(ctx, te, nil, nil); err != nil {
		t.Fatal(err)
	}
	if again := read(); string(again[render.KeyPowKeys]) != string(got[render.KeyPowKeys]) {
		t.Fatal("the proof-of-work key changed on the next pass")
	}
}
