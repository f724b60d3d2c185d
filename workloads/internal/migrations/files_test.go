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

package migrations

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// createFunction finds the definitions of stored functions and procedures.
var createFunction = regexp.MustCompile(`(?is)\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+([a-z_][a-z0-9_.]*)\s*\(`)

// The layout the package comment promises, kept so: no versioned migration
// defines a stored function (a function changes in its one file, never
// restated), and each file under functions/ defines exactly the function
// it is named after; compat.sql alone holds the shims a rolling update
// needs.
func TestOneFilePerFunction(t *testing.T) {
	migrationsSeen, functionsSeen := 0, 0
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		defs := createFunction.FindAllStringSubmatch(string(b), -1)
		switch {
		case strings.HasPrefix(p, "sql/"):
			migrationsSeen++
			for _, m := range defs {
				t.Errorf("%s defines function %s: it belongs in functions/%s.sql", p, m[1], m[1])
			}
		case p == compatFile:
		case strings.HasPrefix(p, "functions/"):
			functionsSeen++
			want := strings.TrimSuffix(path.Base(p), ".sql")
			if len(defs) != 1 || !strings.EqualFold(defs[0][1], want) {
				names := make([]string, len(defs))
				for i, m := range defs {
					names[i] = m[1]
				}
				t.Errorf("%s defines %v, want exactly %s", p, names, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if migrationsSeen == 0 || functionsSeen == 0 {
		t.Fatalf("read %d migrations and %d function files: the embedded files moved", migrationsSeen, functionsSeen)
	}
}

// The check itself finds a restated function, in any spelling.
func TestCreateFunctionPattern(t *testing.T) {
	for text, want := range map[string]string{
		"CREATE OR REPLACE FUNCTION hold_seats(p bigint)": "hold_seats",
		"create function\n  confirm_payment (x int)":      "confirm_payment",
		"CREATE PROCEDURE public.sweep()":                 "public.sweep",
		"DROP FUNCTION IF EXISTS hold_refuse(boolean)":    "",
		"EXECUTE FUNCTION outbox_notify();":               "",
	} {
		got := ""
		if m := createFunction.FindStringSubmatch(text); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: found %q, want %q", text, got, want)
		}
	}
}
