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

// Package doclinks checks the links of the project's Markdown documents:
// a relative link must reach a file of the repository and, with a
// #fragment into a Markdown file, one of its headings (by GitHub's
// slugs); an absolute link must be a well-formed http(s) URL. Nothing is
// fetched.
package doclinks

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Problem is one broken link.
type Problem struct {
	File   string // relative to the root, with slashes
	Line   int
	Link   string
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: link %q: %s", p.File, p.Line, p.Link, p.Reason)
}

// Files lists the documents whose links are checked, relative to root:
// README.md and every Markdown file under docs/ and charts/.
func Files(root string) ([]string, error) {
	var files []string
	if _, err := os.Stat(filepath.Join(root, "README.md")); err == nil {
		files = append(files, "README.md")
	}
	for _, dir := range []string{"docs", "charts"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && p == filepath.Join(root, dir) {
					return fs.SkipDir
				}
				return err
			}
			if !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".md") {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// Check checks every link of files (relative to root, with slashes).
func Check(root string, files []string) ([]Problem, error) {
	c := checker{root: root, anchors: map[string]map[string]bool{}}
	var problems []Problem
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(src) {
			if reason := c.check(f, l.Target); reason != "" {
				problems = append(problems, Problem{File: f, Line: l.Line, Link: l.Target, Reason: reason})
			}
		}
	}
	return problems, nil
}

type checker struct {
	root    string
	anchors map[string]map[string]bool // by file, relative to root
}

// check says what is wrong with the link target in file, or "".
func (c *checker) check(file, target string) string {
	if target == "" {
		return "empty link"
	}
	if i := strings.Index(target, ":"); i > 0 && !strings.ContainsAny(target[:i], "/?#") {
		switch scheme := strings.ToLower(target[:i]); scheme {
		case "http", "https":
			u, err := url.Parse(target)
			if err != nil {
				return "malformed URL: " + err.Error()
			}
			if u.Host == "" || strings.ContainsAny(target, " \t") {
				return "malformed URL: no host"
			}
			return ""
		case "mailto":
			return ""
		default:
			return "scheme " + scheme + ": only relative, http(s) and mailto links"
		}
	}
	p, frag, _ := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	p, err := url.PathUnescape(p)
	if err != nil {
		return "malformed path: " + err.Error()
	}
	dest := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			dest = path.Clean(strings.TrimPrefix(p, "/"))
		} else {
			dest = path.Join(path.Dir(file), p)
		}
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "outside the repository"
		}
		st, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(dest)))
		if err != nil {
			return "no file " + dest
		}
		if st.IsDir() {
			return ""
		}
	}
	if frag == "" || !strings.EqualFold(path.Ext(dest), ".md") {
		return "" // a fragment into another kind of file (a line: #L10) is left alone
	}
	frag, err = url.PathUnescape(frag)
	if err != nil {
		return "malformed fragment: " + err.Error()
	}
	anchors, err := c.anchorsOf(dest)
	if err != nil {
		return err.Error()
	}
	if !anchors[frag] {
		return fmt.Sprintf("no heading #%s in %s", frag, dest)
	}
	return ""
}

func (c *checker) anchorsOf(file string) (map[string]bool, error) {
	if a, ok := c.anchors[file]; ok {
		return a, nil
	}
	src, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	a := Anchors(src)
	c.anchors[file] = a
	return a, nil
}

// Link is one link target of a document and the line it is on.
type Link struct {
	Line   int
	Target string
}

var (
	// inlineLink is the target of [text](target "title") and ![alt](src).
	inlineLink = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	// refDef is a reference definition: [ref]: target.
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	// htmlLink is the src or href of an HTML element.
	htmlLink = regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`)
	// autoLink is <https://...>.
	autoLink = regexp.MustCompile(`<((?i:https?)://[^>\s]*)>`)
	// htmlAnchor is an element's id or a's name, which are anchors too.
	htmlAnchor = regexp.MustCompile(`(?i)<[a-z][^>]*\b(?:id|name)\s*=\s*"([^"]+)"`)
)

// Links returns the link targets of a Markdown document, outside code
// blocks and code spans.
func Links(src []byte) []Link {
	var links []Link
	eachLine(src, func(n int, line string) {
		line = stripCodeSpans(line)
		if m := refDef.FindStringSubmatch(line); m != nil {
			links = append(links, Link{n, strings.Trim(m[1], "<>")})
		}
		for _, re := range []*regexp.Regexp{inlineLink, htmlLink, autoLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				links = append(links, Link{n, strings.Trim(m[1], "<>")})
			}
		}
	})
	return links
}

// Anchors returns the fragments a document's headings (and HTML ids)
// answer to on GitHub: each ATX heading's slug, with -1, -2, ... for
// repeats.
func Anchors(src []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	eachLine(src, func(_ int, line string) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		text, ok := headingText(line)
		if !ok {
			return
		}
		slug := Slug(text)
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	})
	return anchors
}

// headingText is the text of an ATX heading line ("## text ##").
func headingText(line string) (string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, "#") {
		return "", false
	}
	level := len(t) - len(strings.TrimLeft(t, "#"))
	if level > 6 {
		return "", false
	}
	rest := t[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	// A closing sequence of #s preceded by a space is not part of the text.
	if trimmed := strings.TrimRight(rest, "#"); trimmed != rest && (trimmed == "" || strings.HasSuffix(trimmed, " ")) {
		rest = strings.TrimSpace(trimmed)
	}
	return rest, true
}

var (
	// mdLinkText keeps the text of [text](target) and ![alt](src).
	mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// Slug is GitHub's anchor for a heading: the rendered text in lower case,
// punctuation dropped (letters, digits, '_' and '-' stay), spaces as '-'.
func Slug(heading string) string {
	text := mdLinkText.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachLine calls fn with each line (numbered from 1) outside fenced code
// blocks and HTML comments.
func eachLine(src []byte, fn func(n int, line string)) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	fence := ""
	comment := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if comment {
			if strings.Contains(line, "-->") {
				comment = false
			}
			continue
		}
		if f := fenceOf(t); f != "" {
			fence = f
			continue
		}
		if i := strings.Index(line, "<!--"); i >= 0 && !strings.Contains(line[i:], "-->") {
			comment = true
			line = line[:i]
		}
		fn(n, line)
	}
}

// fenceOf is the opening fence (``` or ~~~, or longer) a line starts, or "".
func fenceOf(t string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(t, c+c+c) {
			n := len(t) - len(strings.TrimLeft(t, c))
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// stripCodeSpans blanks `code spans`, whose text is no link.
func stripCodeSpans(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 1
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		open := line[i : i+n]
		end := -1
		for j := i + n; j < len(line); {
			k := strings.Index(line[j:], open)
			if k < 0 {
				break
			}
			k += j
			if (k+n == len(line) || line[k+n] != '`') && line[k-1] != '`' {
				end = k
				break
			}
			j = k + 1
			for j < len(line) && line[j] == '`' {
				j++
			}
		}
		if end < 0 { // unmatched: literal backticks
			b.WriteString(open)
			i += n
			continue
		}
		b.WriteString(strings.Repeat(" ", end+n-i))
		i = end + n
	}
	return b.String()
}
