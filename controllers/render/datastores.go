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

func redisConfig(dst *config.Redis, r *ticketsv1alpha1.Redis, refs envRefs) {
	refs.secret(&dst.RedisURL, r.URLSecretRef)
	if r.Mode != "" {
		dst.RedisMode = strings.ToLower(string(r.Mode))
	}
	dst.RedisMasterName = r.MasterName
	refs.optSecret(&dst.RedisUsername, r.UsernameSecretRef)
	refs.optSecret(&dst.RedisPassword, r.PasswordSecretRef)
	refs.optSecret(&dst.RedisSentinelUsername, r.SentinelUsernameSecretRef)
	refs.optSecret(&dst.RedisSentinelPassword, r.SentinelPasswordSecretRef)
	if t := r.TLS; t != nil {
		dst.RedisTLS = true
		refs.optSecret(&dst.RedisTLSCA, t.CASecretRef)
		refs.optSecret(&dst.RedisTLSCert, t.CertSecretRef)
		refs.optSecret(&dst.RedisTLSKey, t.KeySecretRef)
		dst.RedisTLSServerName = t.ServerName
	}
}

func postgresConfig(dst *config.Postgres, p *ticketsv1alpha1.Postgres, refs envRefs) {
	refs.secret(&dst.DatabaseURL, p.URLSecretRef)
	refs.optSecret(&dst.DatabaseTLSCA, p.CASecretRef)
}

func kafkaSecurity(dst *config.Kafka, k *ticketsv1alpha1.Kafka, refs envRefs) {
	if t := k.TLS; t != nil {
		dst.KafkaTLS = true
		refs.optSecret(&dst.KafkaTLSCA, t.CASecretRef)
		refs.optSecret(&dst.KafkaTLSCert, t.CertSecretRef)
		refs.optSecret(&dst.KafkaTLSKey, t.KeySecretRef)
		dst.KafkaTLSServerName = t.ServerName
	}
	if s := k.SASL; s != nil {
		dst.KafkaSASLMechanism = s.Mechanism
		refs.secret(&dst.KafkaUsername, s.UsernameSecretRef)
		refs.secret(&dst.KafkaPassword, s.PasswordSecretRef)
	}
}

// RedisEnv is the workloads' Redis configuration of spec.redis as env vars:
// a literal value, or (every credential) a reference to a Secret's key. The
// operator resolves them itself for --redis-cleanup.
func RedisEnv(r *ticketsv1alpha1.Redis) ([]corev1.EnvVar, error) {
	var c config.Redis
	if err := defaults(&c); err != nil {
		return nil, err
	}
	refs := envRefs{}
	redisConfig(&c, r, refs)
	var out []corev1.EnvVar
	for _, v := range config.Render(&c) {
		if src := refs.of(v); src != nil {
			out = append(out, corev1.EnvVar{Name: v.Name, ValueFrom: src.DeepCopy()})
			continue
		}
		out = append(out, corev1.EnvVar{Name: v.Name, Value: v.Value})
	}
	return out, nil
}
