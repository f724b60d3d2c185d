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

package accesscode

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestIssueCheck(t *testing.T) {
	code := Issue(testKey, 7, "presale", 42)
	c, err := Check(testKey, 7, code)
	if err != nil || c.Phase != "presale" || c.Serial != 42 || c.EventID != 7 || c.Text != code {
		t.Fatalf("Check(%q) = %+v, %v", code, c, err)
	}
	// Spelling does not matter: lower-case MAC, spaces around.
	parts := strings.Split(code, ".")
	loose := " " + strings.Join(parts[:3], ".") + "." + strings.ToLower(parts[3]) + "\n"
	c2, err := Check(testKey, 7, loose)
	if err != nil || Hash(c2) != Hash(c) {
		t.Fatalf("loose spelling: %+v %v, want the same hash", c2, err)
	}
	for _, bad := range []string{"", "x", "7.presale.42", "7.presale.42.AAAAAAAAAAAAAAAA", "7..42." + parts[3],
		"7.presale.43." + parts[3], "7.general.42." + parts[3], "7.presale.-1." + parts[3], code + "A"} {
		if _, err := Check(testKey, 7, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Check(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	other := Issue([]byte("another key of sixteen bytes or more"), 8, "presale", 1)
	if _, err := Check(testKey, 7, other); !errors.Is(err, ErrOtherEvent) {
		t.Fatalf("code of event 8: %v, want ErrOtherEvent", err)
	}
	if _, err := Check([]byte("a different key, same event......"), 7, code); !errors.Is(err, ErrInvalid) {
		t.Fatalf("code under another key: %v, want ErrInvalid", err)
	}
}

func TestParseKey(t *testing.T) {
	if _, err := ParseKey("c2hvcnQ="); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
	if _, err := ParseKey("not base64!"); err == nil {
		t.Fatal("garbage was accepted")
	}
	k, err := ParseKey("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil || !bytes.Equal(k, testKey) {
		t.Fatalf("ParseKey: %q %v", k, err)
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, testKey, 3, "members", 10, 5); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 6 || strings.Join(rows[0], ",") != "code,event,phase,serial" {
		t.Fatalf("csv: %v %v", rows, err)
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		c, err := Check(testKey, 3, r[0])
		if err != nil || c.Phase != "members" || r[1] != "3" || r[2] != "members" || seen[r[0]] {
			t.Fatalf("row %v: %+v %v", r, c, err)
		}
		seen[r[0]] = true
	}
}
