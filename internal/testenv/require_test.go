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

package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// helperUnavailable marks the child run of TestUnavailable.
const helperUnavailable = "TICKETFAIR_TEST_HELPER_UNAVAILABLE"

// TestHelperUnavailable is TestUnavailable's child: a test whose
// dependency is missing.
func TestHelperUnavailable(t *testing.T) {
	if os.Getenv(helperUnavailable) != "1" {
		t.Skip("run by TestUnavailable")
	}
	Unavailable(t, "redis-server", errors.New("not installed"))
	t.Log("went on after Unavailable")
}

// A missing dependency fails a test in CI (or with
// TICKETFAIR_TEST_REQUIRE_SERVICES=1) and skips it elsewhere.
func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		env      []string
		fail     bool
		contains string
	}{
		{[]string{"CI=true"}, true, "redis-server is required in CI but unavailable: not installed"},
		{[]string{"CI=", "TICKETFAIR_TEST_REQUIRE_SERVICES=1"}, true, "required in CI"},
		{[]string{"CI=", "TICKETFAIR_TEST_REQUIRE_SERVICES="}, false, "SKIP: TestHelperUnavailable"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUnavailable$", "-test.v")
		cmd.Env = append(append(os.Environ(), helperUnavailable+"=1"), c.env...)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != c.fail || !strings.Contains(string(out), c.contains) || strings.Contains(string(out), "went on") {
			t.Errorf("%v: failed %v (want %v), output:\n%s", c.env, failed, c.fail, out)
		}
	}
}
