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

package render

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// The connections to Redis, PostgreSQL and Kafka: every credential and
// certificate reaches the container from its Secret, never as a value.

func redisConfig(dst *config.Redis, r *ticketsv1alpha1.Redis) {
	dst.RedisURL = secretRef(r.URLSecretRef)
	if r.Mode != "" {
		dst.RedisMode = strings.ToLower(string(r.Mode))
	}
	dst.RedisMasterName = r.MasterName
	dst.RedisUsername = optSecretRef(r.UsernameSecretRef)
	dst.RedisPassword = optSecretRef(r.PasswordSecretRef)
	dst.RedisSentinelUsername = optSecretRef(r.SentinelUsernameSecretRef)
	dst.RedisSentinelPassword = optSecretRef(r.SentinelPasswordSecretRef)
	if t := r.TLS; t != nil {
		dst.RedisTLS = true
		dst.RedisTLSCA = optSecretRef(t.CASecretRef)
		dst.RedisTLSCert = optSecretRef(t.CertSecretRef)
		dst.RedisTLSKey = optSecretRef(t.KeySecretRef)
		dst.RedisTLSServerName = t.ServerName
	}
}

func postgresConfig(dst *config.Postgres, p *ticketsv1alpha1.Postgres) {
	dst.DatabaseURL = secretRef(p.URLSecretRef)
	dst.DatabaseTLSCA = optSecretRef(p.CASecretRef)
}

func kafkaSecurity(dst *config.Kafka, k *ticketsv1alpha1.Kafka) {
	if t := k.TLS; t != nil {
		dst.KafkaTLS = true
		dst.KafkaTLSCA = optSecretRef(t.CASecretRef)
		dst.KafkaTLSCert = optSecretRef(t.CertSecretRef)
		dst.KafkaTLSKey = optSecretRef(t.KeySecretRef)
		dst.KafkaTLSServerName = t.ServerName
	}
	if s := k.SASL; s != nil {
		dst.KafkaSASLMechanism = s.Mechanism
		dst.KafkaUsername = secretRef(s.UsernameSecretRef)
		dst.KafkaPassword = secretRef(s.PasswordSecretRef)
	}
}

func optSecretRef(s *corev1.SecretKeySelector) string {
	if s == nil {
		return ""
	}
	return secretRef(*s)
}

// RedisConfig is the workloads' Redis configuration of spec.redis, with
// every credential as a Secret reference (see SecretRef): the operator
// resolves them itself for --redis-cleanup.
func RedisConfig(r *ticketsv1alpha1.Redis) config.Redis {
	var c config.Redis
	defaults(&c)
	redisConfig(&c, r)
	return c
}

// SecretRef decodes a configuration value that refers to a Secret's key.
func SecretRef(value string) (corev1.SecretKeySelector, bool) {
	rest, ok := strings.CutPrefix(value, refPrefix+"secret:")
	if !ok {
		return corev1.SecretKeySelector{}, false
	}
	name, key, ok := strings.Cut(rest, "/")
	return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}, ok
}
