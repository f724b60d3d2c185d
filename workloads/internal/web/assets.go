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

// Package web holds ticketfair's pages (waiting room, seat selection, order
// and tickets, and the gate's entrance check) and the edge that serves them
// next to the services: one origin for the browser, as an ingress or CDN
// would be.
//
// The pages are static: embedded HTML, stylesheets and scripts (one
// vendored: the gate's QR decoder, see assets/vendor). Stylesheets and
// scripts are served under content-hashed names with a one-year immutable
// Cache-Control, so a CDN can keep them forever; the HTML (which names the
// current hashes) is cached briefly.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
)

//go:embed assets
var assetFS embed.FS

// Cache policies.
const (
	immutableCache = "public, max-age=31536000, immutable"
	pageCache      = "public, max-age=60"
)

// contentSecurityPolicy allows nothing from other origins: no CDN fonts,
// scripts or beacons. blob: images are the gate's own picked files, which
// its QR decoder loads from an object URL.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type asset struct {
	name        string // hashed, e.g. app.3f2a9c1e.js
	contentType string
	body        []byte
}

// site is the rendered set of pages and hashed assets.
type site struct {
	assets map[string]asset  // by hashed name
	hashed map[string]string // logical name (app.js) -> /assets/<hashed>
	pages  map[string][]byte // wait, seats, order, gate
	etags  map[string]string
	pay    *template.Template
}

// hashedName inserts the first 8 hex digits of the SHA-256 of body before
// the extension: app.js -> app.1a2b3c4d.js.
func hashedName(name string, body []byte) string {
	sum := sha256.Sum256(body)
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:4]) + ext
}

// assetRef is an asset named in a page.
var assetRef = regexp.MustCompile(`"/assets/([^"]+)"`)

func loadSite() (*site, error) {
	s := &site{assets: map[string]asset{}, hashed: map[string]string{}, pages: map[string][]byte{}, etags: map[string]string{}}
	for name, ctype := range map[string]string{
		"app.js":              "text/javascript; charset=utf-8",
		"app.css":             "text/css; charset=utf-8",
		"pow.js":              "text/javascript; charset=utf-8", // the proof-of-work Web Worker
		"gate.js":             "text/javascript; charset=utf-8",
		"gate.css":            "text/css; charset=utf-8",
		"vendor/zxing.min.js": "text/javascript; charset=utf-8", // the gate's QR decoder
	} {
		b, err := fs.ReadFile(assetFS, "assets/"+name)
		if err != nil {
			return nil, err
		}
		// Served flat: /assets/{name} is one path segment.
		h := hashedName(path.Base(name), b)
		s.assets[h] = asset{name: h, contentType: ctype, body: b}
		s.hashed[name] = "/assets/" + h
	}
	// The HTML names the logical files; point it at the hashed ones.
	var pairs []string
	for name, h := range s.hashed {
		pairs = append(pairs, `"/assets/`+name+`"`, `"`+h+`"`)
	}
	rep := strings.NewReplacer(pairs...)
	for _, p := range []string{"wait", "seats", "order", "gate"} {
		b, err := fs.ReadFile(assetFS, "assets/"+p+".html")
		if err != nil {
			return nil, err
		}
		out := rep.Replace(string(b))
		for _, m := range assetRef.FindAllStringSubmatch(out, -1) {
			if _, ok := s.assets[m[1]]; !ok {
				return nil, fmt.Errorf("web: %s.html references %s, which is not served", p, m[0])
			}
		}
		s.pages[p] = []byte(out)
		s.etags[p] = `"` + hashedName(p, []byte(out)) + `"`
	}
	pay, err := template.ParseFS(assetFS, "assets/pay.html")
	if err != nil {
		return nil, err
	}
	s.pay = pay
	return s, nil
}

// mustSite panics on a broken embedded file: that is a build defect, and
// TestAssets catches it.
func mustSite() *site {
	s, err := loadSite()
	if err != nil {
		panic(err)
	}
	return s
}

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

func (s *site) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := s.assets[r.PathValue("name")]
	if !ok {
		httpapi.WriteError(w, r, httpapi.ErrNotFound)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("Cache-Control", immutableCache)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("ETag", `"`+a.name+`"`)
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
}

func (s *site) servePage(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", pageCache)
		w.Header().Set("ETag", s.etags[name])
		http.ServeContent(w, r, name+".html", time.Time{}, bytes.NewReader(s.pages[name]))
	}
}
