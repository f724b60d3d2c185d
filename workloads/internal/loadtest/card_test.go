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

package loadtest

import (
	"regexp"
	"testing"
)

// Each simulated person pays with a card of their own, whose fingerprint
// booking accepts (at most 64 letters, digits, _ or -).
func TestCardFingerprintPerPerson(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	seen := map[string]int32{}
	for _, id := range []int32{0, 1, 2, 10, 11, 1999999, 2147483647} {
		fp := cardFingerprint(id)
		if !valid.MatchString(fp) {
			t.Errorf("person %d: fingerprint %q is not one booking accepts", id, fp)
		}
		if other, ok := seen[fp]; ok {
			t.Errorf("persons %d and %d share card %q", other, id, fp)
		}
		seen[fp] = id
	}
}
