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

package subcmd

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// With TICKETFAIR_CPU_PROFILE set, a command's run is profiled into that
// file; a file that cannot be written fails the command before it runs.
func TestCPUProfileEnv(t *testing.T) {
	ran := 0
	set := New("x", "")
	set.stderr = io.Discard
	set.Register("spin", "burn CPU", func(ctx context.Context, args []string) error {
		ran++
		n := 0
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
			n++
		}
		_ = n
		return nil
	})

	path := filepath.Join(t.TempDir(), "spin.pprof")
	t.Setenv(CPUProfileEnv, path)
	if code := set.Run([]string{"spin"}); code != 0 || ran != 1 {
		t.Fatalf("exit %d, ran %d times", code, ran)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" }) || len(p.Sample) == 0 {
		t.Fatalf("profile: types %v, %d samples", p.SampleType, len(p.Sample))
	}

	t.Setenv(CPUProfileEnv, filepath.Join(t.TempDir(), "missing", "spin.pprof"))
	if code := set.Run([]string{"spin"}); code != 1 || ran != 1 {
		t.Fatalf("unwritable profile: exit %d, ran %d times", code, ran)
	}
}
