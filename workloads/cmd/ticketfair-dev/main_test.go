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
