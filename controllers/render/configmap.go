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
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// configMap holds a workload's plain configuration values, which its
// container's env refers to by key (see renderEnv).
func configMap(te *ticketsv1alpha1.TicketEvent, c Component, e renderedEnv) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(te, c, Name(te, c)),
		Data:       e.data,
	}
}

// envRefs maps a config field (its address, as config.Var.Field gives it)
// to where its value comes from when it is not a literal: a Secret's key or
// a field of the pod. renderEnv turns such a field into a valueFrom env var.
type envRefs map[any]*corev1.EnvVarSource

// secret makes the field's value come from the Secret key s.
func (r envRefs) secret(field *string, s corev1.SecretKeySelector) {
	*field = ""
	r[field] = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: s.Key}}
}

// optSecret is secret when s is set, and otherwise leaves the field alone.
func (r envRefs) optSecret(field *string, s *corev1.SecretKeySelector) {
	if s != nil {
		r.secret(field, *s)
	}
}

// field makes the field's value come from the pod's field at path (the
// downward API).
func (r envRefs) field(field *string, path string) {
	*field = ""
	r[field] = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
}

// of is the source of v's value, nil for a literal.
func (r envRefs) of(v config.Var) *corev1.EnvVarSource {
	if v.Field == nil {
		return nil
	}
	return r[v.Field]
}

// renderedEnv is the env of a container and the ConfigMap data it refers to.
type renderedEnv struct {
	env  []corev1.EnvVar
	data map[string]string
	hash string // of everything read only at start
}

func renderEnv(configMap string, vars []config.Var, refs envRefs) (renderedEnv, error) {
	e := renderedEnv{data: map[string]string{}}
	h := sha256.New()
	used := 0
	for _, v := range vars {
		switch src := refs.of(v); {
		case src != nil:
			used++
			if src.SecretKeyRef != nil && (src.SecretKeyRef.Name == "" || src.SecretKeyRef.Key == "") {
				return e, fmt.Errorf("%s: secret reference %s/%s needs a name and a key", v.Name, src.SecretKeyRef.Name, src.SecretKeyRef.Key)
			}
			e.env = append(e.env, corev1.EnvVar{Name: v.Name, ValueFrom: src.DeepCopy()})
		case v.Secret && v.Value == "":
			// An optional credential that this sale does not use.
		case v.Secret:
			return e, fmt.Errorf("%s is a credential and may only come from a Secret", v.Name)
		case v.Value == "":
			// Unset without a default: the workload's zero value applies anyway.
		default:
			e.data[v.Name] = v.Value
			e.env = append(e.env, corev1.EnvVar{Name: v.Name, ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Key: v.Name},
			}})
			if !v.Live {
				fmt.Fprintf(h, "%s=%s\n", v.Name, v.Value)
			}
		}
	}
	if used != len(refs) {
		// A reference to a field of another struct (a copy, say) would
		// silently lose its Secret.
		return e, fmt.Errorf("%d of %d references are to fields that were not rendered", len(refs)-used, len(refs))
	}
	e.hash = hex.EncodeToString(h.Sum(nil))[:16]
	return e, nil
}
