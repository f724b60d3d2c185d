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

package localsvc_test

import (
	"context"
	"net/smtp"
	"strings"
	"testing"

	"github.com/ticketfair/ticketfair/internal/testenv"
)

// TestMailpitKeepsMailAcrossRestart: what arrived before a Stop is there
// after Start, on the same ports, and the API reads and deletes it.
func TestMailpitKeepsMailAcrossRestart(t *testing.T) {
	mp := testenv.Mailpit(t)
	ctx := context.Background()
	body := "From: a@example.com\r\nTo: b@example.com\r\nSubject: hello\r\nMessage-ID: <one@example.com>\r\n\r\nhi\r\n"
	if err := smtp.SendMail(mp.SMTPAddr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := mp.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := smtp.SendMail(mp.SMTPAddr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)); err == nil {
		t.Fatal("a stopped Mailpit accepted mail")
	}
	if err := mp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := mp.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].MessageID != "one@example.com" || list[0].Subject != "hello" {
		t.Fatalf("after a restart: %+v, want the one message", list)
	}
	msg, err := mp.Message(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(msg.Text) != "hi" || len(msg.To) != 1 || msg.To[0].Address != "b@example.com" {
		t.Errorf("message %+v", msg)
	}
	if err := mp.DeleteAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := mp.Count(ctx); err != nil || n != 0 {
		t.Fatalf("after DeleteAll: %d, %v", n, err)
	}
}
