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

// Package qrcodetest reads QR codes back in tests with zbarimg (Debian
// package zbar-tools), a decoder independent of the encoder under test.
package qrcodetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// Decode returns the text of the QR codes in the PNG image, one line per
// code. Without zbarimg the test fails in CI and is skipped elsewhere.
func Decode(t testing.TB, png []byte) string {
	t.Helper()
	bin, err := exec.LookPath("zbarimg")
	if err != nil {
		testenv.Unavailable(t, "zbarimg", fmt.Errorf("%w (hack/install-deps.sh installs zbar-tools)", err))
	}
	path := filepath.Join(t.TempDir(), "code.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--raw", "-q", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zbarimg %s: %v (no code found?)\n%s", path, err, stderr.String())
	}
	return strings.TrimSuffix(string(out), "\n")
}
