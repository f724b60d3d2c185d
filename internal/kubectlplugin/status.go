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
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
)

// none stands for a figure that is unknown or does not apply.
const none = "—"

// EventStatus is what status shows of one TicketEvent; -o json and -o yaml
// print it as is. A null figure is not known yet (the queue or the booking
// service has not reported it) or, for etaSeconds, there is no end to give.
type EventStatus struct {
	Namespace     string      `json:"namespace"`
	Name          string      `json:"name"`
	EventID       int64       `json:"eventId"`
	Phase         Phase       `json:"phase"`
	SalesOpenAt   metav1.Time `json:"salesOpenAt"`
	Waiting       *int64      `json:"waiting"`
	Active        *int64      `json:"active"`
	RatePerSecond int32       `json:"ratePerSecond"`
	ETASeconds    *int64      `json:"etaSeconds"`
	Sold          *int64      `json:"sold"`
	SeatsTotal    int64       `json:"seatsTotal"`
	Held          *int64      `json:"held"`
	Remaining     *int64      `json:"remaining"`
	// Ready is the Ready condition's status: True, False or Unknown.
	Ready        string       `json:"ready"`
	ReadyReason  string       `json:"readyReason,omitempty"`
	ReadyMessage string       `json:"readyMessage,omitempty"`
	UpdatedAt    *metav1.Time `json:"updatedAt"`
	// Tickets are the tickets service's figures (status.tickets): tickets
	// issued, their mails, check-in at each gate; null until it reported.
	Tickets *ticketsv1alpha1.TicketsStatus `json:"tickets"`
	// Autotune describes spec.admission.autotune when set; ratePerSecond
	// is then the rate it chose (status.sale.admitRate).
	Autotune string `json:"autotune,omitempty"`
}

// StatusOf derives the EventStatus of te at now.
func StatusOf(te *ticketsv1alpha1.TicketEvent, now time.Time) EventStatus {
	s := EventStatus{
		Namespace:     te.Namespace,
		Name:          te.Name,
		EventID:       te.Spec.EventID,
		Phase:         PhaseOf(te, now),
		SalesOpenAt:   te.Spec.SalesOpenAt,
		RatePerSecond: RatePerSecond(te),
		SeatsTotal:    te.Status.SeatsTotal,
		Ready:         string(metav1.ConditionUnknown),
	}
	if s.SeatsTotal == 0 { // not reconciled yet
		s.SeatsTotal = render.SeatsTotal(te)
	}
	if at := te.Spec.Admission.Autotune; at != nil {
		s.Autotune = fmt.Sprintf("hold p99 ≤ %s, %d–%d/s", at.TargetHoldP99.Duration, at.MinRatePerSecond, at.MaxRatePerSecond)
	}
	if sale := te.Status.Sale; sale != nil {
		s.Waiting, s.Active = &sale.Waiting, &sale.Active
		if s.Autotune != "" && sale.AdmitRate > 0 {
			s.RatePerSecond = int32(sale.AdmitRate)
		}
		s.Sold, s.Held, s.Remaining = known(sale.Sold), known(sale.Held), known(sale.Remaining)
		if !sale.UpdatedAt.IsZero() {
			s.UpdatedAt = &sale.UpdatedAt
		}
		if eta, ok := QueueETA(sale.Waiting, s.RatePerSecond, s.Phase); ok {
			secs := int64(eta / time.Second)
			s.ETASeconds = &secs
		}
	}
	if c := meta.FindStatusCondition(te.Status.Conditions, ticketsv1alpha1.ConditionReady); c != nil {
		s.Ready, s.ReadyReason, s.ReadyMessage = string(c.Status), c.Reason, c.Message
	}
	s.Tickets = te.Status.Tickets.DeepCopy()
	return s
}

// known is n, or nil for the -1 of a figure not published yet.
func known(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

func (p *plugin) statusCommand() *cobra.Command {
	var output string
	var all bool
	c := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show how a sale stands: phase, queue, admission rate, seats, mails, check-in, readiness",
		Long: `Show how one TicketEvent's sale stands, or every sale of the namespace as a table.

Phase is derived from the TicketEvent: SoldOut once status.sale.soldOut,
else Paused while spec.admission.paused, else Scheduled before
spec.salesOpenAt, else Open. ETA is how long admitting everyone now waiting
takes at the admission rate (a lower bound: admission also stops at
maxActive and at the seats left); "—" when nobody waits or the sale is
paused or sold out. With NAME it also shows the tickets service's figures:
tickets issued, their mails (sent, pending, failing), check-in (admitted,
in the last minute, conflicts of offline gates) and each gate's admissions;
the table shows checked-in of tickets issued. Figures the services have not
reported yet show as "—" (null in JSON and YAML). Needs get (with NAME) or
list (without) on ticketevents.`,
		Example: `  kubectl ticketfair status summer-stadium
  kubectl ticketfair status -n sales
  kubectl ticketfair status summer-stadium -o json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("status takes at most one TicketEvent NAME, got %d arguments", len(args)), c.CommandPath()}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return usageError{fmt.Errorf("unknown output format %q: use -o json or -o yaml (default: a table)", output), cmd.CommandPath()}
			}
			if all && len(args) > 0 {
				return usageError{fmt.Errorf("a NAME cannot be combined with --all-namespaces"), cmd.CommandPath()}
			}
			c, ns, err := p.kube.connect()
			if err != nil {
				return err
			}
			now := p.now()
			if len(args) == 1 {
				var te ticketsv1alpha1.TicketEvent
				if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: args[0]}, &te); err != nil {
					return explain(err, "get", ns, args[0])
				}
				s := StatusOf(&te, now)
				if output != "" {
					return write(p.out, output, s)
				}
				return writeDetail(p.out, s, now)
			}
			var list ticketsv1alpha1.TicketEventList
			var opts []client.ListOption
			if all {
				ns = ""
			} else {
				opts = append(opts, client.InNamespace(ns))
			}
			if err := c.List(cmd.Context(), &list, opts...); err != nil {
				return explain(err, "list", ns, "")
			}
			items := make([]EventStatus, len(list.Items))
			for i := range list.Items {
				items[i] = StatusOf(&list.Items[i], now)
			}
			slices.SortFunc(items, func(a, b EventStatus) int {
				return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
			})
			if output != "" {
				return write(p.out, output, struct {
					Items []EventStatus `json:"items"`
				}{items})
			}
			if len(items) == 0 {
				where := fmt.Sprintf("namespace %q", ns)
				if all {
					where = "any namespace"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "No TicketEvents found in %s.\n", where)
				return nil
			}
			return writeTable(p.out, items, all, now)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: human-readable)")
	c.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the TicketEvents of every namespace (needs list on ticketevents cluster-wide)")
	return c
}

// write prints v as JSON or YAML.
func write(w io.Writer, format string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}

func writeTable(w io.Writer, items []EventStatus, withNamespace bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	head := "NAME\tPHASE\tWAITING\tACTIVE\tRATE\tETA\tSOLD\tHELD\tREMAINING\tCHECKED-IN\tREADY\tUPDATED"
	if withNamespace {
		head = "NAMESPACE\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, s := range items {
		if withNamespace {
			fmt.Fprintf(tw, "%s\t", s.Namespace)
		}
		checkedIn := none
		if t := s.Tickets; t != nil {
			checkedIn = fmt.Sprintf("%d/%d", t.CheckedIn, t.Tickets)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/s\t%s\t%s/%d\t%s\t%s\t%s\t%s\t%s\n",
			s.Name, s.Phase, num(s.Waiting), num(s.Active), s.RatePerSecond, eta(s.ETASeconds),
			num(s.Sold), s.SeatsTotal, num(s.Held), num(s.Remaining), checkedIn, s.Ready, ago(s.UpdatedAt, now))
	}
	return tw.Flush()
}

// admissionRate is the rate, and autotune's bounds when it chose it.
func admissionRate(s EventStatus) string {
	if s.Autotune == "" {
		return fmt.Sprintf("%d/s", s.RatePerSecond)
	}
	return fmt.Sprintf("%d/s (autotune: %s)", s.RatePerSecond, s.Autotune)
}

func writeDetail(w io.Writer, s EventStatus, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	ready := s.Ready
	if s.ReadyReason != "" {
		ready += " (" + s.ReadyReason + ": " + s.ReadyMessage + ")"
	}
	updated := none
	if s.UpdatedAt != nil {
		updated = timestamp(*s.UpdatedAt) + " (" + ago(s.UpdatedAt, now) + ")"
	}
	opens := timestamp(s.SalesOpenAt)
	if d := s.SalesOpenAt.Sub(now); d > 0 {
		opens += " (in " + duration.HumanDuration(d) + ")"
	} else {
		opens += " (" + duration.HumanDuration(-d) + " ago)"
	}
	rows := [][2]string{
		{"Name", s.Name},
		{"Namespace", s.Namespace},
		{"Event", fmt.Sprint(s.EventID)},
		{"Phase", string(s.Phase)},
		{"Sales open at", opens},
		{"Waiting", num(s.Waiting)},
		{"Active", num(s.Active)},
		{"Admission rate", admissionRate(s)},
		{"Queue ends in", eta(s.ETASeconds)},
		{"Sold", num(s.Sold) + " of " + fmt.Sprint(s.SeatsTotal) + " seats"},
		{"Held", num(s.Held)},
		{"Remaining", num(s.Remaining)},
	}
	rows = append(rows, ticketRows(s.Tickets, now)...)
	rows = append(rows, [2]string{"Ready", ready}, [2]string{"Updated", updated})
	for _, row := range rows {
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}

// ticketRows are the detail rows of the tickets service's figures: mails,
// check-in, then one row per gate.
func ticketRows(t *ticketsv1alpha1.TicketsStatus, now time.Time) [][2]string {
	if t == nil {
		return [][2]string{{"Tickets", none}, {"Emails", none}, {"Checked in", none}}
	}
	rows := [][2]string{
		{"Tickets", fmt.Sprint(t.Tickets)},
		{"Emails", fmt.Sprintf("%d sent, %d pending (%d failing)", t.EmailsSent, t.EmailsPending, t.EmailsFailing)},
		{"Checked in", fmt.Sprintf("%d of %d tickets, %d in the last minute, %d conflicts", t.CheckedIn, t.Tickets, t.LastMinute, t.Conflicts)},
	}
	for _, g := range t.Gates {
		rows = append(rows, [2]string{"Gate " + g.Gate, fmt.Sprintf("%d admitted (%d offline)", g.Admitted, g.Offline)})
	}
	if !t.UpdatedAt.IsZero() {
		rows = append(rows, [2]string{"Tickets updated", timestamp(t.UpdatedAt) + " (" + ago(&t.UpdatedAt, now) + ")"})
	}
	return rows
}

func num(n *int64) string {
	if n == nil {
		return none
	}
	return fmt.Sprint(*n)
}

func eta(secs *int64) string {
	if secs == nil {
		return none
	}
	return duration.HumanDuration(time.Duration(*secs) * time.Second)
}

// ago is how long before now t was, as kubectl prints ages.
func ago(t *metav1.Time, now time.Time) string {
	if t == nil {
		return none
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}

func timestamp(t metav1.Time) string { return t.UTC().Format(time.RFC3339) }
