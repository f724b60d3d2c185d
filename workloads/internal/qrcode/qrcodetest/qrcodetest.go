// Package qrcodetest reads QR codes back in tests with zbarimg (Debian
// package zbar-tools), a decoder independent of the encoder under test.
package qrcodetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Decode returns the text of the QR codes in the PNG image, one line per
// code. Without zbarimg the test fails in CI and is skipped elsewhere.
func Decode(t testing.TB, png []byte) string {
	t.Helper()
	bin, err := exec.LookPath("zbarimg")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("TICKETFAIR_TEST_REQUIRE_SERVICES") == "1" {
			t.Fatalf("zbarimg is required in CI (hack/install-deps.sh installs zbar-tools): %v", err)
		}
		t.Skipf("zbarimg unavailable (apt-get install -y zbar-tools): %v", err)
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
