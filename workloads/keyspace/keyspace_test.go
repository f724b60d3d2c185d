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

package keyspace

import (
	"context"
	"reflect"
	"sort"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestPrefixAndPattern(t *testing.T) {
	for id, want := range map[int64][2]string{
		42:      {"tf:{42}:", "tf:{42}:*"},
		2026070: {"tf:{2026070}:", "tf:{2026070}:*"},
		-1:      {"tf:{-1}:", "tf:{-1}:*"},
	} {
		if got := Prefix(id); got != want[0] {
			t.Errorf("Prefix(%d) = %q, want %q", id, got, want[0])
		}
		if got := Pattern(id); got != want[1] {
			t.Errorf("Pattern(%d) = %q, want %q", id, got, want[1])
		}
	}
	if got, want := escapeGlob(`a*b?[c]\d{e}:`), `a\*b\?\[c]\\d{e}:`; got != want {
		t.Fatalf("escapeGlob = %q, want %q", got, want)
	}
}

// scanAll returns every key SCAN MATCH pattern yields, in several pages.
func scanAll(t *testing.T, rdb *redis.Client, pattern string) []string {
	t.Helper()
	var out []string
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(context.Background(), cursor, pattern, 10).Result()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, keys...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	sort.Strings(out)
	return out
}

// Against a real Redis: the pattern selects exactly one event's keys, not
// those of an event whose id starts with the same digits, and escaped glob
// characters match only themselves.
func TestPatternMatchesExactlyOneEvent(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	keys := []string{
		"tf:{42}:queue", "tf:{42}:customers", "tf:{42}:admitlog",
		"tf:{421}:queue", "tf:{4}:queue", "tf:{42}", "tf:42:queue", "x:tf:{42}:queue",
		`a*b?[c]\d`, `aXbYcd`, `a*b?c\d`,
	}
	for _, k := range keys {
		if err := rdb.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := scanAll(t, rdb, Pattern(42)), []string{"tf:{42}:admitlog", "tf:{42}:customers", "tf:{42}:queue"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SCAN MATCH %s = %v, want %v", Pattern(42), got, want)
	}
	if got, want := scanAll(t, rdb, escapeGlob(`a*b?[c]\d`)), []string{`a*b?[c]\d`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("escaped pattern matched %v, want %v", got, want)
	}
}
