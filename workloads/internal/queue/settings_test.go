package queue

import (
	"testing"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// Settings left unset take the config tags' defaults: validate states none
// of its own.
func TestSettingsDefaultsAreTheTags(t *testing.T) {
	s, err := Settings{}.validate()
	if err != nil {
		t.Fatal(err)
	}
	def := config.DefaultsOf[config.Admission]()
	if s.TickInterval != def.TickInterval || s.TokenTTL != def.TokenTTL || s.ClaimTimeout != def.ClaimTimeout || s.SelectionWindow != def.SelectionWindow || s.PreQueue != def.PreQueue {
		t.Fatalf("unset settings became %+v, want the tag defaults %+v", s.Admission, def)
	}
	if _, err := (Settings{Admission: config.Admission{PreQueue: "lottery"}}).validate(); err == nil {
		t.Fatal("preQueue lottery accepted")
	}
	if s, err := (Settings{Admission: config.Admission{PreQueue: "FIFO"}}).validate(); err != nil || s.PreQueue != "fifo" {
		t.Fatalf("preQueue FIFO: %q, %v", s.PreQueue, err)
	}
}
