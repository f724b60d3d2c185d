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
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
	"github.com/ticketfair/ticketfair/workloads/gatecred"
)

func (p *plugin) gateCredentialCommand() *cobra.Command {
	var gate string
	c := &cobra.Command{
		Use:   "gate-credential NAME --gate GATE",
		Short: "Print the credential of one gate device of a sale",
		Long: `Print the credential a gate device checks tickets in with, for the gate
named by --gate (1 to 64 letters, digits, '-' or '_'; the check-in figures
and the "already used at" answers show it). It is derived from the sale's
gate secret, read from the Secret the TicketEvent uses: spec.gates.gateSecretRef,
or else the one the operator generated (<name>-keys, key gate-secret).

Anyone holding the credential can admit tickets at that gate: hand it over
like a password. Every credential stops working when the gate secret
changes. Only the credential is printed, on one line. Needs get on
ticketevents and get on secrets in the namespace.`,
		Example: `  kubectl ticketfair gate-credential summer-stadium --gate north-1 -n sales`,
		Args:    oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if gate == "" {
				return usageError{fmt.Errorf("gate-credential needs --gate, the name of the gate"), cmd.CommandPath()}
			}
			cl, ns, err := p.kube.connect()
			if err != nil {
				return err
			}
			te, err := p.get(cmd.Context(), cl, ns, args[0])
			if err != nil {
				return err
			}
			cred, err := gateCredential(cmd.Context(), cl, te, gate)
			if err != nil {
				return err
			}
			fmt.Fprintln(p.out, cred)
			return nil
		},
	}
	c.Flags().StringVar(&gate, "gate", "", "name of the gate the device admits at (required)")
	return c
}

// gateCredential mints the credential of gate from te's gate secret.
func gateCredential(ctx context.Context, c client.Client, te *ticketsv1alpha1.TicketEvent, gate string) (string, error) {
	ref := render.GateSecretRef(te)
	var s corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: te.Namespace, Name: ref.Name}, &s)
	switch {
	case apierrors.IsNotFound(err) && te.Spec.Gates.GateSecretRef == nil:
		return "", fmt.Errorf("secret %q of ticketevent %q not found in namespace %q: the operator creates it when it provisions the sale", ref.Name, te.Name, te.Namespace)
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("secret %q, which spec.gates.gateSecretRef of ticketevent %q names, not found in namespace %q", ref.Name, te.Name, te.Namespace)
	case apierrors.IsForbidden(err):
		return "", fmt.Errorf("not allowed to get secrets in namespace %q: gate-credential reads the gate secret from Secret %q, so your user needs the verb \"get\" on secrets there (a Role may limit it to that resourceName)\n(%w)", te.Namespace, ref.Name, err)
	case err != nil:
		return "", explain(err, "get", te.Namespace, te.Name)
	}
	secret, ok := s.Data[ref.Key]
	if !ok || len(secret) == 0 {
		return "", fmt.Errorf("secret %q has no key %q, the gate secret of ticketevent %q", ref.Name, ref.Key, te.Name)
	}
	return gatecred.Mint(string(secret), te.Spec.EventID, gate)
}
