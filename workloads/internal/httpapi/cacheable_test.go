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

package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCacheable(t *testing.T) {
	body := []byte(`{"rows":"` + strings.Repeat("A", 2000) + `"}`)
	c := NewCacheable(body, 1)
	serve := func(hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		c.Serve(w, r)
		return w
	}
	plain := serve()
	if plain.Code != 200 || !bytes.Equal(plain.Body.Bytes(), body) || plain.Header().Get("Cache-Control") != "public, max-age=1" ||
		plain.Header().Get("Content-Encoding") != "" || plain.Header().Get("ETag") != c.ETag {
		t.Fatalf("plain: %d %v", plain.Code, plain.Header())
	}
	gz := serve("Accept-Encoding", "br, gzip;q=0.8")
	zr, err := gzip.NewReader(gz.Body)
	if err != nil || gz.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %v %v", err, gz.Header())
	}
	if got, _ := io.ReadAll(zr); !bytes.Equal(got, body) || gz.Body.Len() >= len(body) {
		t.Fatalf("gzip body: %d bytes", gz.Body.Len())
	}
	if w := serve("Accept-Encoding", "gzip;q=0"); w.Header().Get("Content-Encoding") != "" {
		t.Fatal("gzip;q=0 got gzip")
	}
	for _, inm := range []string{c.ETag, `"other", ` + c.ETag, "W/" + c.ETag, "*"} {
		if w := serve("If-None-Match", inm); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
			t.Fatalf("If-None-Match %s: %d", inm, w.Code)
		}
	}
	if w := serve("If-None-Match", `"other"`); w.Code != 200 {
		t.Fatalf("other ETag: %d", w.Code)
	}
	// The ETag is the content's: the same body gives the same tag.
	if NewCacheable(body, 1).ETag != c.ETag || NewCacheable(append(body, ' '), 1).ETag == c.ETag {
		t.Fatal("ETag does not follow the content")
	}
}
