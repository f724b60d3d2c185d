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
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// crdFile is the generated CRD (make manifests), the schema the API server
// defaults TicketEvents with.
const crdFile = "../../config/crd/bases/tickets.ticketfair.io_ticketevents.yaml"

// crdSchema returns the openAPIV3Schema of the TicketEvent CRD's one version.
func crdSchema(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%s: %d versions, the test reads one", crdFile, len(crd.Spec.Versions))
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// crdDefaults lists every default of the schema by its path (spec.holds.ttl).
func crdDefaults(schema map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(n map[string]any, path string)
	walk = func(n map[string]any, path string) {
		if d, ok := n["default"]; ok {
			out[path] = d
		}
		if props, ok := n["properties"].(map[string]any); ok {
			for k, v := range props {
				if m, ok := v.(map[string]any); ok {
					walk(m, strings.TrimPrefix(path+"."+k, "."))
				}
			}
		}
		if items, ok := n["items"].(map[string]any); ok {
			walk(items, path+"[]")
		}
	}
	walk(schema, "")
	return out
}

// crdField returns the schema node at path (spec.payment.timeout).
func crdField(t *testing.T, schema map[string]any, path string) map[string]any {
	t.Helper()
	n := schema
	for _, k := range strings.Split(path, ".") {
		props, _ := n["properties"].(map[string]any)
		next, ok := props[k].(map[string]any)
		if !ok {
			t.Fatalf("%s: no %s in the CRD", path, k)
		}
		n = next
	}
	return n
}

// tagDefault is the default tag of a workload config field.
type tagDefault struct {
	in    any // a value of the config struct
	field string
}

func (d tagDefault) String() string { return fmt.Sprintf("%T.%s", d.in, d.field) }

// TestCRDDefaultsMatchConfig: every +kubebuilder:default marker of the
// TicketEvent CRD states the same default as the workload config field it is
// rendered into (its default struct tag), or, for the autoscaling settings,
// which are no workload's configuration, as render's fallback constant. A
// default added to the CRD without an entry here fails the test, so the two
// cannot drift apart unnoticed.
func TestCRDDefaultsMatchConfig(t *testing.T) {
	fields := map[string]tagDefault{
		"spec.admission.maxActive":        {config.Admission{}, "MaxActive"},
		"spec.admission.ratePerSecond":    {config.Admission{}, "RatePerSecond"},
		"spec.admission.tickInterval":     {config.Admission{}, "TickInterval"},
		"spec.admission.tokenTTL":         {config.Admission{}, "TokenTTL"},
		"spec.admission.claimTimeout":     {config.Admission{}, "ClaimTimeout"},
		"spec.admission.selectionWindow":  {config.Admission{}, "SelectionWindow"},
		"spec.admission.preQueue":         {config.Admission{}, "PreQueue"},
		"spec.holds.ttl":                  {config.Booking{}, "HoldTTL"},
		"spec.holds.maxSeatsPerCustomer":  {config.Booking{}, "MaxSeatsPerCustomer"},
		"spec.identity.issuer":            {config.Identity{}, "IdentityIssuer"},
		"spec.identity.audience":          {config.Identity{}, "IdentityAudience"},
		"spec.redis.mode":                 {config.Redis{}, "RedisMode"},
		"spec.kafka.ticketIssuedTopic":    {config.Kafka{}, "TopicTicketIssued"},
		"spec.kafka.refundRequestedTopic": {config.Kafka{}, "TopicRefundRequested"},
		// spec.botProtection
		"spec.botProtection.proofOfWork.difficulty":        {config.ProofOfWork{}, "PowDifficulty"},
		"spec.botProtection.proofOfWork.ttl":               {config.ProofOfWork{}, "PowTTL"},
		"spec.botProtection.proofOfWork.adaptiveThreshold": {config.ProofOfWork{}, "PowAdaptiveThreshold"},
		"spec.botProtection.proofOfWork.step":              {config.ProofOfWork{}, "PowAdaptiveStep"},
		"spec.botProtection.proofOfWork.maxDifficulty":     {config.ProofOfWork{}, "PowMaxDifficulty"},
		"spec.botProtection.proofOfWork.subjectPrefix":     {config.ProofOfWork{}, "PowSubjectPrefix"},
		"spec.botProtection.rateLimits.window":             {config.RateLimits{}, "RateLimitWindow"},
		"spec.botProtection.rateLimits.join.perIdentity":   {config.RateLimits{}, "JoinPerIdentity"},
		"spec.botProtection.rateLimits.join.perNetwork":    {config.RateLimits{}, "JoinPerNetwork"},
		"spec.botProtection.rateLimits.poll.perIdentity":   {config.RateLimits{}, "PollPerIdentity"},
		"spec.botProtection.rateLimits.poll.perNetwork":    {config.RateLimits{}, "PollPerNetwork"},
		"spec.botProtection.rateLimits.hold.perIdentity":   {config.RateLimits{}, "HoldPerIdentity"},
		"spec.botProtection.rateLimits.hold.perNetwork":    {config.RateLimits{}, "HoldPerNetwork"},
		// spec.delivery and spec.gates
		"spec.delivery.mail.smtp.port": {config.Mail{}, "SMTPPort"},
		"spec.delivery.mail.smtp.tls":  {config.Mail{}, "SMTPTLS"},
		"spec.delivery.mail.workers":   {config.Mail{}, "Workers"},
		"spec.gates.transfers.max":     {config.Gate{}, "MaxTransfers"},
		"spec.gates.transfers.cutoff":  {config.Gate{}, "TransferCutoff"},
	}
	constants := map[string]int32{}
	for _, w := range []string{"queue", "booking"} {
		constants["spec."+w+".autoscaling.minReplicas"] = defaultMinReplicas
		constants["spec."+w+".autoscaling.targetCPUUtilizationPercentage"] = defaultTargetCPUUtilizationPercent
	}

	schema := crdSchema(t)
	defaults := crdDefaults(schema)
	for path, crd := range defaults {
		switch {
		case reflect.DeepEqual(crd, map[string]any{}):
			// An object defaulted to {} so that its own fields' defaults apply.
		case strings.HasSuffix(path, "SecretRef.name") && crd == "":
			// core/v1 LocalObjectReference's own marker, not ticketfair's.
		case constants[path] != 0:
			if got := fmt.Sprint(crd); got != strconv.Itoa(int(constants[path])) {
				t.Errorf("%s: CRD default %s, render's fallback %d", path, got, constants[path])
			}
		default:
			f, ok := fields[path]
			if !ok {
				t.Errorf("%s: CRD default %v has no workload config field here to be compared with", path, crd)
				continue
			}
			if err := sameDefault(f, crd); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
	}
	// A description that states the default ("Default 5000; at least 1.")
	// states the marker's.
	stated := regexp.MustCompile(`\bDefault ([^\s;,]*[^\s;,.])`)
	for path, crd := range defaults {
		if strings.Contains(path, "[]") {
			continue // crdField does not descend into items
		}
		desc, _ := crdField(t, schema, path)["description"].(string)
		if m := stated.FindStringSubmatch(strings.Join(strings.Fields(desc), " ")); m != nil && m[1] != fmt.Sprint(crd) {
			t.Errorf("%s: the description says Default %s, the marker %v", path, m[1], crd)
		}
	}
	for path := range fields {
		if _, ok := defaults[path]; !ok {
			t.Errorf("%s: no +kubebuilder:default in the CRD, though %s has a default", path, fields[path])
		}
	}
	for path := range constants {
		if _, ok := defaults[path]; !ok {
			t.Errorf("%s: no +kubebuilder:default in the CRD", path)
		}
	}
}

// sameDefault compares a CRD default with a field's default tag, both read
// as the field's type: durations as durations, enums without regard to case
// (render lowercases them).
func sameDefault(f tagDefault, crd any) error {
	sf, ok := reflect.TypeOf(f.in).FieldByName(f.field)
	if !ok {
		return fmt.Errorf("%s does not exist", f)
	}
	tag, ok := sf.Tag.Lookup("default")
	if !ok {
		return fmt.Errorf("%s has no default tag, the CRD has %v", f, crd)
	}
	want := fmt.Sprint(crd)
	switch {
	case sf.Type == reflect.TypeOf(time.Duration(0)):
		a, err1 := time.ParseDuration(tag)
		b, err2 := time.ParseDuration(want)
		if err1 != nil || err2 != nil || a != b {
			return fmt.Errorf("%s default %q, CRD %q", f, tag, want)
		}
	case sf.Type.Kind() == reflect.String:
		if !strings.EqualFold(tag, want) {
			return fmt.Errorf("%s default %q, CRD %q", f, tag, want)
		}
	default:
		if tag != want {
			return fmt.Errorf("%s default %q, CRD %q", f, tag, want)
		}
	}
	return nil
}

// A default computed from another value has no marker but a description.
// spec.payment.timeout deliberately has no CRD default: unset, it follows
// holds.ttl (config.DefaultPaymentTimeout). The fraction the description
// and booking's usage text state is the one the function computes, the
// example is right, and render applies it to an unset timeout.
func TestPaymentTimeoutDefaultDescribed(t *testing.T) {
	schema := crdSchema(t)
	timeout := crdField(t, schema, "spec.payment.timeout")
	if d, ok := timeout["default"]; ok {
		t.Fatalf("spec.payment.timeout has the CRD default %v; it must follow holds.ttl instead", d)
	}
	desc, _ := timeout["description"].(string)
	desc = strings.Join(strings.Fields(desc), " ")
	m := regexp.MustCompile(`Default: (\d+)/(\d+) of holds\.ttl \((\S+) for the default (\S+)\)`).FindStringSubmatch(desc)
	if m == nil {
		t.Fatalf("spec.payment.timeout description does not state its default as N/M of holds.ttl (X for the default Y): %q", desc)
	}
	num, _ := strconv.Atoi(m[1])
	den, _ := strconv.Atoi(m[2])
	for _, ttl := range []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 7*time.Minute + 30*time.Second, time.Hour} {
		if got, want := config.DefaultPaymentTimeout(ttl), ttl*time.Duration(num)/time.Duration(den); got != want {
			t.Errorf("DefaultPaymentTimeout(%s) = %s, the CRD says %d/%d of it: %s", ttl, got, num, den, want)
		}
	}
	sf, _ := reflect.TypeOf(config.Booking{}).FieldByName("PaymentTimeout")
	if _, ok := sf.Tag.Lookup("default"); ok {
		t.Error("config.Booking.PaymentTimeout has a default tag; its default is computed from the hold TTL")
	}
	if frac := m[1] + "/" + m[2] + " of the hold TTL"; !strings.Contains(sf.Tag.Get("usage"), frac) {
		t.Errorf("TICKETFAIR_PAYMENT_TIMEOUT's usage does not say %q: %q", frac, sf.Tag.Get("usage"))
	}

	example, err1 := time.ParseDuration(m[3])
	holdDefault, err2 := time.ParseDuration(m[4])
	if err1 != nil || err2 != nil {
		t.Fatalf("description example %q for %q: %v %v", m[3], m[4], err1, err2)
	}
	if crd := fmt.Sprint(crdField(t, schema, "spec.holds.ttl")["default"]); crd != m[4] {
		t.Errorf("the description's default hold TTL %s is not the CRD's %s", m[4], crd)
	}
	if got := config.DefaultPaymentTimeout(holdDefault); got != example {
		t.Errorf("description: %s for the default %s; DefaultPaymentTimeout gives %s", m[3], m[4], got)
	}

	// Render applies it when only holds.ttl is set, and when neither is.
	for _, ttl := range []*metav1.Duration{nil, {Duration: 3 * time.Minute}} {
		te := event()
		te.Spec.Holds.TTL = ttl
		o, err := Render(te, Options{Image: "img"})
		if err != nil {
			t.Fatal(err)
		}
		hold := holdDefault
		if ttl != nil {
			hold = ttl.Duration
		}
		if got, want := o.ConfigMaps[Booking].Data["TICKETFAIR_PAYMENT_TIMEOUT"], config.DefaultPaymentTimeout(hold).String(); got != want {
			t.Errorf("holds.ttl %v: rendered payment timeout %q, want %q", ttl, got, want)
		}
	}
}
