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

// Package faultproxy is a minimal TCP proxy that injects network faults
// between a service and its store: added latency, a blackhole (bytes are
// swallowed, nothing answers) and connection resets. The local sale's
// fault plans put one in front of PostgreSQL and Redis.
package faultproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections from its listener to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu        sync.Mutex
	latency   time.Duration
	blackhole bool
	conns     map[*link]struct{}
	closed    bool
	wg        sync.WaitGroup
}

// link is one proxied connection: the client's side and the target's side.
type link struct {
	client, server net.Conn
	once           sync.Once
}

// close resets both sides (SO_LINGER 0 sends RST instead of FIN).
func (l *link) close() {
	l.once.Do(func() {
		for _, c := range []net.Conn{l.client, l.server} {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
		}
	})
}

// Start listens on a free loopback port and forwards to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port, where clients connect instead of target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting and resets every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.ResetAll()
	p.wg.Wait()
	return err
}

// SetLatency delays every chunk of bytes from the client to the target by
// d, in order, so each request/response round trip takes d longer. 0 ends it.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// SetBlackhole swallows every byte in both directions while on: clients see
// a store that accepts connections and never answers. Turning it off
// resets the connections that lost bytes, since their streams are broken.
func (p *Proxy) SetBlackhole(on bool) {
	p.mu.Lock()
	was := p.blackhole
	p.blackhole = on
	p.mu.Unlock()
	if was && !on {
		p.ResetAll()
	}
}

// ResetAll resets every open connection; new ones are accepted as usual.
func (p *Proxy) ResetAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	return len(links)
}

func (p *Proxy) state() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency, p.blackhole
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		if tc, ok := client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		client.Close()
		return
	}
	l := &link{client: client, server: server}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close()
		return
	}
	p.conns[l] = struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(client, server, true); l.close() }()
	go func() { defer wg.Done(); p.pipe(server, client, false); l.close() }()
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
}

type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst. Upstream chunks wait out the latency in a
// second goroutine so reading never stalls behind a delayed write.
func (p *Proxy) pipe(src, dst net.Conn, upstream bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan chunk, 256)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for c := range ch {
			if d := time.Until(c.at); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return
				}
			}
			if _, err := dst.Write(c.b); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			latency, hole := p.state()
			if !hole {
				at := time.Now()
				if upstream {
					at = at.Add(latency)
				}
				select {
				case ch <- chunk{b: append([]byte(nil), buf[:n]...), at: at}:
				case <-writerDone:
					close(ch)
					return
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				cancel()
			}
			close(ch)
			<-writerDone
			return
		}
	}
}
