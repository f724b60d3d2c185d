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

package render

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// envNames maps the fields of a config.Tickets to their env var names, so
// the test names fields, never env vars.
func envNames() (*config.Tickets, map[any]config.Var) {
	var t config.Tickets
	m := map[any]config.Var{}
	for _, v := range config.Render(&t) {
		m[v.Field] = v
	}
	return &t, m
}

// ticketsEnv renders te and returns the tickets container's env by name
// and its ConfigMap's data.
func ticketsEnv(t *testing.T, te *ticketsv1alpha1.TicketEvent) (map[string]corev1.EnvVar, map[string]string) {
	t.Helper()
	o, err := Render(te, Options{Image: "ticketfair:1.0"})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range o.Deployments[Tickets].Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	return env, o.ConfigMaps[Tickets].Data
}

// spec.delivery.mail, spec.gates, spec.venue, spec.startsAt and
// identity.emailClaim reach the tickets workload: plain settings through
// its ConfigMap, the SMTP credentials and the gate secret as Secret key
// references, never as values.
func TestMailAndGatesRendered(t *testing.T) {
	f, vars := envNames()
	name := func(field any) string {
		t.Helper()
		v, ok := vars[field]
		if !ok {
			t.Fatalf("no env var for field %p", field)
		}
		return v.Name
	}

	te := event()
	te.Spec.DisplayName = "Summer Concert"
	te.Spec.Venue = "Olympic Stadium"
	te.Spec.StartsAt = ptr.To(metav1.NewTime(time.Date(2026, 8, 1, 19, 30, 0, 0, time.FixedZone("CEST", 2*3600))))
	te.Spec.Identity.EmailClaim = "mail"
	te.Spec.Delivery.Mail = &ticketsv1alpha1.Mail{
		SMTP: ticketsv1alpha1.SMTP{Host: "smtp.example.com", Port: 465, TLS: ticketsv1alpha1.SMTPImplicitTLS,
			CredentialsSecretRef: &corev1.LocalObjectReference{Name: "smtp-auth"}},
		From:    "tickets@example.com",
		Workers: 8,
	}
	te.Spec.Gates.Transfers = ticketsv1alpha1.Transfers{Max: ptr.To(int32(0)), Cutoff: &metav1.Duration{Duration: 90 * time.Minute}}

	env, data := ticketsEnv(t, te)
	for field, want := range map[any]string{
		&f.SMTPHost: "smtp.example.com", &f.SMTPPort: "465", &f.SMTPTLS: "tls", &f.From: "tickets@example.com",
		&f.Workers: "8", &f.EventName: "Summer Concert", &f.Venue: "Olympic Stadium",
		&f.StartsAt: "2026-08-01T17:30:00Z", &f.EmailClaim: "mail", &f.MaxTransfers: "0", &f.TransferCutoff: "1h30m0s",
	} {
		n := name(field)
		if data[n] != want {
			t.Errorf("%s = %q in the ConfigMap, want %q", n, data[n], want)
		}
		if e := env[n]; e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil || e.ValueFrom.ConfigMapKeyRef.Key != n {
			t.Errorf("%s: env %+v, want a reference to the ConfigMap", n, e)
		}
	}
	for field, want := range map[any]corev1.SecretKeySelector{
		&f.SMTPUsername: {LocalObjectReference: corev1.LocalObjectReference{Name: "smtp-auth"}, Key: "username"},
		&f.SMTPPassword: {LocalObjectReference: corev1.LocalObjectReference{Name: "smtp-auth"}, Key: "password"},
		&f.GateSecret:   {LocalObjectReference: corev1.LocalObjectReference{Name: "te-keys"}, Key: KeyGateSecret},
	} {
		n := name(field)
		e := env[n]
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || *e.ValueFrom.SecretKeyRef != want {
			t.Errorf("%s: env %+v, want the Secret key %s/%s", n, e, want.Name, want.Key)
		}
		if _, ok := data[n]; ok {
			t.Errorf("%s is in the ConfigMap", n)
		}
	}
	// No credential of any kind is a literal, in the env or the ConfigMap.
	for _, v := range vars {
		if !v.Secret {
			continue
		}
		if e, ok := env[v.Name]; ok && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("credential %s rendered as %+v", v.Name, e)
		}
		if _, ok := data[v.Name]; ok {
			t.Errorf("credential %s is in the ConfigMap", v.Name)
		}
	}
	for n, e := range env {
		if e.Value != "" {
			t.Errorf("%s has a literal value %q", n, e.Value)
		}
	}

	// gates.gateSecretRef replaces the generated gate secret.
	te.Spec.Gates.GateSecretRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "doors"}, Key: "secret"}
	env, _ = ticketsEnv(t, te)
	if r := env[name(&f.GateSecret)].ValueFrom.SecretKeyRef; r.Name != "doors" || r.Key != "secret" {
		t.Errorf("gate secret from %s/%s, want doors/secret", r.Name, r.Key)
	}
	if got := GateSecretRef(te); got.Name != "doors" || got.Key != "secret" {
		t.Errorf("GateSecretRef = %+v", got)
	}

	// Without delivery.mail: no SMTP host (no mail) nor credentials; the
	// workload's defaults for the rest.
	plain := event()
	env, data = ticketsEnv(t, plain)
	def := config.DefaultsOf[config.Tickets]()
	if _, ok := data[name(&f.SMTPHost)]; ok {
		t.Errorf("SMTP host rendered without delivery.mail: %q", data[name(&f.SMTPHost)])
	}
	for _, field := range []any{&f.SMTPUsername, &f.SMTPPassword, &f.StartsAt, &f.Venue} {
		if _, ok := env[name(field)]; ok {
			t.Errorf("%s rendered without its setting", name(field))
		}
	}
	if got := data[name(&f.MaxTransfers)]; got != "3" || def.MaxTransfers != 3 {
		t.Errorf("transfer max %q (workload default %d), want 3", got, def.MaxTransfers)
	}
	if got := data[name(&f.EmailClaim)]; got != def.EmailClaim {
		t.Errorf("email claim %q, want the default %q", got, def.EmailClaim)
	}
	if r := env[name(&f.GateSecret)].ValueFrom.SecretKeyRef; r.Name != KeysSecretName(plain) || r.Key != KeyGateSecret {
		t.Errorf("gate secret from %s/%s, want the generated key", r.Name, r.Key)
	}
}

// The generated keys include a gate secret of 32 random bytes.
func TestGenerateGateSecret(t *testing.T) {
	a, err := GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateKeys()
	if len(a[KeyGateSecret]) != 43 || string(a[KeyGateSecret]) == string(b[KeyGateSecret]) {
		t.Fatalf("gate secrets %q and %q", a[KeyGateSecret], b[KeyGateSecret])
	}
}
