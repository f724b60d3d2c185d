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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// The API server accepts the CRD: every CEL rule compiles, and the rules'
// estimated costs (each rule's, times the most items it may run on, and
// the schema's total) stay within its budgets. The venue's rules on rows
// are what bounds seatRows and the rows' seat lists.
func TestCRDRulesWithinCostBudget(t *testing.T) {
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		t.Fatal(err)
	}
	crd.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	var in apiextensionsinternal.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &in, nil); err != nil {
		t.Fatal(err)
	}
	for _, e := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), &in) {
		t.Error(e)
	}
}

// venueSampleRaw is the venue sample of config/samples, as the API server
// reads it.
func venueSampleRaw(t *testing.T) map[string]any {
	t.Helper()
	for _, s := range sampleTicketEvents(t) {
		if strings.Contains(s.where, "tickets_v1alpha1_ticketevent_venue.yaml") {
			return s.raw
		}
	}
	t.Fatal("config/samples/tickets_v1alpha1_ticketevent_venue.yaml: no TicketEvent")
	return nil
}

// Each CEL rule of spec.seating, against the CRD: a seating it accepts, and
// one it rejects with a message that names the field.
func TestVenueCELRules(t *testing.T) {
	v := newCRDValidator(t)
	base := venueSampleRaw(t)
	cases := venueCELCases()
	objs := map[string]map[string]any{}
	for _, c := range cases {
		var seating map[string]any
		j, err := yaml.YAMLToJSON([]byte(c.seating))
		if err == nil {
			err = utiljson.Unmarshal(j, &seating)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		objs[c.name] = runtime.DeepCopyJSON(base)
		objs[c.name]["spec"].(map[string]any)["seating"] = seating
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := runtime.DeepCopyJSON(objs[c.name])
			errs := v.admit(obj)
			errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
			var got error
			if agg := errs.ToAggregate(); agg != nil {
				got = agg
			}
			if got == nil && c.want != "" {
				// What CEL cannot afford, the mapping reports.
				got = renderRaw(t, obj)
			}
			switch {
			case c.want == "" && got != nil:
				t.Fatalf("rejected: %v", got)
			case c.want != "" && got == nil:
				t.Fatalf("accepted, want %q", c.want)
			case c.want != "" && !strings.Contains(got.Error(), c.want):
				t.Fatalf("got %v, want %q", got, c.want)
			}
		})
	}
	// On a real API server (envtest; skipped without its binaries) each
	// rule decides the same.
	t.Run("apiserver", func(t *testing.T) {
		_, cfg := testenv.Kube(t)
		cl, err := client.New(cfg, client.Options{Scheme: scheme(t)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(objs[c.name])}
			u.SetNamespace("default")
			err := cl.Create(context.Background(), u, client.DryRunAll)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s: rejected: %v", c.name, err)
			case c.want != "" && err == nil && renderRaw(t, u.Object) == nil:
				t.Errorf("%s: accepted, want %q", c.name, c.want)
			case c.want != "" && err != nil && !strings.Contains(err.Error(), c.want):
				t.Errorf("%s: got %v, want %q", c.name, err, c.want)
			}
		}
	})
}

type venueCELCase struct {
	name, seating string
	want          string // "" accepted; else in the error
}

func venueCELCases() []venueCELCase {
	const cats = `categories: [{name: "1", price: "10"}, {name: "2", price: "5.50"}]`
	return []venueCELCase{
		{"venue", cats + `
sections:
  - {name: F, kind: Standing, category: "1", capacity: 100}
  - name: A
    category: "1"
    seatRows:
      - {name: "1", seats: 10, gaps: [5], wheelchair: [1, 6], companion: [2, 7], blocked: [10], aisle: [5]}
      - {name: "2", seats: 10, numbering: RightToLeft, first: 11, wheelchair: [20], companion: [19], restrictedView: [11]}
      - {name: "3", seats: 10, numbering: Odd, wheelchair: [9], companion: [7, 11], category: "2"}
      - {name: "4", seats: 10, numbering: Even, first: 4, blocked: [22], wheelchair: [4], companion: [6]}
  - {name: B, category: "2", rows: 2, seatsPerRow: 5}`, ""},
		{"shorthand", `sections: [{name: A, price: "1", rows: 2, seatsPerRow: 3}]`, ""},
		{"venueFrom", `venueFrom: {configMapKeyRef: {name: arena, key: venue.json}}`, ""},

		{"neither sections nor venueFrom", `{}`, "seating needs exactly one of seating.sections and seating.venueFrom"},
		{"sections and venueFrom", `{venueFrom: {configMapKeyRef: {name: a, key: v}}, sections: [{name: A, price: "1", rows: 1, seatsPerRow: 1}]}`,
			"seating needs exactly one of seating.sections and seating.venueFrom"},
		{"categories beside venueFrom", cats + "\nvenueFrom: {configMapKeyRef: {name: a, key: v}}", "seating.categories belong in the venue of seating.venueFrom"},
		{"shorthand without seatsPerRow", `sections: [{name: A, price: "1", rows: 2}]`, "seating.sections[] need price, rows and seatsPerRow"},
		{"shorthand with a category", `sections: [{name: A, price: "1", rows: 1, seatsPerRow: 1, category: "1"}]`,
			"seating.sections[].kind, category, rank, capacity, seatRows, mapX and mapY are the venue model's"},
		{"venue with a price", cats + "\nsections: [{name: A, price: \"1\", category: \"1\", rows: 1, seatsPerRow: 1}]", "seating.sections[].price is the shorthand's"},
		{"unknown section category", cats + "\nsections: [{name: A, category: \"9\", rows: 1, seatsPerRow: 1}]", "seating.sections[].category must name one of seating.categories"},
		{"unknown row category", cats + "\nsections: [{name: A, category: \"1\", seatRows: [{name: \"1\", seats: 1, category: \"9\"}]}]",
			"seating.sections[].seatRows[].category must name one of seating.categories"},
		{"no category", cats + "\nsections: [{name: A, seatRows: [{name: \"1\", seats: 1, category: \"1\"}, {name: \"2\", seats: 1}]}]",
			"seating.sections[].category is required, unless each of the section's seatRows names its category"},
		{"row categories suffice", cats + "\nsections: [{name: A, seatRows: [{name: \"1\", seats: 1, category: \"1\"}]}]", ""},
		{"too many places", `sections: [{name: A, price: "1", rows: 1000, seatsPerRow: 1000}, {name: B, price: "1", rows: 1000, seatsPerRow: 1000}, {name: C, price: "1", rows: 1, seatsPerRow: 1}]`,
			"seating.sections must hold at most 2000000 places"},
		{"blocked seats do not count", cats + `
sections:
  - {name: A, category: "1", rows: 1000, seatsPerRow: 1000}
  - {name: B, category: "1", rows: 999, seatsPerRow: 1000}
  - {name: C, category: "1", seatRows: [{name: "1", seats: 1000, blocked: [1]}, {name: "2", seats: 1}]}`, ""},
		{"standing without capacity", cats + "\nsections: [{name: F, kind: Standing, category: \"1\"}]", "seating.sections[].capacity is required for a standing section"},
		{"seated with capacity", cats + "\nsections: [{name: A, category: \"1\", capacity: 5, rows: 1, seatsPerRow: 1}]", "seating.sections[].capacity is only for a standing section"},
		{"standing with rows", cats + "\nsections: [{name: F, kind: Standing, category: \"1\", capacity: 5, seatRows: [{name: \"1\", seats: 1}]}]",
			"seating.sections[] of kind Standing have a capacity, not seatRows, rows or seatsPerRow"},
		{"rows without seatsPerRow", cats + "\nsections: [{name: A, category: \"1\", rows: 2}]", "seating.sections[].rows and seatsPerRow go together"},
		{"seatRows and rows", cats + "\nsections: [{name: A, category: \"1\", rows: 1, seatsPerRow: 1, seatRows: [{name: \"1\", seats: 1}]}]",
			"seating.sections[].seatRows and rows give a section's rows two ways"},
		{"seated without rows", cats + "\nsections: [{name: A, category: \"1\"}]", "seating.sections[] of kind Seated need seatRows"},
		{"odd first even", row(`{name: "1", seats: 4, numbering: Odd, first: 2}`), "seating.sections[].seatRows[].first must be odd for numbering Odd"},
		{"even first odd", row(`{name: "1", seats: 4, numbering: Even, first: 3}`), "seating.sections[].seatRows[].first must be even for numbering Even"},
		{"gap at the end", row(`{name: "1", seats: 4, gaps: [4]}`), "seating.sections[].seatRows[].gaps must be positions 1 to seats-1"},
		{"blocked beyond the row", row(`{name: "1", seats: 4, blocked: [5]}`), "seating.sections[].seatRows[].blocked must be seat numbers of the row"},
		{"wheelchair of the wrong parity", row(`{name: "1", seats: 4, numbering: Odd, wheelchair: [2]}`), "seating.sections[].seatRows[].wheelchair must be seat numbers of the row"},
		{"companion before first", row(`{name: "1", seats: 4, first: 5, wheelchair: [5], companion: [4]}`), "seating.sections[].seatRows[].companion must be seat numbers of the row"},
		{"restrictedView beyond a right-to-left row", row(`{name: "1", seats: 4, numbering: RightToLeft, restrictedView: [0]}`), "seating.sections[].seatRows[].restrictedView must be seat numbers of the row"},
		{"aisle of the wrong parity", row(`{name: "1", seats: 4, numbering: Even, aisle: [3]}`), "seating.sections[].seatRows[].aisle must be seat numbers of the row"},
		{"companion apart", row(`{name: "1", seats: 6, wheelchair: [1], companion: [3]}`), "seating.sections[].seatRows[].companion seats must be next to a wheelchair place"},
		{"companion without wheelchair", row(`{name: "1", seats: 6, companion: [3]}`), "seating.sections[].seatRows[].companion seats must be next to a wheelchair place"},
		{"companion across a gap", row(`{name: "1", seats: 6, gaps: [3], wheelchair: [3], companion: [4]}`), "seating.sections[].seatRows[].companion seats must be next to a wheelchair place"},
		{"companion across a right-to-left gap", row(`{name: "1", seats: 6, numbering: RightToLeft, gaps: [3], wheelchair: [4], companion: [3]}`),
			"seating.sections[].seatRows[].companion seats must be next to a wheelchair place"},
		{"companion beside a right-to-left gap", row(`{name: "1", seats: 6, numbering: RightToLeft, gaps: [3], wheelchair: [4], companion: [5]}`), ""},
		{"companion two odd seats on", row(`{name: "1", seats: 6, numbering: Odd, wheelchair: [5], companion: [3, 7]}`), ""},
		{"companion across an odd gap", row(`{name: "1", seats: 6, numbering: Odd, gaps: [2], wheelchair: [5], companion: [3]}`),
			"seating.sections[].seatRows[].companion seats must be next to a wheelchair place"},
		{"blocked wheelchair", row(`{name: "1", seats: 6, blocked: [1], wheelchair: [1]}`), "seating.sections[].seatRows[].blocked seats cannot be wheelchair or companion places"},
		{"blocked companion", row(`{name: "1", seats: 6, blocked: [2], wheelchair: [1], companion: [2]}`), "seating.sections[].seatRows[].blocked seats cannot be wheelchair or companion places"},
		{"companion in a wheelchair place", row(`{name: "1", seats: 6, wheelchair: [1, 2], companion: [2]}`), "seating.sections[].seatRows[].companion seats cannot also be wheelchair places"},
		{"duplicate row", row(`{name: "1", seats: 1}, {name: "1", seats: 2}`), "Duplicate value"},
		{"duplicate category", `categories: [{name: "1", price: "1"}, {name: "1", price: "2"}]` + "\nsections: [{name: A, category: \"1\", rows: 1, seatsPerRow: 1}]", "Duplicate value"},
		{"bad row name", row(`{name: "123456789", seats: 1}`), "seatRows[0].name"},
		{"seats out of range", row(`{name: "1", seats: 1001}`), "seatRows[0].seats"},
	}
}

// row is a venue seating of one section with the given rows.
func row(rows string) string {
	return `categories: [{name: "1", price: "10"}]` + "\nsections: [{name: A, category: \"1\", seatRows: [" + rows + "]}]"
}

// renderRaw renders an admitted TicketEvent and returns the error.
func renderRaw(t *testing.T, obj map[string]any) error {
	t.Helper()
	var te ticketsv1alpha1.TicketEvent
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &te); err != nil {
		t.Fatal(err)
	}
	_, err := Render(&te, Options{Image: "img"})
	return err
}

// A spec in the venue model renders TICKETFAIR_VENUE, the JSON of
// config.Venue, for booking and the migration Job; the shorthand keeps its
// TICKETFAIR_SEATING and its Job name.
func TestVenueRendered(t *testing.T) {
	short := event()
	o, err := Render(short, Options{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("img\nA:10.00:2:3;B:5:1:4"))
	if want := "te-migrate-" + hex.EncodeToString(sum[:])[:8]; o.MigrationJob.Name != want {
		t.Fatalf("shorthand Job %s, want %s as before the venue model", o.MigrationJob.Name, want)
	}
	if d := o.ConfigMaps[Booking].Data; d["TICKETFAIR_SEATING"] != "A:10.00:2:3;B:5:1:4" || d["TICKETFAIR_VENUE"] != "" || d["TICKETFAIR_VENUE_FILE"] != "" {
		t.Fatalf("shorthand: %v", d)
	}

	te := event()
	te.Spec.Seating = ticketsv1alpha1.Seating{
		Categories: []ticketsv1alpha1.PriceCategory{{Name: "1", Price: "89.50"}, {Name: "2", Price: "59"}},
		Sections: []ticketsv1alpha1.Section{
			{Name: "Floor", Kind: ticketsv1alpha1.SectionStanding, Category: "2", Capacity: 100, MapX: ptr.To(int32(5)), MapY: ptr.To(int32(-5))},
			{Name: "A", Category: "1", Rank: 2, SeatRows: []ticketsv1alpha1.SeatRow{
				{Name: "1", Seats: 10, Numbering: ticketsv1alpha1.NumberRightToLeft, First: 3, Gaps: []int32{5}, Blocked: []int32{12},
					Wheelchair: []int32{3}, Companion: []int32{4}, RestrictedView: []int32{6}, Aisle: []int32{7}, Category: "2",
					MapX: ptr.To(int32(1)), MapY: ptr.To(int32(2)), MapDX: ptr.To(int32(3)), MapDY: ptr.To(int32(4))},
				{Name: "2", Seats: 4, Numbering: ticketsv1alpha1.NumberEven},
			}},
			{Name: "B", Category: "2", Rows: 2, SeatsPerRow: 3},
		},
	}
	o, err = Render(te, Options{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	d := o.ConfigMaps[Booking].Data
	if d["TICKETFAIR_SEATING"] != "" || d["TICKETFAIR_VENUE_FILE"] != "" {
		t.Fatalf("venue: %v", d)
	}
	var got config.Venue
	if err := json.Unmarshal([]byte(d["TICKETFAIR_VENUE"]), &got); err != nil {
		t.Fatalf("TICKETFAIR_VENUE %q: %v", d["TICKETFAIR_VENUE"], err)
	}
	f := func(v float64) *float64 { return &v }
	want := config.Venue{
		Categories: []config.Category{{Name: "1", Price: "89.50"}, {Name: "2", Price: "59"}},
		Sections: []config.VenueSection{
			{Name: "Floor", Kind: config.SectionStanding, Category: "2", Capacity: 100, X: f(5), Y: f(-5)},
			{Name: "A", Kind: config.SectionSeated, Category: "1", Rank: 2, Rows: []config.VenueRow{
				{Name: "1", Seats: 10, Numbering: config.NumberRightToLeft, First: 3, Gaps: []int{5}, Blocked: []int{12},
					Wheelchair: []int{3}, Companion: []int{4}, RestrictedView: []int{6}, Aisle: []int{7}, Category: "2",
					X: f(1), Y: f(2), DX: f(3), DY: f(4)},
				{Name: "2", Seats: 4, Numbering: config.NumberEven},
			}},
			{Name: "B", Kind: config.SectionSeated, Category: "2", Rows: []config.VenueRow{{Name: "1", Seats: 3}, {Name: "2", Seats: 3}}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TICKETFAIR_VENUE\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	// The Job reads booking's ConfigMap, and its name covers the venue.
	if !envFromConfigMap(o.MigrationJob.Spec.Template.Spec.Containers[0].Env, "TICKETFAIR_VENUE", Name(te, Booking)) {
		t.Fatal("the migration Job has no TICKETFAIR_VENUE")
	}
	if o.MigrationJob.Name == "te-migrate-"+hex.EncodeToString(sum[:])[:8] {
		t.Fatal("the Job name does not cover the venue")
	}
	other := te.DeepCopy()
	other.Spec.Seating.Sections[1].SeatRows[1].Seats = 5
	if MigrationJobName(other, Options{Image: "img"}) == o.MigrationJob.Name {
		t.Fatal("another venue, the same Job name")
	}
	if n := SeatsTotal(te); n != 100+10-1+4+6 {
		t.Fatalf("SeatsTotal %d, want standing 100 + seats 20 - blocked 1", n)
	}
}

func envFromConfigMap(env []corev1.EnvVar, name, configMap string) bool {
	for _, e := range env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name == configMap {
			return true
		}
	}
	return false
}

// seating.venueFrom mounts the ConfigMap's key read-only into booking's and
// the migration Job's pods, and names the file in TICKETFAIR_VENUE_FILE.
func TestVenueFromMounted(t *testing.T) {
	te := event()
	te.Spec.Seating = ticketsv1alpha1.Seating{VenueFrom: &ticketsv1alpha1.VenueSource{
		ConfigMapKeyRef: ticketsv1alpha1.ConfigMapKey{Name: "arena", Key: "venue.json"}}}
	o, err := Render(te, Options{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	d := o.ConfigMaps[Booking].Data
	if d["TICKETFAIR_VENUE_FILE"] != VenueMountPath || d["TICKETFAIR_SEATING"] != "" || d["TICKETFAIR_VENUE"] != "" {
		t.Fatalf("venueFrom: %v", d)
	}
	for what, pod := range map[string]corev1.PodSpec{
		"migration Job": o.MigrationJob.Spec.Template.Spec,
		"booking":       o.Deployments[Booking].Spec.Template.Spec,
	} {
		if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != "arena" ||
			!reflect.DeepEqual(pod.Volumes[0].ConfigMap.Items, []corev1.KeyToPath{{Key: "venue.json", Path: "venue.json"}}) {
			t.Errorf("%s: volumes %+v", what, pod.Volumes)
		}
		m := pod.Containers[0].VolumeMounts
		if len(m) != 1 || m[0].Name != pod.Volumes[0].Name || !m[0].ReadOnly || m[0].MountPath+"/venue.json" != VenueMountPath {
			t.Errorf("%s: mounts %+v", what, m)
		}
		if !envFromConfigMap(pod.Containers[0].Env, "TICKETFAIR_VENUE_FILE", Name(te, Booking)) {
			t.Errorf("%s: no TICKETFAIR_VENUE_FILE", what)
		}
	}
	for _, c := range []Component{Queue, Relay, Tickets} {
		if v := o.Deployments[c].Spec.Template.Spec.Volumes; len(v) != 0 {
			t.Errorf("%s mounts %+v", c, v)
		}
	}
	other := te.DeepCopy()
	other.Spec.Seating.VenueFrom.ConfigMapKeyRef.Key = "other.json"
	if MigrationJobName(other, Options{Image: "img"}) == o.MigrationJob.Name {
		t.Fatal("another ConfigMap key, the same Job name")
	}
	if n := SeatsTotal(te); n != 0 {
		t.Fatalf("SeatsTotal %d: the operator does not read the ConfigMap", n)
	}
}
