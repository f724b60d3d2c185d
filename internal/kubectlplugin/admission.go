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
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// pauseCommand is pause (paused true) or resume (false).
func (p *plugin) pauseCommand(paused bool) *cobra.Command {
	c := &cobra.Command{
		Use:   "pause NAME",
		Short: "Stop admitting people from the waiting room (joins are still accepted)",
		Long: `Pause admission of a sale: sets spec.admission.paused to true with a merge
patch of that one field. The queue's admitter stops admitting within
seconds; people can still join and keep their place. Pausing a paused sale
changes nothing. Needs get and patch on ticketevents.`,
		Example: "  kubectl ticketfair pause summer-stadium -n sales",
	}
	if !paused {
		c.Use = "resume NAME"
		c.Short = "Resume admitting people from the waiting room"
		c.Long = `Resume admission of a paused sale: sets spec.admission.paused to false with a
merge patch of that one field. The queue's admitter resumes within seconds.
Resuming a sale that is not paused changes nothing. Needs get and patch on ticketevents.`
		c.Example = "  kubectl ticketfair resume summer-stadium -n sales"
	}
	c.Args = oneName
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cl, ns, err := p.kube.connect()
		if err != nil {
			return err
		}
		te, err := p.get(cmd.Context(), cl, ns, args[0])
		if err != nil {
			return err
		}
		if te.Spec.Admission.Paused == paused {
			state := map[bool]string{true: "already paused", false: "not paused"}[paused]
			fmt.Fprintf(p.out, "ticketevent %q is %s; nothing changed\n", te.Name, state)
			return nil
		}
		patch := map[string]any{"spec": map[string]any{"admission": map[string]any{"paused": paused}}}
		if err := mergePatch(cmd.Context(), cl, te, patch); err != nil {
			return err
		}
		if paused {
			fmt.Fprintf(p.out, "ticketevent %q paused: admission stops within seconds; joins are still accepted\n", te.Name)
		} else {
			fmt.Fprintf(p.out, "ticketevent %q resumed: admission continues at %d/s\n", te.Name, RatePerSecond(te))
		}
		return nil
	}
	return c
}

func (p *plugin) openNowCommand() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "open-now NAME",
		Short: "Open sales now: set spec.salesOpenAt to the current time",
		Long: `Open a scheduled sale at once: sets spec.salesOpenAt to now (whole seconds,
UTC) with a merge patch of that one field. The pre-queue closes, is ordered
(shuffled unless spec.admission.preQueue is FIFO) and admission starts.

A sale whose salesOpenAt has passed is refused, since moving its opening
changes nothing a customer should see; --force sets it to now anyway. The
patch carries the resourceVersion read, so a TicketEvent changed in between
is refused rather than overwritten. Needs get and patch on ticketevents.`,
		Example: "  kubectl ticketfair open-now summer-stadium -n sales",
		Args:    oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, ns, err := p.kube.connect()
			if err != nil {
				return err
			}
			te, err := p.get(cmd.Context(), cl, ns, args[0])
			if err != nil {
				return err
			}
			was := te.Spec.SalesOpenAt
			now, err := openNow(cmd.Context(), cl, te, p.now(), force)
			if err != nil {
				return err
			}
			fmt.Fprintf(p.out, "ticketevent %q opens now: salesOpenAt %s (was %s)\n", te.Name, timestamp(now), timestamp(was))
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "set salesOpenAt to now even if the sale has already opened")
	return c
}

// openNow sets te's salesOpenAt to now (whole seconds, UTC), refusing a
// sale already open unless force. The patch carries te's resourceVersion:
// the decision was made on te, so a TicketEvent changed since is refused.
func openNow(ctx context.Context, c client.Client, te *ticketsv1alpha1.TicketEvent, now time.Time, force bool) (metav1.Time, error) {
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	was := te.Spec.SalesOpenAt
	if !at.Before(&was) && !force {
		return at, fmt.Errorf("ticketevent %q already opened at %s (%s ago); pass --force to set salesOpenAt to now anyway",
			te.Name, timestamp(was), duration.HumanDuration(at.Sub(was.Time)))
	}
	patch := map[string]any{
		"metadata": map[string]any{"resourceVersion": te.ResourceVersion},
		"spec":     map[string]any{"salesOpenAt": at},
	}
	return at, mergePatch(ctx, c, te, patch)
}

func (p *plugin) get(ctx context.Context, c client.Client, ns, name string) (*ticketsv1alpha1.TicketEvent, error) {
	var te ticketsv1alpha1.TicketEvent
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &te); err != nil {
		return nil, explain(err, "get", ns, name)
	}
	return &te, nil
}

// mergePatch applies patch, a JSON merge patch naming only the fields to
// change, to te as field manager kubectl-ticketfair. Nothing else of the
// object is sent, so the operator's writes and other managers' fields are
// left alone.
func mergePatch(ctx context.Context, c client.Client, te *ticketsv1alpha1.TicketEvent, patch map[string]any) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	err = c.Patch(ctx, te, client.RawPatch(types.MergePatchType, body), client.FieldOwner(fieldManager))
	if apierrors.IsConflict(err) {
		return fmt.Errorf("ticketevent %q changed while this command ran; run it again: %w", te.Name, err)
	}
	return explain(err, "patch", te.Namespace, te.Name)
}
