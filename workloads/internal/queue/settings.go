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
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ticketfair/ticketfair/workloads/config"
)

// Settings is the live part of the configuration: what the admitter and the
// join path read on every use, so a TicketEvent change applies at once.
type Settings struct {
	config.Admission
	SalesOpenAt time.Time // zero: open; with phases, the first phase's opening
	// Phases are the sale's phases in order; none: one queue, DefaultQueue.
	Phases []config.Phase
}

// validate fills what may be missing and rejects nonsense.
func (s Settings) validate() (Settings, error) {
	if s.MaxActive < 0 || s.RatePerSecond < 0 {
		return s, fmt.Errorf("maxActive and ratePerSecond must not be negative")
	}
	// Settings left unset take the defaults of their config tags.
	def := config.DefaultsOf[config.Admission]()
	if s.TickInterval <= 0 {
		s.TickInterval = def.TickInterval
	}
	if s.TokenTTL <= 0 {
		s.TokenTTL = def.TokenTTL
	}
	if s.ClaimTimeout <= 0 {
		s.ClaimTimeout = def.ClaimTimeout
	}
	if s.SelectionWindow <= 0 {
		s.SelectionWindow = def.SelectionWindow
	}
	if s.PreQueue == "" {
		s.PreQueue = def.PreQueue
	}
	switch strings.ToLower(s.PreQueue) {
	case "shuffle":
		s.PreQueue = "shuffle"
	case "fifo":
		s.PreQueue = "fifo"
	default:
		return s, fmt.Errorf("preQueue %q: want shuffle or fifo", s.PreQueue)
	}
	if err := config.CheckPhases(s.Phases, true); err != nil {
		return s, config.Within("phases", err)
	}
	if len(s.Phases) > 0 {
		// The sale opens with its first phase.
		s.SalesOpenAt = s.Phases[0].OpensAt
	}
	return s, nil
}

// settingsFromConfig reads the static configuration.
func settingsFromConfig(cfg config.Queue) (Settings, error) {
	s := Settings{Admission: cfg.Admission}
	if cfg.SalesOpenAt != "" {
		t, err := time.Parse(time.RFC3339, cfg.SalesOpenAt)
		if err != nil {
			return s, fmt.Errorf("sales open at %q: %w", cfg.SalesOpenAt, err)
		}
		s.SalesOpenAt = t
	}
	ps, err := config.ParsePhases(cfg.Phases)
	if err != nil {
		return s, config.Within("TICKETFAIR_PHASES", err)
	}
	s.Phases = ps
	return s.validate()
}

// liveSettings holds the current Settings; readers never block.
type liveSettings struct {
	p       atomic.Pointer[Settings]
	changed chan struct{} // poked (non-blocking) on every change
}

func newLiveSettings(s Settings) *liveSettings {
	l := &liveSettings{changed: make(chan struct{}, 1)}
	l.p.Store(&s)
	return l
}

func (l *liveSettings) Load() Settings { return *l.p.Load() }

func (l *liveSettings) Store(s Settings) {
	l.p.Store(&s)
	select {
	case l.changed <- struct{}{}:
	default:
	}
}
