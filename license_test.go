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
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every Go source file carries the licence header of hack/boilerplate.go.txt
// (the one controller-gen puts on generated files), and LICENSE is the
// Apache License 2.0 it names: the same header on every file, not on some.
func TestLicenceHeaderOnEverySource(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("hack", "boilerplate.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	header := strings.TrimSpace(string(b))
	lic, err := os.ReadFile("LICENSE")
	if err != nil || !strings.Contains(string(lic), "Apache License") || !strings.Contains(string(lic), "Version 2.0, January 2004") {
		t.Fatalf("LICENSE is not the Apache License 2.0: %v", err)
	}
	checked := 0
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Build output, caches and dependencies are not ours.
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata-out" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// A build constraint may come first; the header follows it.
		text := string(src)
		if strings.HasPrefix(text, "//go:build") {
			_, text, _ = strings.Cut(text, "\n\n")
		}
		if !strings.HasPrefix(text, header) {
			t.Errorf("%s does not start with the licence header of hack/boilerplate.go.txt", p)
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files: the walk missed the tree", checked)
	}
}
