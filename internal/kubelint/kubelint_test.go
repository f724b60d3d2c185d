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

package kubelint

import (
	"slices"
	"strings"
	"testing"
)

const good = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: app}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 2
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      serviceAccountName: app
      securityContext: {runAsNonRoot: true, runAsUser: 65532}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: a}}}
      containers:
        - name: c
          image: app:1.0
          ports: [{name: http, containerPort: 8080}]
          readinessProbe: {httpGet: {path: /readyz, port: http}}
          resources: {requests: {cpu: 10m, memory: 10Mi}, limits: {memory: 20Mi}}
          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  selector: {app: a}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: app}
spec:
  maxUnavailable: 1
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector: {matchLabels: {app: a}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  ttlSecondsAfterFinished: 60
  template:
    metadata: {labels: {job: once}}
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true}
      containers:
        - name: c
          image: app:1.0
          resources: {requests: {cpu: 10m, memory: 10Mi}, limits: {memory: 20Mi}}
          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
`

func lint(t *testing.T, y string) []string {
	t.Helper()
	objs, err := ParseYAML([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Lint(objs)
	if err != nil {
		t.Fatal(err)
	}
	var checks []string
	for _, f := range fs {
		checks = append(checks, f.Check)
	}
	return checks
}

// Every check fails on the defect it looks for and passes otherwise, so a
// clean result on the chart means something.
func TestChecksCatchTheirDefect(t *testing.T) {
	if got := lint(t, good); len(got) != 0 {
		t.Fatalf("clean objects flagged: %v", got)
	}
	cases := []struct{ check, old, new string }{
		{"no-anti-affinity", "podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: a}}}", "podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: other}}}"},
		{"pdb-unhealthy-pod-eviction-policy", "unhealthyPodEvictionPolicy: AlwaysAllow", "unhealthyPodEvictionPolicy: IfHealthyBudget"},
		{"pdb-max-unavailable", "maxUnavailable: 1", "maxUnavailable: 0"},
		{"job-ttl-seconds-after-finished", "ttlSecondsAfterFinished: 60", "activeDeadlineSeconds: 60"},
		{"dangling-service", "selector: {app: a}\n  ports", "selector: {app: b}\n  ports"},
		{"mismatching-selector", "selector: {matchLabels: {app: a}}\n  template", "selector: {matchLabels: {app: x}}\n  template"},
		{"non-existent-service-account", "serviceAccountName: app", "serviceAccountName: nobody"},
		{"latest-tag", "image: app:1.0\n          ports", "image: app:latest\n          ports"},
		{"no-read-only-root-fs", "readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n---", "readOnlyRootFilesystem: false, capabilities: {drop: [ALL]}}\n---"},
		{"privilege-escalation-container", "allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n---\napiVersion: v1\nkind: Service", "allowPrivilegeEscalation: true, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n---\napiVersion: v1\nkind: Service"},
		{"drop-net-raw-capability", "capabilities: {drop: [ALL]}}\n---\napiVersion: v1\nkind: Service", "capabilities: {drop: [CHOWN]}}\n---\napiVersion: v1\nkind: Service"},
		{"run-as-non-root", "securityContext: {runAsNonRoot: true}", "securityContext: {runAsUser: 0}"},
		{"unset-memory-requirements", "limits: {memory: 20Mi}}\n          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n---\napiVersion: v1", "limits: {}}\n          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n---\napiVersion: v1"},
		{"unset-cpu-requirements", "requests: {cpu: 10m, memory: 10Mi}, limits: {memory: 20Mi}}\n          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n---\napiVersion: v1", "requests: {memory: 10Mi}, limits: {memory: 20Mi}}\n          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n---\napiVersion: v1"},
		{"readiness-port", "port: http}}", "port: metrics}}"},
		{"invalid-target-ports", "targetPort: http}", "targetPort: not_a_valid_port_name}"},
		{"host-network", "serviceAccountName: app", "serviceAccountName: app\n      hostNetwork: true"},
		{"env-var-secret", "ports: [{name: http, containerPort: 8080}]", "ports: [{name: http, containerPort: 8080}]\n          env: [{name: WEBHOOK_SECRET, value: hunter2}]"},
	}
	for _, tc := range cases {
		t.Run(tc.check, func(t *testing.T) {
			if strings.Count(good, tc.old) != 1 {
				t.Fatalf("test setup: %q occurs %d times", tc.old, strings.Count(good, tc.old))
			}
			got := lint(t, strings.Replace(good, tc.old, tc.new, 1))
			if !slices.Contains(got, tc.check) {
				t.Fatalf("%s not reported; got %v", tc.check, got)
			}
		})
	}
}
