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

package v1alpha1

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// `kubectl explain` shows a field's description, not its schema: every
// default and bound of the spec's own fields must be in the description.
func TestDescriptionsStateDefaultsAndBounds(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "tickets.ticketfair.io_ticketevents.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema["properties"].(map[string]any)["spec"].(map[string]any)
	checked := 0
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		desc, _ := s["description"].(string)
		var want []string
		if d, ok := s["default"]; ok {
			if _, obj := d.(map[string]any); !obj {
				want = append(want, fmt.Sprintf("Default %v", d))
			}
		}
		for _, k := range []string{"minimum", "maximum", "minItems", "maxItems", "maxLength"} {
			if v, ok := s[k]; ok {
				want = append(want, fmt.Sprint(v))
			}
		}
		for _, w := range want {
			checked++
			if !regexp.MustCompile(`(^|[\s(])` + regexp.QuoteMeta(w) + `\b`).MatchString(desc) {
				t.Errorf("%s: the description does not say %q: %q", path, w, desc)
			}
		}
		props, _ := s["properties"].(map[string]any)
		if items, ok := s["items"].(map[string]any); ok {
			props, _ = items["properties"].(map[string]any)
		}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			// Kubernetes' own types document themselves.
			if n == "resources" || n == "tolerations" || n == "affinity" || strings.HasSuffix(n, "SecretRef") || path == "spec.networkPolicy.ingressFrom" {
				continue
			}
			walk(path+"."+n, props[n].(map[string]any))
		}
	}
	walk("spec", spec)
	if checked < 20 {
		t.Fatalf("only %d defaults and bounds found: is the CRD path right?", checked)
	}
}
