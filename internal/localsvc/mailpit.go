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

package localsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Mailpit is a Mailpit server: SMTP in, a REST API to read what arrived.
// Stop and Start keep its ports and database, so a test can take the mail
// server away and bring it back with the messages it had.
type Mailpit struct {
	SMTPHost string // loopback address the SMTP server listens on
	SMTPPort int
	APIURL   string // base URL of the HTTP API, http://host:port
	Dir      string // database and logs, removed by Close

	bin     string
	tlsArgs []string
	apiAddr string
	http    *http.Client

	mu  sync.Mutex
	srv *Server // nil while stopped
}

// MailpitBinary finds the mailpit binary: bin/mailpit of the module
// (make mailpit builds it there), then PATH.
func MailpitBinary() (string, error) {
	if root, err := ModuleRoot(); err == nil {
		p := filepath.Join(root, "bin", "mailpit")
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("mailpit"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("mailpit: %w (make mailpit)", ErrMissing)
}

// ModuleRoot finds the directory holding go.mod, walking up from the
// working directory (a test runs in its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// MailpitConfig says how to start Mailpit.
type MailpitConfig struct {
	// PEM files of the SMTP server's certificate and key. With them the
	// server requires STARTTLS, or TLS from the first byte with
	// ImplicitTLS; without them it speaks plain SMTP.
	TLSCertFile, TLSKeyFile string
	ImplicitTLS             bool
}

// StartMailpit starts Mailpit on free loopback ports with a database in a
// new temporary directory. It accepts any SMTP credentials, also without
// TLS, so clients may authenticate or not.
func StartMailpit(ctx context.Context) (*Mailpit, error) {
	return StartMailpitWith(ctx, MailpitConfig{})
}

// StartMailpitWith is StartMailpit as c says.
func StartMailpitWith(ctx context.Context, c MailpitConfig) (*Mailpit, error) {
	bin, err := MailpitBinary()
	if err != nil {
		return nil, err
	}
	smtpPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	apiPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ticketfair-mailpit-")
	if err != nil {
		return nil, err
	}
	m := &Mailpit{
		SMTPHost: "127.0.0.1",
		SMTPPort: smtpPort,
		Dir:      dir,
		bin:      bin,
		apiAddr:  net.JoinHostPort("127.0.0.1", strconv.Itoa(apiPort)),
		http:     &http.Client{Timeout: 30 * time.Second},
	}
	if c.TLSCertFile != "" {
		m.tlsArgs = []string{"--smtp-tls-cert", c.TLSCertFile, "--smtp-tls-key", c.TLSKeyFile, "--smtp-require-starttls"}
		if c.ImplicitTLS {
			m.tlsArgs[len(m.tlsArgs)-1] = "--smtp-require-tls"
		}
	}
	m.APIURL = "http://" + m.apiAddr
	if err := m.Start(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return m, nil
}

// SMTPAddr is the SMTP server's host:port.
func (m *Mailpit) SMTPAddr() string {
	return net.JoinHostPort(m.SMTPHost, strconv.Itoa(m.SMTPPort))
}

// Start starts a stopped server again on the same ports with the same
// database. It is a no-op while the server runs.
func (m *Mailpit) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srv != nil {
		return nil
	}
	cmd := exec.Command(m.bin,
		"--smtp", m.SMTPAddr(), "--listen", m.apiAddr,
		"--database", filepath.Join(m.Dir, "mailpit.db"),
		"--smtp-auth-accept-any",
		// No lookups a sandbox cannot answer, and no pruning: a
		// benchmark's messages all stay countable.
		"--smtp-disable-rdns", "--disable-version-check", "--max", "0")
	if m.tlsArgs == nil {
		cmd.Args = append(cmd.Args, "--smtp-auth-allow-insecure") // PLAIN and LOGIN without TLS
	}
	cmd.Args = append(cmd.Args, m.tlsArgs...)
	logPath := filepath.Join(m.Dir, fmt.Sprintf("mailpit-%d.log", time.Now().UnixNano()))
	s, err := start("mailpit", cmd, logPath)
	if err != nil {
		return err
	}
	s.Dir, s.Port, s.Keep = m.Dir, m.SMTPPort, true
	s.Addr, s.URL = m.SMTPAddr(), "smtp://"+m.SMTPAddr()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.waitTCP(wctx, logPath); err != nil {
		_ = s.Stop()
		return err
	}
	// The API answers once the database is open.
	for {
		if err := m.get(wctx, "/readyz", nil); err == nil {
			break
		}
		select {
		case err := <-s.done:
			s.done <- err
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("mailpit exited before it was ready: %v\n%s", err, out)
		case <-wctx.Done():
			_ = s.Stop()
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("mailpit API not ready: %w\n%s", wctx.Err(), out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	m.srv = s
	return nil
}

// Stop stops the server, keeping its database for Start.
func (m *Mailpit) Stop() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srv == nil {
		return nil
	}
	err := m.srv.Stop()
	m.srv = nil
	return err
}

// Restart stops the server if it runs and starts it again: same ports,
// same database.
func (m *Mailpit) Restart(ctx context.Context) error {
	if err := m.Stop(); err != nil {
		return err
	}
	return m.Start(ctx)
}

// Close stops the server and removes its directory.
func (m *Mailpit) Close() error {
	err := m.Stop()
	return errors.Join(err, os.RemoveAll(m.Dir))
}

// MailpitSummary is a message as the list shows it.
type MailpitSummary struct {
	ID          string // Mailpit's id, for Message and Part
	MessageID   string // the Message-ID header, without angle brackets
	From        *mail.Address
	To          []*mail.Address
	Subject     string
	Username    string // the SMTP user that sent it ("" without authentication)
	Attachments int
	Size        uint64
	Created     time.Time
}

// MailpitMessage is one message, parsed.
type MailpitMessage struct {
	ID          string
	MessageID   string
	From        *mail.Address
	To          []*mail.Address
	Subject     string
	Date        time.Time
	Text        string
	HTML        string
	Inline      []MailpitPart // parts referenced from the HTML (Content-ID)
	Attachments []MailpitPart
	Size        uint64
}

// MailpitPart is an inline part or an attachment.
type MailpitPart struct {
	PartID      string
	FileName    string
	ContentType string
	ContentID   string
	Size        uint64
}

// Count is how many messages the server holds.
func (m *Mailpit) Count(ctx context.Context) (int, error) {
	var page struct {
		Total int `json:"total"`
	}
	if err := m.get(ctx, "/api/v1/messages?limit=1", &page); err != nil {
		return 0, err
	}
	return page.Total, nil
}

// Messages lists every message, newest first.
func (m *Mailpit) Messages(ctx context.Context) ([]MailpitSummary, error) {
	const limit = 500
	var all []MailpitSummary
	for {
		var page struct {
			Total    int              `json:"total"`
			Messages []MailpitSummary `json:"messages"`
		}
		q := url.Values{"start": {strconv.Itoa(len(all))}, "limit": {strconv.Itoa(limit)}}
		if err := m.get(ctx, "/api/v1/messages?"+q.Encode(), &page); err != nil {
			return nil, err
		}
		all = append(all, page.Messages...)
		if len(page.Messages) == 0 || len(all) >= page.Total {
			return all, nil
		}
	}
}

// Message returns one message by Mailpit's id.
func (m *Mailpit) Message(ctx context.Context, id string) (*MailpitMessage, error) {
	var msg MailpitMessage
	if err := m.get(ctx, "/api/v1/message/"+url.PathEscape(id), &msg); err != nil {
		return nil, err
	}
	return &msg, nil
}

// Headers returns the headers of a message by Mailpit's id.
func (m *Mailpit) Headers(ctx context.Context, id string) (map[string][]string, error) {
	var h map[string][]string
	if err := m.get(ctx, "/api/v1/message/"+url.PathEscape(id)+"/headers", &h); err != nil {
		return nil, err
	}
	return h, nil
}

// Part returns the decoded body of a message's part (an inline image, an
// attachment).
func (m *Mailpit) Part(ctx context.Context, id, partID string) ([]byte, error) {
	return m.raw(ctx, http.MethodGet, "/api/v1/message/"+url.PathEscape(id)+"/part/"+url.PathEscape(partID), nil)
}

// Raw returns a message as it arrived, headers and MIME parts.
func (m *Mailpit) Raw(ctx context.Context, id string) ([]byte, error) {
	return m.raw(ctx, http.MethodGet, "/api/v1/message/"+url.PathEscape(id)+"/raw", nil)
}

// DeleteAll deletes every message.
func (m *Mailpit) DeleteAll(ctx context.Context) error {
	_, err := m.raw(ctx, http.MethodDelete, "/api/v1/messages", nil)
	return err
}

func (m *Mailpit) get(ctx context.Context, path string, dst any) error {
	body, err := m.raw(ctx, http.MethodGet, path, nil)
	if err != nil || dst == nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("mailpit %s: %w", path, err)
	}
	return nil
}

func (m *Mailpit) raw(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, m.APIURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mailpit %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("mailpit %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("mailpit %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}
