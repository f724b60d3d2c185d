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

package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestUnknownCommandFails(t *testing.T) {
	if code := run([]string{"no-such-command"}); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if code := run(nil); code != 2 {
		t.Fatalf("no command: exit code %d, want 2", code)
	}
	if code := run([]string{"help"}); code != 0 {
		t.Fatalf("help: exit code %d, want 0", code)
	}
}

// TestServicesOnly: the production binary carries the services and none
// of the tools of development (they are in ticketfair-dev): no embedded
// Kafka broker, local sale, load generator, benchmark, fault injection,
// browser driver or test helper.
func TestServicesOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/ticketfair/ticketfair/"
	forbidden := []string{
		mod + "internal/localsvc", mod + "internal/faultproxy", mod + "internal/testenv",
		mod + "workloads/internal/demo", mod + "workloads/internal/loadtest", mod + "workloads/internal/bench",
		mod + "workloads/internal/chaos",
		"github.com/twmb/franz-go/pkg/kfake", "github.com/chromedp/", "testing",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %q", out)
	}
	for _, p := range deps {
		for _, f := range forbidden {
			if p == f || strings.HasPrefix(p, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("the service binary depends on %s", p)
			}
		}
		// Test helpers and tools of the project (testenv, httpapitest,
		// openapitest, ...), listed or not.
		if strings.HasPrefix(p, mod) && !slices.Contains(forbidden, p) && strings.Contains(p[len(mod):], "test") {
			t.Errorf("the service binary depends on the test helper %s", p)
		}
	}
}
