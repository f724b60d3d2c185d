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
