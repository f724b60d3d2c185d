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
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/internal/testenv"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// sampleTicketEvent is one TicketEvent document found in the repository.
type sampleTicketEvent struct {
	where string // file (and document) it came from
	raw   map[string]any
}

// isTicketEvent matches a document whose top-level kind is TicketEvent (a
// CRD names the kind indented, under spec.names).
var isTicketEvent = regexp.MustCompile(`(?m)^kind:\s*TicketEvent\s*$`)

// sampleTicketEvents finds every TicketEvent the repository shows its
// readers: the YAML files (config/samples, charts, docs, test data) and the
// yaml blocks of the Markdown docs, so a sample that drifts from the CRD or
// from the mapping fails here rather than on a user's kubectl apply.
func sampleTicketEvents(t *testing.T) []sampleTicketEvent {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	fence := regexp.MustCompile("(?ms)^```ya?ml\\s*\\n(.*?)^```")
	var out []sampleTicketEvent
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".yaml" && ext != ".yml" && ext != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		texts := []string{string(b)}
		if ext == ".md" {
			texts = nil
			for _, m := range fence.FindAllStringSubmatch(string(b), -1) {
				texts = append(texts, m[1])
			}
		}
		for _, text := range texts {
			for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
				if !isTicketEvent.MatchString(doc) {
					continue
				}
				// Read as the API server reads a request: integers as int64
				// (sigs.k8s.io/yaml alone makes them float64, which CEL refuses).
				var raw map[string]any
				j, err := yaml.YAMLToJSON([]byte(doc))
				if err == nil {
					err = utiljson.Unmarshal(j, &raw)
				}
				if err != nil {
					t.Errorf("%s (document %d): %v", rel, i+1, err)
					continue
				}
				out = append(out, sampleTicketEvent{where: fmt.Sprintf("%s (document %d)", rel, i+1), raw: raw})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no TicketEvent sample found; config/samples has one")
	}
	return out
}

// crdValidator defaults and validates a TicketEvent as the API server does
// with the CRD (config/crd/bases): the structural schema's defaults, its
// OpenAPI validation and its CEL rules (x-kubernetes-validations). It runs
// in process, so it needs no envtest binaries; TestSamplesMapToConfig also
// creates the samples on a real API server when one is available.
type crdValidator struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

func newCRDValidator(t *testing.T) *crdValidator {
	t.Helper()
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("%s: want one version with a schema", crdFile)
	}
	var internal apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	ss, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return &crdValidator{structural: ss, schema: sv, cel: cel.NewValidator(ss, true, celconfig.PerCallLimit)}
}

// admit defaults obj in place and returns what the API server would reject.
func (v *crdValidator) admit(obj map[string]any) field.ErrorList {
	defaulting.Default(obj, v.structural)
	errs := apiservervalidation.ValidateCustomResource(nil, obj, v.schema)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// TestCRDValidatorRejects: the in-process validation applies the CEL rules
// and the defaults, so TestSamplesMapToConfig's passing samples mean
// something.
func TestCRDValidatorRejects(t *testing.T) {
	v := newCRDValidator(t)
	te := sampleTicketEvents(t)[0].raw
	obj := runtime.DeepCopyJSON(te)
	unstructured.SetNestedField(obj, "10ms", "spec", "admission", "tickInterval")
	if errs := v.admit(obj); !strings.Contains(errs.ToAggregate().Error(), "admission.tickInterval must be between 100ms and 1m") {
		t.Fatalf("tickInterval 10ms: %v", errs)
	}
	obj = runtime.DeepCopyJSON(te)
	unstructured.RemoveNestedField(obj, "spec", "admission", "tickInterval")
	if errs := v.admit(obj); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got, _, _ := unstructured.NestedString(obj, "spec", "admission", "tickInterval"); got != "1s" {
		t.Fatalf("tickInterval defaulted to %q, want the CRD's 1s", got)
	}
}

// TestSamplesMapToConfig feeds every sample TicketEvent of the repository
// through the CRD (defaults and validation, in process and, with envtest,
// on a real API server) and then through the one mapping of the spec to the
// workloads' configuration (Render, whose queue part is
// config.Queue.ApplyTicketEvent, which the queue also applies live). The
// queue's live mapping over its rendered configuration must change
// nothing: operator and queue read a spec the same way.
func TestSamplesMapToConfig(t *testing.T) {
	v := newCRDValidator(t)
	samples := sampleTicketEvents(t)
	admitted := map[string]*ticketsv1alpha1.TicketEvent{}
	for _, s := range samples {
		obj := runtime.DeepCopyJSON(s.raw)
		if errs := v.admit(obj); len(errs) > 0 {
			t.Errorf("%s: the CRD rejects it: %v", s.where, errs.ToAggregate())
			continue
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var te ticketsv1alpha1.TicketEvent
		if err := yaml.UnmarshalStrict(b, &te); err != nil {
			t.Errorf("%s: does not fit the Go types: %v", s.where, err)
			continue
		}
		if te.Namespace == "" {
			te.Namespace = "default" // kubectl apply's, as in the sample's instructions
		}
		checkMapping(t, s.where, &te)
		admitted[s.where] = &te
	}

	// On a real API server (envtest; skipped without its binaries) the
	// samples are accepted, and its defaults map as the in-process ones do.
	t.Run("apiserver", func(t *testing.T) {
		_, cfg := testenv.Kube(t)
		c, err := client.New(cfg, client.Options{Scheme: scheme(t)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			var te ticketsv1alpha1.TicketEvent
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(runtime.DeepCopyJSON(s.raw), &te); err != nil {
				t.Fatal(err)
			}
			te.Namespace = "default"
			if err := c.Create(context.Background(), &te, client.DryRunAll); err != nil {
				t.Errorf("%s: the API server rejects it: %v", s.where, err)
				continue
			}
			if in := admitted[s.where]; in != nil {
				want, err := queueConfig(in)
				got, err2 := queueConfig(&te)
				if err != nil || err2 != nil || !reflect.DeepEqual(want, got) {
					t.Errorf("%s: the API server's defaults map to %+v, the in-process ones to %+v (%v, %v)", s.where, got.Admission, want.Admission, err2, err)
				}
			}
		}
	})
}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := ticketsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// queueConfig is the queue's live configuration of te, as the operator
// renders it over the tag defaults.
func queueConfig(te *ticketsv1alpha1.TicketEvent) (config.Queue, error) {
	var q config.Queue
	if err := config.Defaults(&q); err != nil {
		return q, err
	}
	err := q.ApplyTicketEvent(te.Spec)
	// Only the live part is compared: the rest has no spec mapping here.
	return config.Queue{Admission: q.Admission, SalesOpenAt: q.SalesOpenAt, Phases: q.Phases}, err
}

// checkMapping renders te and checks that every spec.admission value the
// sample states reaches the queue's ConfigMap, and that the queue's live
// mapping of te over what it reads at start changes nothing.
func checkMapping(t *testing.T, where string, te *ticketsv1alpha1.TicketEvent) {
	t.Helper()
	if m := Missing(te); len(m) > 0 {
		t.Errorf("%s: a sample must be complete, missing %v", where, m)
		return
	}
	o, err := Render(te, Options{Image: "img"})
	if err != nil {
		t.Errorf("%s: render: %v", where, err)
		return
	}
	data := o.ConfigMaps[Queue].Data
	var started config.Queue
	if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := data[k]; return v, ok }, &started); err != nil {
		t.Errorf("%s: the queue cannot read its ConfigMap: %v", where, err)
		return
	}
	// Each workload reads its ConfigMap and passes the rules it checks at
	// its start (config's Validate; credentials, from Secrets, aside).
	for _, w := range []struct {
		c   Component
		cfg interface{ Validate() error }
	}{{Queue, &config.Queue{}}, {Booking, &config.Booking{}}, {Relay, &config.Relay{}}, {Tickets, &config.Tickets{}}} {
		data := o.ConfigMaps[w.c].Data
		if err := config.LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := data[k]; return v, ok }, w.cfg); err != nil {
			t.Errorf("%s: %s cannot read its ConfigMap: %v", where, w.c, err)
		} else if err := w.cfg.Validate(); err != nil {
			t.Errorf("%s: %s would refuse its ConfigMap: %v", where, w.c, err)
		}
	}
	a := te.Spec.Admission
	for name, want := range map[string]*time.Duration{
		"tickInterval": durationPtr(a.TickInterval), "tokenTTL": durationPtr(a.TokenTTL),
		"claimTimeout": durationPtr(a.ClaimTimeout), "selectionWindow": durationPtr(a.SelectionWindow),
	} {
		got := map[string]time.Duration{"tickInterval": started.TickInterval, "tokenTTL": started.TokenTTL,
			"claimTimeout": started.ClaimTimeout, "selectionWindow": started.SelectionWindow}[name]
		if want != nil && *want != got {
			t.Errorf("%s: spec.admission.%s %s, the queue starts with %s", where, name, *want, got)
		}
	}
	if int(a.MaxActive) != started.MaxActive || int(a.RatePerSecond) != started.RatePerSecond || a.Paused != started.Paused ||
		!strings.EqualFold(string(a.PreQueue), started.PreQueue) {
		t.Errorf("%s: spec.admission %+v, the queue starts with %+v", where, a, started.Admission)
	}
	if want := te.Spec.SalesOpenAt.UTC().Format(time.RFC3339); started.SalesOpenAt != want {
		t.Errorf("%s: salesOpenAt %s, the queue starts with %q", where, want, started.SalesOpenAt)
	}
	live := started
	if err := live.ApplyTicketEvent(te.Spec); err != nil {
		t.Errorf("%s: the queue's live mapping: %v", where, err)
	} else if !reflect.DeepEqual(live, started) {
		t.Errorf("%s: the live mapping changes what the queue started with:\n%+v\n%+v", where, live.Admission, started.Admission)
	}
}

func durationPtr(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return &d.Duration
}
