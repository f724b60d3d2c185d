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

package demo

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// The CPU of a process tree counts a child's CPU, while it runs and after
// it has been waited for.
func TestTreeCPUSeconds(t *testing.T) {
	busy := exec.Command("sh", "-c", "end=$(($(date +%s)+2)); while [ $(date +%s) -lt $end ]; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	running := treeCPUSeconds(readProcStats(), os.Getpid())
	if own := ownCPUSeconds(readProcStats(), os.Getpid()); running < own+0.5 {
		t.Fatalf("tree %.2f s, own %.2f s: the child running for a second is not counted", running, own)
	}
	if err := busy.Wait(); err != nil {
		t.Fatal(err)
	}
	if waited := treeCPUSeconds(readProcStats(), os.Getpid()); waited < 1 {
		t.Fatalf("tree %.2f s after the child that spun for 2 s was waited for", waited)
	}
	if treeCPUSeconds(readProcStats(), 0) != 0 {
		t.Fatal("pid 0 has CPU")
	}
}
