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
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers/render"
)

// The figures are written when one changes, not for a new time stamp
// alone; a failed fetch keeps them and the last reported state.
func TestSaleFigures(t *testing.T) {
	now := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	te := minimalEvent("default", "figures")
	te.Generation = 3
	s := Stats{Waiting: 10, Remaining: 100, Held: 2, Sold: 5, SalesOpen: true, UpdatedAt: now}
	saleFigures(te, &s, nil, now)
	if te.Status.Sale == nil || te.Status.Sale.Waiting != 10 || !te.Status.Sale.UpdatedAt.Time.Equal(now) {
		t.Fatalf("sale %+v", te.Status.Sale)
	}
	c := meta.FindStatusCondition(te.Status.Conditions, ticketsv1alpha1.ConditionSalesOpen)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reasonStatsReported || c.ObservedGeneration != 3 {
		t.Fatalf("SalesOpen %+v", c)
	}

	stamped := te.DeepCopy()
	s.UpdatedAt = now.Add(5 * time.Second)
	saleFigures(stamped, &s, nil, now.Add(5*time.Second))
	if !equality.Semantic.DeepEqual(te.Status, stamped.Status) {
		t.Fatalf("a new time stamp alone changed status: %+v", stamped.Status.Sale)
	}

	changed := te.DeepCopy()
	s.Waiting = 9
	saleFigures(changed, &s, nil, now.Add(10*time.Second))
	if changed.Status.Sale.Waiting != 9 || !changed.Status.Sale.UpdatedAt.Time.Equal(s.UpdatedAt) {
		t.Fatalf("changed figures not taken: %+v", changed.Status.Sale)
	}

	// Before salesOpenAt by the clock, but the queue said open: stays open.
	failed := changed.DeepCopy()
	failed.Spec.SalesOpenAt = metav1.NewTime(now.Add(time.Hour))
	saleFigures(failed, nil, errors.New("status 503"), now)
	c = meta.FindStatusCondition(failed.Status.Conditions, ticketsv1alpha1.ConditionSalesOpen)
	if c.Status != metav1.ConditionTrue || c.Reason != reasonStatsUnavailable || !strings.Contains(c.Message, "503") {
		t.Fatalf("SalesOpen after a failure %+v", c)
	}
	if !equality.Semantic.DeepEqual(failed.Status.Sale, changed.Status.Sale) {
		t.Fatalf("figures lost on a failure: %+v", failed.Status.Sale)
	}
	again := failed.DeepCopy()
	saleFigures(again, nil, errors.New("status 503"), now)
	if !equality.Semantic.DeepEqual(failed.Status, again.Status) {
		t.Fatalf("a second failure changed status: %+v", again.Status.Conditions)
	}
}

// The typed apply configurations carry what render set, never status nor
// a null creationTimestamp.
func TestApplyConfigurationsOmitStatus(t *testing.T) {
	te := provisionable("default", "ac")
	objs, err := render.Render(te, render.Options{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs.All() {
		ac, err := applyConfiguration(obj)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(ac)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		if _, ok := m["status"]; ok {
			t.Errorf("%s %s: status in %s", kind, obj.GetName(), b)
		}
		if strings.Contains(string(b), "creationTimestamp") {
			t.Errorf("%s %s: creationTimestamp in %s", kind, obj.GetName(), b)
		}
		if m["kind"] != kind || m["metadata"].(map[string]any)["name"] != obj.GetName() {
			t.Errorf("%s %s: kind or name lost: %s", kind, obj.GetName(), b)
		}
	}
}
