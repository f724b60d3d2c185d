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
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
)

func init() {
	register("access-codes", "issue access codes for a phase of a sale, as CSV", runAccessCodes)
}

// runAccessCodes writes codes of one phase as CSV. Issuing needs the
// event's codes key alone (the keys Secret's access-code-key), no Redis: a
// code is checked by its MAC and made single-use when it is redeemed.
func runAccessCodes(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("access-codes", flag.ContinueOnError)
	event := fs.Int64("event-id", 0, "the event's id")
	phase := fs.String("phase", "", "the phase the codes admit to (spec.phases[].name)")
	count := fs.Int64("count", 0, "how many codes")
	first := fs.Int64("first-serial", 1, "serial of the first code: issue later batches from where the last ended, so no code repeats")
	keyFile := fs.String("key-file", "", "file holding the base64 codes key (default: $TICKETFAIR_ACCESS_CODE_KEY)")
	out := fs.String("out", "-", "CSV file to write (-: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *event <= 0 || *phase == "" || *count <= 0 || *count > 10_000_000 || *first < 0 {
		fs.Usage()
		return errors.New("access-codes: set -event-id, -phase and -count (1 to 10,000,000)")
	}
	raw := os.Getenv("TICKETFAIR_ACCESS_CODE_KEY")
	if *keyFile != "" {
		b, err := os.ReadFile(*keyFile)
		if err != nil {
			return fmt.Errorf("access-codes: %w", err)
		}
		raw = string(b)
	}
	if raw == "" {
		return errors.New("access-codes: no key: set -key-file or TICKETFAIR_ACCESS_CODE_KEY")
	}
	key, err := accesscode.ParseKey(raw)
	if err != nil {
		return fmt.Errorf("access-codes: %w", err)
	}
	var w io.Writer = os.Stdout
	if *out != "-" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("access-codes: %w", err)
		}
		defer f.Close()
		w = f
	}
	if err := accesscode.WriteCSV(w, key, *event, strings.ToLower(*phase), *first, *count); err != nil {
		return fmt.Errorf("access-codes: %w", err)
	}
	return nil
}
