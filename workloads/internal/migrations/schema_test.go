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
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite schema.sql from a migrated database")

// schemaHeader opens schema.sql; the rest is the normalised dump.
const schemaHeader = `-- The schema of a database after every migration (sql/) and every
-- stored function (functions/): pg_dump --schema-only, without comments,
-- settings and goose's own table. Function bodies are elided; each is in
-- functions/<name>.sql. Generated, do not edit:
--   go test ./workloads/internal/migrations -run TestSchema -update

`

// TestSchema: a migrated database's schema is schema.sql, and migrating it
// again (the migration Job run twice) changes nothing.
func TestSchema(t *testing.T) {
	url := testenv.PostgresURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	got := dumpSchema(ctx, t, url)
	if err := Up(ctx, url); err != nil {
		t.Fatalf("second Up: %v", err)
	}
	if again := dumpSchema(ctx, t, url); again != got {
		t.Fatalf("a second Up changed the schema: %s", firstDiff(got, again))
	}
	got = schemaHeader + got
	if *update {
		if err := os.WriteFile("schema.sql", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatalf("schema.sql differs from the migrated database (regenerate with -update): %s", firstDiff(string(want), got))
	}
}

// dumpSchema is the schema of the database at url as pg_dump writes it,
// without what differs between PostgreSQL versions and runs: comments,
// SET lines, \restrict keys, blank runs and the function bodies.
func dumpSchema(ctx context.Context, t *testing.T, url string) string {
	t.Helper()
	pgDump := "pg_dump"
	if dir, err := localsvc.PostgresBinDir(); err == nil {
		pgDump = filepath.Join(dir, "pg_dump")
	}
	out, err := exec.CommandContext(ctx, pgDump, "--schema-only", "--no-owner", "--no-privileges", "--no-comments",
		"--exclude-table=goose_db_version", "--dbname="+url).Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("pg_dump: %v\n%s", err, stderr)
	}
	var b strings.Builder
	blank := true
	for _, line := range strings.Split(elideBodies(string(out)), "\n") {
		line = strings.TrimRight(line, " \t\r")
		switch {
		case strings.HasPrefix(line, "--"), strings.HasPrefix(line, "SET "),
			strings.HasPrefix(line, "SELECT pg_catalog.set_config("), strings.HasPrefix(line, `\`):
			continue
		case line == "":
			if blank {
				continue
			}
			blank = true
		default:
			blank = false
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// dollarQuote opens a function body in pg_dump's output: AS $tag$.
var dollarQuote = regexp.MustCompile(`AS (\$[A-Za-z_]*\$)`)

// elideBodies replaces each function body of a dump with "…".
func elideBodies(dump string) string {
	var b strings.Builder
	for {
		m := dollarQuote.FindStringSubmatchIndex(dump)
		if m == nil {
			b.WriteString(dump)
			return b.String()
		}
		tag := dump[m[2]:m[3]]
		end := strings.Index(dump[m[1]:], tag)
		if end < 0 {
			b.WriteString(dump)
			return b.String()
		}
		b.WriteString(dump[:m[1]] + " … " + tag)
		dump = dump[m[1]+end+len(tag):]
	}
}

// firstDiff names the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, x, y)
		}
	}
	return "no line differs"
}
