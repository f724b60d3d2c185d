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

// Package config is the one source of truth for the workloads'
// configuration: each workload reads its settings from TICKETFAIR_*
// environment variables (overridable by flags), and the operator renders the
// same names from the same structs. A field is described once, by tags:
//
//	MaxActive int `env:"TICKETFAIR_MAX_ACTIVE" flag:"max-active" default:"5000" usage:"..."`
//
// Supported field types: string, bool, int, int32, int64, float64,
// time.Duration and []string (comma separated). Nested structs are
// flattened. A field tagged secret:"true" holds a credential: the operator
// renders it as a reference to a Secret, never as a literal value. A field
// tagged live:"true" is one the workload also follows live (the queue reads
// spec.admission and spec.salesOpenAt of its TicketEvent), so the operator
// leaves it out of the config hash that rolls the pods.
//
// Each default is stated once, in its default tag: the workload reads it
// through Load, the operator through Defaults, and a test of the operator
// checks that the CRD's +kubebuilder:default markers agree with the tags.
//
// The loader is a small reflection walk written here rather than a library
// (such as caarlos0/env or kelseyhightower/envconfig): those read the
// environment but neither register the flags nor render the variables back
// from a struct, which the operator needs to render from the same structs.
package config

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Var is one rendered environment variable.
type Var struct {
	Name   string
	Value  string
	Secret bool // the value is a credential and belongs in a Secret
	Live   bool // the workload follows the setting live, without a restart
	// Field is the address of the field in the struct given to Render (nil
	// when it was not given by pointer), so a caller can attach something
	// to a field, such as the Secret key its value comes from.
	Field any
}

// Load fills dst (a pointer to a struct) from its defaults, then the
// environment, then the flags in args. fs receives one flag per field; args
// may be nil to read only the environment.
func Load(fs *flag.FlagSet, args []string, dst any) error {
	return LoadFrom(fs, args, os.LookupEnv, dst)
}

// Defaults fills dst (a pointer to a struct) with the defaults of its tags
// only, as Load does before it reads the environment.
func Defaults(dst any) error {
	return LoadFrom(nil, nil, func(string) (string, bool) { return "", false }, dst)
}

// DefaultsOf returns a T holding the defaults of its tags. Code that fills
// settings left unset (a struct built by hand rather than loaded) takes them
// from here, so each default stays stated once, in its tag. It panics on a
// malformed default tag, a programming error the package's tests rule out
// for every workload's struct.
func DefaultsOf[T any]() T {
	var v T
	if err := Defaults(&v); err != nil {
		panic(err)
	}
	return v
}

// LoadFrom is Load with an explicit environment lookup.
func LoadFrom(fs *flag.FlagSet, args []string, lookup func(string) (string, bool), dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: Load needs a pointer to a struct, got %T", dst)
	}
	var firstErr error
	walk(v.Elem(), func(f reflect.StructField, fv reflect.Value) {
		def := f.Tag.Get("default")
		if def != "" {
			if err := set(fv, def); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("config: default of %s: %w", f.Name, err)
			}
		}
		if name := f.Tag.Get("env"); name != "" {
			if s, ok := lookup(name); ok {
				if err := set(fv, s); err != nil && firstErr == nil {
					firstErr = fmt.Errorf("config: %s=%q: %w", name, s, err)
				}
			}
		}
		if fs != nil {
			if name := f.Tag.Get("flag"); name != "" {
				usage := f.Tag.Get("usage")
				if env := f.Tag.Get("env"); env != "" {
					usage += " (env " + env + ")"
				}
				fs.Var(fieldValue{fv}, name, usage)
			}
		}
	})
	if firstErr != nil {
		return firstErr
	}
	if fs != nil && args != nil {
		if err := fs.Parse(args); err != nil {
			return err
		}
	}
	return nil
}

// Render lists the environment variables that reproduce src.
func Render(src any) []Var {
	v := reflect.ValueOf(src)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var out []Var
	walk(v, func(f reflect.StructField, fv reflect.Value) {
		name := f.Tag.Get("env")
		if name == "" {
			return
		}
		var field any
		if fv.CanAddr() {
			field = fv.Addr().Interface()
		}
		out = append(out, Var{Name: name, Value: format(fv), Secret: f.Tag.Get("secret") == "true",
			Live: f.Tag.Get("live") == "true", Field: field})
	})
	return out
}

// walk calls fn for every leaf field of the struct v, flattening nested
// structs (other than time.Duration, which is a leaf).
func walk(v reflect.Value, fn func(reflect.StructField, reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct {
			walk(fv, fn)
			continue
		}
		fn(f, fv)
	}
}

var durationType = reflect.TypeOf(time.Duration(0))

func set(fv reflect.Value, s string) error {
	switch {
	case fv.Type() == durationType:
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		fv.SetInt(int64(d))
	case fv.Kind() == reflect.String:
		fv.SetString(s)
	case fv.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		fv.SetBool(b)
	case fv.Kind() == reflect.Int || fv.Kind() == reflect.Int32 || fv.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(s, 10, fv.Type().Bits())
		if err != nil {
			return err
		}
		fv.SetInt(n)
	case fv.Kind() == reflect.Float64:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		fv.SetFloat(n)
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
		var parts []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		fv.Set(reflect.ValueOf(parts))
	default:
		return fmt.Errorf("unsupported field type %s", fv.Type())
	}
	return nil
}

func format(fv reflect.Value) string {
	switch {
	case fv.Type() == durationType:
		return time.Duration(fv.Int()).String()
	case fv.Kind() == reflect.String:
		return fv.String()
	case fv.Kind() == reflect.Bool:
		return strconv.FormatBool(fv.Bool())
	case fv.Kind() == reflect.Int || fv.Kind() == reflect.Int32 || fv.Kind() == reflect.Int64:
		return strconv.FormatInt(fv.Int(), 10)
	case fv.Kind() == reflect.Float64:
		return strconv.FormatFloat(fv.Float(), 'f', -1, 64)
	case fv.Kind() == reflect.Slice:
		return strings.Join(fv.Interface().([]string), ",")
	}
	return fmt.Sprint(fv.Interface())
}

// fieldValue adapts a struct field to flag.Value.
type fieldValue struct{ v reflect.Value }

func (f fieldValue) String() string {
	if !f.v.IsValid() {
		return ""
	}
	return format(f.v)
}
func (f fieldValue) Set(s string) error { return set(f.v, s) }

// IsBoolFlag lets boolean fields be given as -flag without a value.
func (f fieldValue) IsBoolFlag() bool { return f.v.IsValid() && f.v.Kind() == reflect.Bool }
