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

package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteLatestKeepsTheHistory: a run replaces the previous latest run
// and leaves the earlier runs after it untouched; a new file gets the
// markers.
func TestWriteLatestKeepsTheHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench-results.md")
	if err := writeLatest(path, "| run 1 |"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), latestBegin+"\n| run 1 |\n"+latestEnd) {
		t.Fatalf("new file:\n%s", b)
	}
	history := "\n\n## Earlier runs\n\n| run 0 |\n"
	if err := os.WriteFile(path, []byte(strings.TrimRight(string(b), "\n")+history), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeLatest(path, "| run 2 |\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	got := string(b)
	if strings.Contains(got, "run 1") || !strings.Contains(got, latestBegin+"\n| run 2 |\n"+latestEnd) {
		t.Fatalf("the latest run was not replaced:\n%s", got)
	}
	if !strings.HasSuffix(got, history) || strings.Count(got, resultsHeader) != 1 {
		t.Fatalf("the history or the header was not kept once:\n%s", got)
	}
}
