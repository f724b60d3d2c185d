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

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// ApplyTicketEvent lays the part of a TicketEvent's spec that the queue
// follows live (spec.admission, spec.salesOpenAt, spec.phases: the fields
// tagged live) over q. It is the one mapping of those fields: the operator
// renders its result into the queue's ConfigMap, and the queue applies it
// over its own configuration on every change of the TicketEvent, so a pod
// that restarts reads exactly what the live pods follow.
//
// A field the spec leaves unset (nil, or the zero value the CRD's minimum
// rules out) keeps q's value: the tag default in the operator, the env/flag
// value in the queue. A value outside the range the CRD documents is an
// error naming the field; the API server rejects such a TicketEvent, so
// only one that bypassed its validation (a Go value, an old CRD) gets here.
// On error q is left unchanged.
func (q *Queue) ApplyTicketEvent(spec v1alpha1.TicketEventSpec) error {
	out := *q
	a := spec.Admission
	var errs []error
	if a.MaxActive > 0 {
		out.MaxActive = int(a.MaxActive)
	} else if a.MaxActive < 0 {
		errs = append(errs, fmt.Errorf("spec.admission.maxActive: %d: must be at least 1", a.MaxActive))
	}
	if a.RatePerSecond > 0 {
		out.RatePerSecond = int(a.RatePerSecond)
	} else if a.RatePerSecond < 0 {
		errs = append(errs, fmt.Errorf("spec.admission.ratePerSecond: %d: must be at least 1", a.RatePerSecond))
	}
	for _, d := range []struct {
		path     string
		src      *time.Duration
		dst      *time.Duration
		min, max time.Duration // max 0: no upper bound
	}{
		// The bounds are the CRD's CEL rules (api/v1alpha1, Admission).
		{"spec.admission.tickInterval", durationOf(a.TickInterval), &out.TickInterval, 100 * time.Millisecond, time.Minute},
		{"spec.admission.tokenTTL", durationOf(a.TokenTTL), &out.TokenTTL, time.Minute, 2 * time.Hour},
		{"spec.admission.claimTimeout", durationOf(a.ClaimTimeout), &out.ClaimTimeout, 5 * time.Second, 0},
		{"spec.admission.selectionWindow", durationOf(a.SelectionWindow), &out.SelectionWindow, 10 * time.Second, 0},
	} {
		if d.src == nil || *d.src == 0 {
			continue
		}
		if err := inRange(d.path, *d.src, d.min, d.max); err != nil {
			errs = append(errs, err)
			continue
		}
		*d.dst = *d.src
	}
	if a.PreQueue != "" {
		// The CRD's enum is Shuffle or FIFO; the workload reads them lower-case.
		out.PreQueue = strings.ToLower(string(a.PreQueue))
	}
	out.Paused = a.Paused
	// Autotune is replaced as a whole: a spec without it turns it off.
	if err := applyAutotune(&out.Admission, a.Autotune); err != nil {
		errs = append(errs, err)
	}
	if !spec.SalesOpenAt.IsZero() {
		out.SalesOpenAt = spec.SalesOpenAt.UTC().Format(time.RFC3339)
	}
	// Phases are replaced, not merged: a spec without phases has none.
	phases, err := queuePhases(spec.Phases)
	if err != nil {
		errs = append(errs, err)
	}
	out.Phases = phases
	if err := errors.Join(errs...); err != nil {
		return err
	}
	*q = out
	return nil
}

// applyAutotune sets dst's autotune fields from spec.admission.autotune
// (nil: off), checked by the CRD's rules.
func applyAutotune(dst *Admission, at *v1alpha1.Autotune) error {
	dst.AutotuneHoldP99, dst.AutotuneMinRate, dst.AutotuneMaxRate = 0, 0, 0
	if at == nil {
		return nil
	}
	var errs []error
	if err := inRange("spec.admission.autotune.targetHoldP99", at.TargetHoldP99.Duration, MinAutotuneHoldP99, MaxAutotuneHoldP99); err != nil {
		errs = append(errs, err)
	}
	if at.MinRatePerSecond < 1 {
		errs = append(errs, fmt.Errorf("spec.admission.autotune.minRatePerSecond: %d: must be at least 1", at.MinRatePerSecond))
	}
	if at.MaxRatePerSecond < at.MinRatePerSecond {
		errs = append(errs, fmt.Errorf("spec.admission.autotune.maxRatePerSecond: %d: must be at least minRatePerSecond (%d)", at.MaxRatePerSecond, at.MinRatePerSecond))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	dst.AutotuneHoldP99, dst.AutotuneMinRate, dst.AutotuneMaxRate = at.TargetHoldP99.Duration, int(at.MinRatePerSecond), int(at.MaxRatePerSecond)
	return nil
}

// queuePhases renders spec.phases as the queue's TICKETFAIR_PHASES: a JSON
// list of Phase ("" without phases), checked by the queue's rules in the
// spec's words.
func queuePhases(src []v1alpha1.SalePhase) (string, error) {
	if len(src) == 0 {
		return "", nil
	}
	out := make([]Phase, 0, len(src))
	for _, p := range src {
		ph := Phase{Name: p.Name, OpensAt: p.OpensAt.UTC(), Sections: p.Sections}
		if p.MaxSeatsPerCustomer != nil {
			ph.MaxSeatsPerCustomer = int(*p.MaxSeatsPerCustomer)
		}
		for _, q := range p.Queues {
			ph.Queues = append(ph.Queues, PhaseQueue{Name: q.Name, Weight: int(q.Weight), Tiers: q.Tiers, AccessCode: q.AccessCode})
		}
		out = append(out, ph)
	}
	if err := CheckPhases(out, true); err != nil {
		return "", Within("spec.phases", err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("spec.phases: %w", err)
	}
	return string(b), nil
}

func durationOf(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return &d.Duration
}

// inRange checks d against [min, max] (max 0: no upper bound), in the
// CRD's words.
func inRange(path string, d, min, max time.Duration) error {
	switch {
	case max > 0 && (d < min || d > max):
		return fmt.Errorf("%s: %s: must be between %s and %s", path, d, short(min), short(max))
	case d < min:
		return fmt.Errorf("%s: %s: must be at least %s", path, d, short(min))
	}
	return nil
}

// short writes 1m rather than time.Duration's 1m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
