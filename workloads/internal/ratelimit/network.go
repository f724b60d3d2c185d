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

package ratelimit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Network is the client network an address belongs to, the unit one
// household, office or NAT usually gets: the /24 of an IPv4 address (and of
// an IPv4-mapped IPv6 one), the /64 of an IPv6 address. It is "" for an
// invalid address.
func Network(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	a = a.Unmap()
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, err := a.WithZone("").Prefix(bits)
	if err != nil {
		return ""
	}
	return p.String()
}

// ClientAddr is the address of the client of r: the peer of the
// connection, or, when header is set (the deployment says a trusted proxy
// in front writes it, such as X-Forwarded-For), the last address in that
// header: the one the trusted proxy itself saw, which a client cannot
// forge by sending the header too (a proxy appends to what it received).
// A header that holds no valid address falls back to the peer.
func ClientAddr(r *http.Request, header string) netip.Addr {
	if header != "" {
		if v := r.Header.Values(header); len(v) > 0 {
			last := v[len(v)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if a, err := netip.ParseAddr(strings.TrimSpace(last)); err == nil {
				return a
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a
}
