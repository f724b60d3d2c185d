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

package doclinks

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// root is the repository's root, two levels above this package.
const root = "../.."

// The repository's own documents link only to what exists.
func TestRepositoryLinks(t *testing.T) {
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 || files[0] != "README.md" {
		t.Fatalf("documents found: %v", files)
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// A newcomer reads the README through: it stays short, and the rest lives
// under docs/.
func TestReadmeIsShort(t *testing.T) {
	const maxLines = 250
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte("\n")); n > maxLines {
		t.Errorf("README.md has %d lines, at most %d: move details to docs/ (indexed in docs/README.md)", n, maxLines)
	}
}

// The checker finds each kind of broken link, on its line, and passes the
// good ones.
func TestCheckFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Demo: the sale", // 1
		"",                 // 2
		"See [the guide](docs/guide.md) and [setup](docs/guide.md#set-up-a-node).", // 3
		"A [missing file](docs/nope.md) here.",                                     // 4
		"A [missing anchor](docs/guide.md#teardown).",                              // 5
		"Back to [the top](#demo-the-sale), not [nowhere](#nowhere).",              // 6
		"`[in code](docs/absent.md)` and [site](https://example.org/a?b=c#d).",     // 7
		"```",                                // 8
		"[in a fence](docs/absent.md)",       // 9
		"```",                                // 10
		`<img src="docs/img/x.png" alt="x">`, // 11
		"[bad url](https://)",                // 12
		"[code dir](cmd/) and [repeat](docs/guide.md#usage-1)", // 13
		"[ref]: docs/gone.md", // 14
	}, "\n")+"\n")
	write("docs/guide.md", "# Guide\n\n## Set up a node!\n\n## Usage\n\n## Usage\n\n[up](../README.md#demo-the-sale) [out](../../x.md)\n")
	write("cmd/main.go", "package main\n")

	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"README.md", "docs/guide.md"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	problems, err := Check(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`README.md:4: link "docs/nope.md": no file docs/nope.md`,
		`README.md:5: link "docs/guide.md#teardown": no heading #teardown in docs/guide.md`,
		`README.md:6: link "#nowhere": no heading #nowhere in README.md`,
		`README.md:11: link "docs/img/x.png": no file docs/img/x.png`,
		`README.md:12: link "https://": malformed URL: no host`,
		`README.md:14: link "docs/gone.md": no file docs/gone.md`,
		`docs/guide.md:9: link "../../x.md": outside the repository`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Fixed, the same documents pass.
	write("docs/nope.md", "# Nope\n")
	write("docs/gone.md", "")
	write("docs/img/x.png", "png")
	write("docs/guide.md", "# Guide\n\n## Set up a node!\n\n## Usage\n\n## Usage\n\n## Teardown\n\n[up](../README.md#demo-the-sale)\n")
	src, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	src = bytes.Replace(src, []byte("(#nowhere)"), []byte("(#demo-the-sale)"), 1)
	src = bytes.Replace(src, []byte("(https://)"), []byte("(https://example.org)"), 1)
	write("README.md", string(src))
	if problems, err := Check(dir, files); err != nil || len(problems) != 0 {
		t.Fatalf("fixed documents: %v, %v", problems, err)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Quick start (a fresh Debian/Ubuntu machine with Go 1.26)":   "quick-start-a-fresh-debianubuntu-machine-with-go-126",
		"The whole path on a real node: `make cluster-up image e2e`": "the-whole-path-on-a-real-node-make-cluster-up-image-e2e",
		"Managed Redis, PostgreSQL and Kafka":                        "managed-redis-postgresql-and-kafka",
		"`hold_seats` and [the sweep](docs/booking.md)":              "hold_seats-and-the-sweep",
		"What 2,000,000 people cost — per minute":                    "what-2000000-people-cost--per-minute",
		"Ünïcode stays": "ünïcode-stays",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestAnchors(t *testing.T) {
	src := "# Title #\n## Usage\n### Usage\n```\n# not a heading\n```\n#not-a-heading\n    # indented code\n<a id=\"custom\"></a>\n"
	got := Anchors([]byte(src))
	want := map[string]bool{"title": true, "usage": true, "usage-1": true, "custom": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("anchors %v, want %v", got, want)
	}
}
