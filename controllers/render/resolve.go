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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ResolveEnv resolves a container's env as the kubelet would for a pod
// named podName in namespace ns: literals, ConfigMap and Secret keys, and
// the downward-API fields the operator uses (metadata.name,
// metadata.namespace). It lets a test run a rendered container as a local
// process with exactly the env its pod would get.
func ResolveEnv(ctx context.Context, c client.Reader, ns, podName string, ctr corev1.Container) ([]string, error) {
	out := make([]string, 0, len(ctr.Env))
	for _, e := range ctr.Env {
		v, err := resolve(ctx, c, ns, podName, e)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		out = append(out, e.Name+"="+v)
	}
	return out, nil
}

func resolve(ctx context.Context, c client.Reader, ns, podName string, e corev1.EnvVar) (string, error) {
	src := e.ValueFrom
	switch {
	case src == nil:
		return e.Value, nil
	case src.ConfigMapKeyRef != nil:
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: src.ConfigMapKeyRef.Name}, &cm); err != nil {
			return "", fmt.Errorf("get ConfigMap %s: %w", src.ConfigMapKeyRef.Name, err)
		}
		v, ok := cm.Data[src.ConfigMapKeyRef.Key]
		if !ok {
			return "", fmt.Errorf("key %s missing in ConfigMap %s", src.ConfigMapKeyRef.Key, cm.Name)
		}
		return v, nil
	case src.SecretKeyRef != nil:
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: src.SecretKeyRef.Name}, &s); err != nil {
			return "", fmt.Errorf("get Secret %s: %w", src.SecretKeyRef.Name, err)
		}
		v, ok := s.Data[src.SecretKeyRef.Key]
		if !ok {
			return "", fmt.Errorf("key %s missing in Secret %s", src.SecretKeyRef.Key, s.Name)
		}
		return string(v), nil
	case src.FieldRef != nil:
		switch src.FieldRef.FieldPath {
		case "metadata.name":
			return podName, nil
		case "metadata.namespace":
			return ns, nil
		}
		return "", fmt.Errorf("unsupported field %s", src.FieldRef.FieldPath)
	}
	return "", fmt.Errorf("unsupported env source")
}
