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

package config

import (
	"flag"
	"reflect"
	"testing"
	"time"
)

type inner struct {
	Brokers []string `env:"TICKETFAIR_T_BROKERS" flag:"brokers" default:"a:1,b:2"`
}

type sample struct {
	Addr     string        `env:"TICKETFAIR_T_ADDR" flag:"addr" default:":8080"`
	Max      int           `env:"TICKETFAIR_T_MAX" flag:"max" default:"5000"`
	Event    int64         `env:"TICKETFAIR_T_EVENT" flag:"event"`
	TTL      time.Duration `env:"TICKETFAIR_T_TTL" flag:"ttl" default:"5m"`
	Paused   bool          `env:"TICKETFAIR_T_PAUSED" flag:"paused"`
	Rate     float64       `env:"TICKETFAIR_T_RATE" flag:"rate" default:"2.5"`
	Password string        `env:"TICKETFAIR_T_PASSWORD" secret:"true"`
	inner
}

func TestLoadPrecedence(t *testing.T) {
	env := map[string]string{"TICKETFAIR_T_MAX": "7", "TICKETFAIR_T_TTL": "90s", "TICKETFAIR_T_BROKERS": "x:9"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var c sample
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	if err := LoadFrom(fs, []string{"-max", "9", "-paused", "-event", "42"}, lookup, &c); err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.Max != 9 || c.Event != 42 || c.TTL != 90*time.Second || !c.Paused || c.Rate != 2.5 {
		t.Fatalf("unexpected config: %+v", c)
	}
	// Embedded structs are not exported fields here, so they keep their zero value.
	if c.Brokers != nil {
		t.Fatalf("unexported embedded struct was filled: %v", c.Brokers)
	}
}

func TestLoadRejectsBadValue(t *testing.T) {
	lookup := func(k string) (string, bool) {
		if k == "TICKETFAIR_T_MAX" {
			return "many", true
		}
		return "", false
	}
	var c sample
	if err := LoadFrom(nil, nil, lookup, &c); err == nil {
		t.Fatal("expected an error for TICKETFAIR_T_MAX=many")
	}
}

type outer struct {
	Name  string `env:"TICKETFAIR_T_NAME" default:"n"`
	Kafka struct {
		Brokers []string `env:"TICKETFAIR_T_BROKERS" default:"a:1,b:2"`
	}
	Secret string `env:"TICKETFAIR_T_SECRET" secret:"true"`
}

func TestRenderRoundTrip(t *testing.T) {
	var c outer
	if err := LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, &c); err != nil {
		t.Fatal(err)
	}
	c.Secret = "s3cret"
	vars := Render(&c)
	want := []Var{
		{Name: "TICKETFAIR_T_NAME", Value: "n", Field: &c.Name},
		{Name: "TICKETFAIR_T_BROKERS", Value: "a:1,b:2", Field: &c.Kafka.Brokers},
		{Name: "TICKETFAIR_T_SECRET", Value: "s3cret", Secret: true, Field: &c.Secret},
	}
	if !reflect.DeepEqual(vars, want) {
		t.Fatalf("Render = %+v, want %+v", vars, want)
	}
	env := map[string]string{}
	for _, v := range vars {
		env[v.Name] = v.Value
	}
	var back outer
	if err := LoadFrom(nil, nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip: got %+v, want %+v", back, c)
	}
}

// Render reports the live tag and each field's address (given a pointer),
// and Defaults reads the default tags only.
func TestRenderLiveAndField(t *testing.T) {
	var q Queue
	if err := Defaults(&q); err != nil {
		t.Fatal(err)
	}
	if q.MaxActive != 5000 || q.TokenTTL != 10*time.Minute || q.PreQueue != "shuffle" {
		t.Fatalf("Defaults: %+v", q.Admission)
	}
	live := map[string]bool{}
	for _, v := range Render(&q) {
		if v.Live {
			live[v.Name] = true
		}
		if v.Name == "TICKETFAIR_MAX_ACTIVE" && v.Field != &q.MaxActive {
			t.Errorf("Field of %s is %v, want &q.MaxActive", v.Name, v.Field)
		}
	}
	want := map[string]bool{"TICKETFAIR_MAX_ACTIVE": true, "TICKETFAIR_ADMIT_RATE": true, "TICKETFAIR_TICK_INTERVAL": true,
		"TICKETFAIR_TOKEN_TTL": true, "TICKETFAIR_CLAIM_TIMEOUT": true, "TICKETFAIR_SELECTION_WINDOW": true, "TICKETFAIR_PRE_QUEUE": true, "TICKETFAIR_PAUSED": true,
		"TICKETFAIR_AUTOTUNE_HOLD_P99": true, "TICKETFAIR_AUTOTUNE_MIN_RATE": true, "TICKETFAIR_AUTOTUNE_MAX_RATE": true,
		"TICKETFAIR_SALES_OPEN_AT": true, "TICKETFAIR_PHASES": true}
	if !reflect.DeepEqual(live, want) {
		t.Fatalf("live = %v, want %v", live, want)
	}
	for _, v := range Render(q) {
		if v.Field != nil {
			t.Fatalf("Render of a struct value gave %s an address", v.Name)
		}
	}
}

// Every workload's default tags parse (DefaultsOf relies on it).
func TestWorkloadDefaultsParse(t *testing.T) {
	for _, dst := range []any{&Queue{}, &Booking{}, &Relay{}, &Tickets{}, &Edge{}} {
		if err := Defaults(dst); err != nil {
			t.Errorf("%T: %v", dst, err)
		}
	}
	if r := DefaultsOf[Relay](); r.BatchSize != 500 || r.PollInterval != 500*time.Millisecond {
		t.Fatalf("DefaultsOf[Relay] = %+v", r)
	}
}
