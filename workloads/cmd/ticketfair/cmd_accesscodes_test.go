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
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/ticketfair/ticketfair/workloads/internal/accesscode"
)

// TestAccessCodes: the subcommand writes codes the queue accepts, with
// the serials asked for, and refuses to overwrite a file.
func TestAccessCodes(t *testing.T) {
	dir := t.TempDir()
	keyFile, out := filepath.Join(dir, "key"), filepath.Join(dir, "codes.csv")
	if err := os.WriteFile(keyFile, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-event-id", "9", "-phase", "presale", "-count", "50", "-first-serial", "100", "-key-file", keyFile, "-out", out}
	if err := runAccessCodes(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 51 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	key, _ := accesscode.ParseKey("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	for i, r := range rows[1:] {
		c, err := accesscode.Check(key, 9, r[0])
		if err != nil || c.Phase != "presale" || c.Serial != int64(100+i) {
			t.Fatalf("row %v: %+v %v", r, c, err)
		}
	}
	if err := runAccessCodes(context.Background(), args); err == nil {
		t.Fatal("overwrote the CSV")
	}
}
