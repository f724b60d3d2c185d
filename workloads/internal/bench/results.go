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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// The latest run sits between these lines of the results file; what
// follows the end line (the earlier runs, kept by hand) is left as it is.
const (
	latestBegin = "<!-- the latest run: written by `make bench` from here -->"
	latestEnd   = "<!-- to here -->"
)

const resultsHeader = "# Benchmark results\n\nProduced by `make bench` (`ticketfair-dev bench`): every figure comes from ONE run on one machine, " +
	"so the ratios compare; absolute numbers on a shared machine are noisy. " +
	"The relay's row runs against a one-node Apache Kafka started for that measurement alone, " +
	"its baseline Apache Kafka's own kafka-producer-perf-test on the same broker.\n"

// writeLatest puts table into path as the latest run, keeping the file's
// history after latestEnd. A file without the markers is written anew.
func writeLatest(path, table string) error {
	rest := "\n"
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if _, after, ok := strings.Cut(string(old), latestEnd); ok && strings.Contains(string(old), latestBegin) {
			rest = after
		}
	}
	doc := fmt.Sprintf("%s\n%s\n%s\n%s%s", resultsHeader, latestBegin, strings.TrimSpace(table), latestEnd, rest)
	return os.WriteFile(path, []byte(doc), 0o644)
}
