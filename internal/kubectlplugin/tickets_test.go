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

package kubectlplugin

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/gatecred"
)

// status shows the tickets service's figures: mails and check-in, per
// gate; gate-credential mints a gate device's credential from the gate
// secret of the Secret the TicketEvent uses.
func TestTicketsAndGates(t *testing.T) {
	cl := newCluster(t)
	kc := "--kubeconfig=" + cl.kubeconfig
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	cl.namespace(t, "doors")

	te := cl.event(t, "doors", "arena", 11, now.Add(-24*time.Hour), ticketsv1alpha1.Admission{},
		sale(0, 0, 0, 0, 50000, true, now.Add(-time.Minute)), metav1.ConditionTrue)
	te.Status.Tickets = &ticketsv1alpha1.TicketsStatus{Tickets: 50000, EmailsSent: 49990, EmailsPending: 10, EmailsFailing: 4,
		CheckedIn: 12000, Conflicts: 3, LastMinute: 800,
		Gates:     []ticketsv1alpha1.GateStatus{{Gate: "east", Admitted: 5000}, {Gate: "north-1", Admitted: 7000, Offline: 120}},
		UpdatedAt: metav1.NewTime(now.Add(-3 * time.Second))}
	if err := cl.c.Status().Update(ctx, te); err != nil {
		t.Fatal(err)
	}

	t.Run("status shows mails and check-in", func(t *testing.T) {
		d := detail(t, mustRun(t, "status", "arena", "-n", "doors", kc))
		for k, v := range map[string]string{
			"Tickets":      "50000",
			"Emails":       "49990 sent, 10 pending (4 failing)",
			"Checked in":   "12000 of 50000 tickets, 800 in the last minute, 3 conflicts",
			"Gate east":    "5000 admitted (0 offline)",
			"Gate north-1": "7000 admitted (120 offline)",
		} {
			if d[k] != v {
				t.Errorf("%s: %q, want %q", k, d[k], v)
			}
		}
		if u := d["Tickets updated"]; !strings.HasPrefix(u, now.Add(-3*time.Second).Format(time.RFC3339)+" (") {
			t.Errorf("Tickets updated: %q", u)
		}

		var s EventStatus
		if err := json.Unmarshal([]byte(mustRun(t, "status", "arena", "-n", "doors", "-o", "json", kc)), &s); err != nil {
			t.Fatal(err)
		}
		if got := s.Tickets; got == nil || got.CheckedIn != 12000 || got.EmailsFailing != 4 || len(got.Gates) != 2 || got.Gates[1].Offline != 120 {
			t.Errorf("-o json tickets: %+v", got)
		}

		header, rows := table(t, mustRun(t, "status", "-n", "doors", kc))
		i := slices.Index(header, "CHECKED-IN")
		if i < 0 || rows["arena"][i] != "12000/50000" {
			t.Errorf("table: header %v, row %v", header, rows["arena"])
		}
	})

	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "doors", Name: render.KeysSecretName(te)},
		Data: map[string][]byte{render.KeyGateSecret: []byte("generated-gate-secret")}}

	t.Run("gate-credential", func(t *testing.T) {
		// Before the operator generated the keys Secret.
		_, errOut, code := run(t, "gate-credential", "arena", "--gate", "north-1", "-n", "doors", kc)
		if code != ExitError || !strings.Contains(errOut, `secret "arena-keys" of ticketevent "arena" not found in namespace "doors"`) {
			t.Errorf("without the keys Secret: exit %d, %q", code, errOut)
		}
		if err := cl.c.Create(ctx, keys); err != nil {
			t.Fatal(err)
		}
		out := mustRun(t, "gate-credential", "arena", "--gate", "north-1", "-n", "doors", kc)
		cred := strings.TrimSuffix(out, "\n")
		if strings.Contains(cred, "\n") {
			t.Fatalf("more than the credential printed: %q", out)
		}
		id, gate, err := gatecred.Parse("generated-gate-secret", cred)
		if err != nil || id != 11 || gate != "north-1" {
			t.Errorf("credential %q: event %d, gate %q, %v; want event 11, gate north-1", cred, id, gate, err)
		}

		// spec.gates.gateSecretRef names another Secret, which is then the one read.
		if err := cl.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "doors", Name: "doors"},
			Data: map[string][]byte{"secret": []byte("own-gate-secret")}}); err != nil {
			t.Fatal(err)
		}
		if err := cl.c.Get(ctx, client.ObjectKeyFromObject(te), te); err != nil {
			t.Fatal(err)
		}
		te.Spec.Gates.GateSecretRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "doors"}, Key: "secret"}
		if err := cl.c.Update(ctx, te); err != nil {
			t.Fatal(err)
		}
		cred = strings.TrimSpace(mustRun(t, "gate-credential", "arena", "--gate", "east", "-n", "doors", kc))
		if id, gate, err := gatecred.Parse("own-gate-secret", cred); err != nil || id != 11 || gate != "east" {
			t.Errorf("credential %q from gateSecretRef: event %d, gate %q, %v", cred, id, gate, err)
		}
		te.Spec.Gates.GateSecretRef.Key = "nope"
		if err := cl.c.Update(ctx, te); err != nil {
			t.Fatal(err)
		}
		_, errOut, code = run(t, "gate-credential", "arena", "--gate", "east", "-n", "doors", kc)
		if code != ExitError || !strings.Contains(errOut, `secret "doors" has no key "nope"`) {
			t.Errorf("missing key: exit %d, %q", code, errOut)
		}
		te.Spec.Gates.GateSecretRef = nil
		if err := cl.c.Update(ctx, te); err != nil {
			t.Fatal(err)
		}

		_, errOut, code = run(t, "gate-credential", "arena", "--gate", "north.1", "-n", "doors", kc)
		if code != ExitError || !strings.Contains(errOut, "gate name") {
			t.Errorf("bad gate name: exit %d, %q", code, errOut)
		}
		_, errOut, code = run(t, "gate-credential", "nope", "--gate", "east", "-n", "doors", kc)
		if code != ExitError || strings.TrimSpace(errOut) != `error: ticketevent "nope" not found in namespace "doors"` {
			t.Errorf("unknown TicketEvent: exit %d, %q", code, errOut)
		}
		for _, args := range [][]string{
			{"gate-credential", "arena", "-n", "doors", kc},
			{"gate-credential", "--gate", "east", "-n", "doors", kc},
			{"gate-credential", "a", "b", "--gate", "east", kc},
		} {
			if _, errOut, code := run(t, args...); code != ExitUsage || !strings.Contains(errOut, "See 'kubectl ticketfair gate-credential --help'.") {
				t.Errorf("%v: exit %d, %q; want %d", args, code, errOut, ExitUsage)
			}
		}
	})

	t.Run("gate-credential needs get on secrets", func(t *testing.T) {
		read := rbacv1.PolicyRule{APIGroups: []string{ticketsv1alpha1.GroupVersion.Group}, Resources: []string{"ticketevents"}, Verbs: []string{"get"}}
		if err := cl.c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "doors", Name: "door-staff"},
			Rules: []rbacv1.PolicyRule{read}}); err != nil {
			t.Fatal(err)
		}
		if err := cl.c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "doors", Name: "door-staff"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "door-staff"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "door-staff"}}}); err != nil {
			t.Fatal(err)
		}
		staff := "--kubeconfig=" + cl.userKubeconfig(t, envtest.User{Name: "door-staff"}, "doors")
		var errOut string
		testenv.WaitFor(t, 30*time.Second, "the RoleBinding in effect", func() bool {
			var code int
			_, errOut, code = run(t, "gate-credential", "arena", "--gate", "east", staff)
			return code == ExitError && strings.Contains(errOut, "not allowed to get secrets")
		})
		if !strings.Contains(errOut, `needs the verb "get" on secrets`) || !strings.Contains(errOut, `Secret "arena-keys"`) {
			t.Errorf("forbidden Secret: %q", errOut)
		}

		// Get on that one Secret is enough.
		role := &rbacv1.Role{}
		if err := cl.c.Get(ctx, client.ObjectKey{Namespace: "doors", Name: "door-staff"}, role); err != nil {
			t.Fatal(err)
		}
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"},
			ResourceNames: []string{keys.Name}, Verbs: []string{"get"}})
		if err := cl.c.Update(ctx, role); err != nil {
			t.Fatal(err)
		}
		var out string
		testenv.WaitFor(t, 30*time.Second, "the Role's new rule in effect", func() bool {
			var code int
			out, _, code = run(t, "gate-credential", "arena", "--gate", "east", staff)
			return code == ExitOK
		})
		if _, gate, err := gatecred.Parse("generated-gate-secret", strings.TrimSpace(out)); err != nil || gate != "east" {
			t.Errorf("door staff's credential %q: gate %q, %v", out, gate, err)
		}
	})
}
