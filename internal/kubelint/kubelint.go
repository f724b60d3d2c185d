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

// Package kubelint checks Kubernetes objects against kube-linter's default
// checks (stackrox/kube-linter, docs/generated/checks.md), plus the
// PodDisruptionBudget and Job checks of its newer releases. kube-linter
// itself cannot be built here, so the tests of the chart and of the
// operator's rendered objects run these equivalents over the same objects.
//
// Checks: dangling-service, deprecated-service-account-field, docker-sock,
// sensitive-host-mounts, drop-net-raw-capability, env-var-secret, host-ipc,
// host-network, host-pid, latest-tag, mismatching-selector, no-anti-affinity
// (pod anti-affinity or a hostname/zone topology spread), no-extensions-v1beta,
// no-read-only-root-fs, non-existent-service-account,
// privilege-escalation-container, privileged-container, run-as-non-root,
// ssh-port, unsafe-sysctls, unset-cpu-requirements,
// unset-memory-requirements, liveness-port, readiness-port,
// pdb-max-unavailable, pdb-min-available, pdb-unhealthy-pod-eviction-policy,
// job-ttl-seconds-after-finished.
package kubelint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Finding is one failed check on one object.
type Finding struct {
	Check  string
	Object string // Kind/name
	Detail string
}

func (f Finding) String() string { return f.Check + " " + f.Object + ": " + f.Detail }

// podOwner is a workload with a pod template.
type podOwner struct {
	name     string
	replicas int32
	selector *metav1.LabelSelector
	template corev1.PodTemplateSpec
	job      *batchv1.Job
}

// ParseYAML splits a multi-document YAML stream (helm template, kustomize
// build) into objects; empty documents are skipped.
func ParseYAML(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("parse: %w\n%s", err, doc)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// Lint runs every check over objs and returns what failed.
func Lint(objs []*unstructured.Unstructured) ([]Finding, error) {
	var fs []Finding
	add := func(check, obj, format string, args ...any) {
		fs = append(fs, Finding{Check: check, Object: obj, Detail: fmt.Sprintf(format, args...)})
	}
	var owners []podOwner
	var services []corev1.Service
	serviceAccounts := map[string]bool{"": true, "default": true}
	for _, u := range objs {
		kind, name := u.GetKind(), u.GetKind()+"/"+u.GetName()
		if gv := u.GetAPIVersion(); strings.HasPrefix(gv, "extensions/v1beta") {
			add("no-extensions-v1beta", name, "uses %s", gv)
		}
		switch kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			n := int32(1)
			if d.Spec.Replicas != nil {
				n = *d.Spec.Replicas
			}
			owners = append(owners, podOwner{name: name, replicas: n, selector: d.Spec.Selector, template: d.Spec.Template})
		case "Job":
			var j batchv1.Job
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &j); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			owners = append(owners, podOwner{name: name, replicas: 1, selector: j.Spec.Selector, template: j.Spec.Template, job: &j})
		case "Service":
			var s corev1.Service
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			services = append(services, s)
		case "ServiceAccount":
			serviceAccounts[u.GetName()] = true
		case "PodDisruptionBudget":
			var p policyv1.PodDisruptionBudget
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if mu := p.Spec.MaxUnavailable; mu != nil && (mu.String() == "0" || mu.String() == "0%") {
				add("pdb-max-unavailable", name, "maxUnavailable 0 blocks every voluntary eviction")
			}
			if ma := p.Spec.MinAvailable; ma != nil && ma.String() == "100%" {
				add("pdb-min-available", name, "minAvailable 100%% blocks every voluntary eviction")
			}
			if p.Spec.UnhealthyPodEvictionPolicy == nil || *p.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
				add("pdb-unhealthy-pod-eviction-policy", name, "unhealthyPodEvictionPolicy is not AlwaysAllow: a drain waits on pods that are not ready")
			}
		}
	}

	for _, o := range owners {
		pod := o.template.Spec
		if o.job != nil && o.job.Spec.TTLSecondsAfterFinished == nil {
			add("job-ttl-seconds-after-finished", o.name, "standalone Job without ttlSecondsAfterFinished: finished Jobs pile up")
		}
		if o.job == nil && o.selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(o.selector)
			if err != nil || !sel.Matches(labels.Set(o.template.Labels)) {
				add("mismatching-selector", o.name, "selector %v does not match the pod labels %v", o.selector, o.template.Labels)
			}
		}
		if pod.DeprecatedServiceAccount != "" && pod.DeprecatedServiceAccount != pod.ServiceAccountName {
			add("deprecated-service-account-field", o.name, "serviceAccount %q", pod.DeprecatedServiceAccount)
		}
		if !serviceAccounts[pod.ServiceAccountName] {
			add("non-existent-service-account", o.name, "serviceAccountName %q is not among the objects", pod.ServiceAccountName)
		}
		if pod.HostIPC {
			add("host-ipc", o.name, "hostIPC")
		}
		if pod.HostNetwork {
			add("host-network", o.name, "hostNetwork")
		}
		if pod.HostPID {
			add("host-pid", o.name, "hostPID")
		}
		for _, v := range pod.Volumes {
			if v.HostPath == nil {
				continue
			}
			if strings.HasSuffix(v.HostPath.Path, "docker.sock") {
				add("docker-sock", o.name, "mounts %s", v.HostPath.Path)
			}
			if slices.Contains([]string{"/", "/boot", "/dev", "/etc", "/lib", "/proc", "/sys", "/usr"}, v.HostPath.Path) {
				add("sensitive-host-mounts", o.name, "mounts %s", v.HostPath.Path)
			}
		}
		if pod.SecurityContext != nil {
			for _, s := range pod.SecurityContext.Sysctls {
				if !safeSysctl(s.Name) {
					add("unsafe-sysctls", o.name, "sysctl %s", s.Name)
				}
			}
		}
		if o.replicas >= 2 && !spreadsReplicas(pod, o.template.Labels) {
			add("no-anti-affinity", o.name, "%d replicas without pod anti-affinity or topology spread over nodes", o.replicas)
		}
		for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
			lintContainer(add, o.name+" container "+c.Name, pod, c)
		}
	}

	for _, s := range services {
		name := "Service/" + s.Name
		for _, p := range s.Spec.Ports {
			if p.TargetPort.Type == intstr.String && len(validation.IsValidPortName(p.TargetPort.StrVal)) > 0 {
				add("invalid-target-ports", name, "targetPort %q is not a valid port name", p.TargetPort.StrVal)
			}
		}
		if len(s.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(s.Spec.Selector)
		matched := false
		for _, o := range owners {
			if sel.Matches(labels.Set(o.template.Labels)) {
				matched = true
			}
		}
		if !matched {
			add("dangling-service", name, "selector %v matches no pod template", s.Spec.Selector)
		}
	}
	return fs, nil
}

func lintContainer(add func(check, obj, format string, args ...any), name string, pod corev1.PodSpec, c corev1.Container) {
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	if sc.Privileged != nil && *sc.Privileged {
		add("privileged-container", name, "privileged")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		add("privilege-escalation-container", name, "allowPrivilegeEscalation is not false")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		add("no-read-only-root-fs", name, "readOnlyRootFilesystem is not true")
	}
	var caps []corev1.Capability
	if sc.Capabilities != nil {
		caps = sc.Capabilities.Drop
	}
	if !slices.Contains(caps, "ALL") && !slices.Contains(caps, "NET_RAW") {
		add("drop-net-raw-capability", name, "NET_RAW is not dropped")
	}
	if sc.Capabilities != nil && (slices.Contains(sc.Capabilities.Add, "NET_RAW") || slices.Contains(sc.Capabilities.Add, "ALL")) {
		add("drop-net-raw-capability", name, "adds NET_RAW")
	}
	nonRoot, uid := false, (*int64)(nil)
	if p := pod.SecurityContext; p != nil {
		nonRoot = p.RunAsNonRoot != nil && *p.RunAsNonRoot
		uid = p.RunAsUser
	}
	if sc.RunAsNonRoot != nil {
		nonRoot = *sc.RunAsNonRoot
	}
	if sc.RunAsUser != nil {
		uid = sc.RunAsUser
	}
	if !nonRoot && (uid == nil || *uid == 0) || uid != nil && *uid == 0 {
		add("run-as-non-root", name, "neither runAsNonRoot nor a non-zero runAsUser")
	}
	img := c.Image
	if i := strings.LastIndex(img, "@"); i >= 0 {
		img = img[:i]
	}
	if tag := img[strings.LastIndex(img, "/")+1:]; !strings.Contains(tag, ":") || strings.HasSuffix(tag, ":latest") {
		add("latest-tag", name, "image %q has no tag or :latest", c.Image)
	}
	for _, e := range c.Env {
		if regexp.MustCompile(`(?i)secret`).MatchString(e.Name) && e.Value != "" {
			add("env-var-secret", name, "env %s holds a literal secret", e.Name)
		}
	}
	for _, p := range c.Ports {
		if p.ContainerPort == 22 && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			add("ssh-port", name, "port 22")
		}
	}
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
		add("unset-cpu-requirements", name, "no CPU request")
	}
	_, req := c.Resources.Requests[corev1.ResourceMemory]
	_, lim := c.Resources.Limits[corev1.ResourceMemory]
	if !req || !lim {
		add("unset-memory-requirements", name, "memory request and limit must both be set")
	}
	for check, p := range map[string]*corev1.Probe{"liveness-port": c.LivenessProbe, "readiness-port": c.ReadinessProbe} {
		if p == nil {
			continue
		}
		var port *intstr.IntOrString
		switch {
		case p.HTTPGet != nil:
			port = &p.HTTPGet.Port
		case p.TCPSocket != nil:
			port = &p.TCPSocket.Port
		}
		if port == nil {
			continue
		}
		found := false
		for _, cp := range c.Ports {
			if port.Type == intstr.String && cp.Name == port.StrVal || port.Type == intstr.Int && cp.ContainerPort == port.IntVal {
				found = true
			}
		}
		if !found {
			add(check, name, "probe port %s is not a container port", port.String())
		}
	}
}

// safeSysctl lists the sysctls Kubernetes considers safe.
func safeSysctl(name string) bool {
	return slices.Contains([]string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}, name)
}

// spreadsReplicas is true when the pods ask the scheduler to place replicas
// apart: pod anti-affinity (required or preferred) whose selector matches
// the pod's own labels, or a topology spread constraint doing the same.
func spreadsReplicas(pod corev1.PodSpec, podLabels map[string]string) bool {
	matches := func(ls *metav1.LabelSelector) bool {
		if ls == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		return err == nil && sel.Matches(labels.Set(podLabels))
	}
	if a := pod.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if matches(t.LabelSelector) {
				return true
			}
		}
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			if matches(w.PodAffinityTerm.LabelSelector) {
				return true
			}
		}
	}
	for _, t := range pod.TopologySpreadConstraints {
		if (t.TopologyKey == "kubernetes.io/hostname" || t.TopologyKey == "topology.kubernetes.io/zone") && matches(t.LabelSelector) {
			return true
		}
	}
	return false
}
