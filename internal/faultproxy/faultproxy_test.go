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

package faultproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// echo serves line echo on loopback.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, r *bufio.Reader, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	_ = c.SetDeadline(start.Add(timeout))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	_, err := r.ReadString('\n')
	return time.Since(start), err
}

func TestProxyFaults(t *testing.T) {
	p, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if d, err := roundTrip(c, r, 2*time.Second); err != nil || d > 200*time.Millisecond {
		t.Fatalf("plain round trip: %v, %v", d, err)
	}

	p.SetLatency(300 * time.Millisecond)
	if d, err := roundTrip(c, r, 2*time.Second); err != nil || d < 300*time.Millisecond {
		t.Fatalf("round trip with 300ms latency took %v (%v)", d, err)
	}
	p.SetLatency(0)
	if d, err := roundTrip(c, r, 2*time.Second); err != nil || d > 200*time.Millisecond {
		t.Fatalf("round trip after latency: %v, %v", d, err)
	}

	p.SetBlackhole(true)
	if _, err := roundTrip(c, r, 300*time.Millisecond); err == nil {
		t.Fatal("a blackholed connection answered")
	}
	// A new connection during the blackhole is accepted but never answered.
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := roundTrip(c2, bufio.NewReader(c2), 300*time.Millisecond); err == nil {
		t.Fatal("a new connection answered during the blackhole")
	}
	p.SetBlackhole(false)
	// The broken streams were reset; fresh connections work again.
	if _, err := roundTrip(c, r, time.Second); err == nil {
		t.Fatal("a connection that lost bytes in the blackhole was not reset")
	}
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	r3 := bufio.NewReader(c3)
	if _, err := roundTrip(c3, r3, 2*time.Second); err != nil {
		t.Fatalf("after the blackhole: %v", err)
	}

	if n := p.ResetAll(); n < 1 {
		t.Fatalf("ResetAll reset %d connections", n)
	}
	if _, err := roundTrip(c3, r3, time.Second); err == nil {
		t.Fatal("a reset connection still answered")
	}
}
