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

package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ticketfair/ticketfair/internal/localsvc"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// Certs is a throwaway CA with a server certificate (localhost, 127.0.0.1)
// and a client certificate it signed, as PEM text and as files.
type Certs struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string // PEM
	// Files of the same, for servers' command lines.
	CAFile, ServerCertFile, ServerKeyFile string
}

// NewCerts generates Certs in a temporary directory of t.
func NewCerts(t testing.TB) Certs {
	t.Helper()
	c, err := newCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newCerts(dir string) (Certs, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certs{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ticketfair test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return Certs{}, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) (string, string, error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", "", err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames, tmpl.IPAddresses = []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			return "", "", err
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return "", "", err
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
			string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})), nil
	}
	c := Certs{CA: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))}
	if c.ServerCert, c.ServerKey, err = leaf(2, "localhost", x509.ExtKeyUsageServerAuth); err != nil {
		return Certs{}, err
	}
	if c.ClientCert, c.ClientKey, err = leaf(3, "ticketfair", x509.ExtKeyUsageClientAuth); err != nil {
		return Certs{}, err
	}
	c.CAFile, c.ServerCertFile, c.ServerKeyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	for path, body := range map[string]string{c.CAFile: c.CA, c.ServerCertFile: c.ServerCert, c.ServerKeyFile: c.ServerKey} {
		// Readable by a server running as another user (PostgreSQL).
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return Certs{}, err
		}
	}
	return c, nil
}

// RedisSecureUser and RedisSecurePassword are the ACL user of RedisSecure;
// the default user is off.
const (
	RedisSecureUser     = "ticketfair"
	RedisSecurePassword = "s3cret-acl-password"
)

// RedisSecure starts a redis-server that speaks only TLS, requires a client
// certificate signed by its CA and knows only the ACL user
// RedisSecureUser, and returns the configuration that reaches it, with the
// certificates.
func RedisSecure(t testing.TB) (config.Redis, Certs) {
	t.Helper()
	certs := NewCerts(t)
	s, err := localsvc.StartRedisNode(context.Background(), true,
		"--tls-cert-file", certs.ServerCertFile, "--tls-key-file", certs.ServerKeyFile,
		"--tls-ca-cert-file", certs.CAFile, "--tls-auth-clients", "yes",
		"--user", "default", "off",
		"--user", RedisSecureUser, "on", ">"+RedisSecurePassword, "~*", "&*", "+@all")
	if err != nil {
		Unavailable(t, "redis-server with TLS", err)
		return config.Redis{}, certs
	}
	t.Cleanup(func() { _ = s.Stop() })
	cfg := redisDefaults()
	cfg.RedisURL = fmt.Sprintf("rediss://%s/0", s.Addr)
	cfg.RedisUsername, cfg.RedisPassword = RedisSecureUser, RedisSecurePassword
	cfg.RedisTLSCA, cfg.RedisTLSCert, cfg.RedisTLSKey = certs.CA, certs.ClientCert, certs.ClientKey
	return cfg, certs
}

// RedisSentinel starts a master, a replica and three sentinels (the master
// is declared down after downAfter) and returns them with the sentinel-mode
// configuration that reaches the master.
func RedisSentinel(t testing.TB, downAfter time.Duration) (*localsvc.RedisSentinel, config.Redis) {
	t.Helper()
	h, err := localsvc.StartRedisSentinel(context.Background(), "ticketfair", 3, downAfter)
	if err != nil {
		Unavailable(t, "redis-server and redis-sentinel", err)
		return nil, config.Redis{}
	}
	t.Cleanup(h.Stop)
	cfg := redisDefaults()
	cfg.RedisURL, cfg.RedisMode, cfg.RedisMasterName = h.URL, "sentinel", h.MasterName
	return h, cfg
}

// RedisCluster starts a Redis Cluster of 3 masters with a replica each and
// returns it with the cluster-mode configuration that reaches it.
func RedisCluster(t testing.TB, nodeTimeout time.Duration) (*localsvc.RedisCluster, config.Redis) {
	t.Helper()
	c, err := localsvc.StartRedisCluster(context.Background(), 3, 1, nodeTimeout)
	if err != nil {
		Unavailable(t, "redis-server cluster", err)
		return nil, config.Redis{}
	}
	t.Cleanup(c.Stop)
	cfg := redisDefaults()
	cfg.RedisURL, cfg.RedisMode = c.URL, "cluster"
	return c, cfg
}

func redisDefaults() config.Redis {
	return config.DefaultsOf[config.Redis]()
}
