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
	"slices"
	"testing"
)

func TestCommands(t *testing.T) {
	if code := run([]string{"no-such-command"}); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if code := run(nil); code != 2 {
		t.Fatalf("no command: exit code %d, want 2", code)
	}
	if code := run([]string{"help"}); code != 0 {
		t.Fatalf("help: exit code %d, want 0", code)
	}
	if got, want := commands.Names(), []string{"audit", "bench", "demo", "loadtest"}; !slices.Equal(got, want) {
		t.Fatalf("commands %v, want %v", got, want)
	}
}
