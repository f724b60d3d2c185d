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

package booking

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Holds, orders and sessions expire by the database's and Redis's clocks
// (now() in SQL, TIME in the session check), never by the process's own:
// a booking replica whose clock runs 30 s ahead sells exactly as the
// others do. This test keeps it so: every read of the local clock in the
// booking and zone packages is listed here with what it is for, and none
// decides an expiry.
func TestExpiryReadsNoLocalClock(t *testing.T) {
	allowed := map[string]int{
		"booking/gate.go gated":         3, // the gate's wait and the transaction's latency
		"booking/keys.go refresh":       2, // rate limit of JWKS refetches
		"booking/metrics.go instrument": 2, // request durations
		"booking/seatmap.go get":        2, // age of the cached seat map
		"booking/seatmap.go render":     1, // when the seat map was read
		"booking/health.go newHealth":   1, // the clock of the hold latency window published to the zone
		"booking/server.go hold":        5, // the checks', the transaction's and the whole hold's latency
		"booking/server.go webhook":     1, // the payment provider's signature timestamp, within the tolerance
	}
	found := map[string]int{}
	for _, dir := range []string{".", "../zone"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			pkg := filepath.Base(filepath.Dir(path))
			if dir == "." {
				pkg = "booking"
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since" || sel.Sel.Name == "Until") {
						found[pkg+"/"+filepath.Base(path)+" "+fn.Name.Name]++
					}
					return true
				})
			}
		}
	}
	for where, n := range found {
		if n > allowed[where] {
			t.Errorf("%s reads the local clock %d times (%d listed): expiry must use the database's or Redis's clock; list the read here if it decides no expiry", where, n, allowed[where])
		}
	}
	if len(found) == 0 {
		t.Fatal("found no clock reads at all: the scan is broken")
	}
}
