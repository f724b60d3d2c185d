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
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
)

// Cacheable is a public answer that is the same for everyone, encoded once
// and served many times: a CDN or a browser may keep it for MaxAge seconds
// and revalidate it with its ETag.
type Cacheable struct {
	Body   []byte
	Gzip   []byte // Body gzipped, when that is smaller
	ETag   string // strong, quoted
	MaxAge int
}

// NewCacheable encodes body with its ETag (a hash of the body, so pods
// that hold the same data give the same ETag) and, when it pays, a gzipped
// copy.
func NewCacheable(body []byte, maxAge int) *Cacheable {
	sum := sha256.Sum256(body)
	c := &Cacheable{Body: body, ETag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`, MaxAge: maxAge}
	if len(body) > 512 {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		_, _ = zw.Write(body)
		_ = zw.Close()
		if b.Len() < len(body) {
			c.Gzip = b.Bytes()
		}
	}
	return c
}

// Serve writes c as JSON: 304 when the request's If-None-Match names its
// ETag, gzip when the client accepts it.
func (c *Cacheable) Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(c.MaxAge))
	h.Set("ETag", c.ETag)
	h.Set("Vary", "Accept-Encoding")
	if etagMatches(r.Header.Get("If-None-Match"), c.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	body := c.Body
	if c.Gzip != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = c.Gzip
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// etagMatches implements If-None-Match's weak comparison: "*" or any listed
// tag equal to etag, W/ prefixes ignored.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") || strings.TrimSpace(name) == "*" {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
