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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

const (
	// Binary is the path of the workloads binary in the image.
	Binary = "/ticketfair"
	// HTTPPortName names the container port of the API, probes and /metrics.
	HTTPPortName = "http"

	nonRootUID = 65532
)

func workload(te *ticketsv1alpha1.TicketEvent, c Component) ticketsv1alpha1.Workload {
	switch c {
	case Queue:
		return te.Spec.Queue.Workload
	case Booking, Migrate:
		return te.Spec.Booking.Workload
	case Relay:
		return te.Spec.Relay
	default:
		return te.Spec.Tickets
	}
}

func scalable(te *ticketsv1alpha1.TicketEvent, c Component) ticketsv1alpha1.ScalableWorkload {
	if c == Queue {
		return te.Spec.Queue
	}
	return te.Spec.Booking
}

func image(te *ticketsv1alpha1.TicketEvent, opts Options, c Component) string {
	if img := workload(te, c).Image; img != "" {
		return img
	}
	return opts.Image
}

// DefaultResources are a component's container resources when the
// TicketEvent sets none. They come from the pods' cgroups under the
// end-to-end sale on a real node (test/e2e): each memory request is about
// three times the peak RSS measured there, each memory limit about twice
// the peak RSS of the same service in the 2,000,000-person local sale, and
// each CPU request about the peak measured there (docs/operator.md,
// Resources). No CPU limit: throttling a sale's pods only adds latency.
func DefaultResources(c Component) corev1.ResourceRequirements {
	r := map[Component]struct{ cpu, memory, limit string }{
		Queue:   {"200m", "64Mi", "256Mi"},
		Booking: {"100m", "64Mi", "256Mi"},
		Relay:   {"50m", "32Mi", "128Mi"},
		Tickets: {"100m", "96Mi", "256Mi"},
		Migrate: {"100m", "64Mi", "256Mi"},
	}[c]
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(r.cpu), corev1.ResourceMemory: resource.MustParse(r.memory)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(r.limit)},
	}
}

// drainDelay is how long a serving pod keeps answering after SIGTERM,
// closing each connection after its response, while its endpoints leave
// kube-proxy and load balancers; then it shuts down with its shutdown grace
// (10s). Both fit in the pod's 30s termination grace period.
const drainDelay = 5 * time.Second

func podSpec(te *ticketsv1alpha1.TicketEvent, opts Options, c Component, env renderedEnv, port int32) corev1.PodSpec {
	w := workload(te, c)
	resources := DefaultResources(c)
	if w.Resources != nil {
		resources = *w.Resources.DeepCopy()
	}
	ctr := corev1.Container{
		Name:      string(c),
		Image:     image(te, opts, c),
		Command:   []string{Binary},
		Args:      []string{string(c)},
		Env:       env.env,
		Resources: resources,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	if c != Migrate {
		ctr.Ports = []corev1.ContainerPort{{Name: HTTPPortName, ContainerPort: port, Protocol: corev1.ProtocolTCP}}
		ctr.LivenessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(HTTPPortName)}},
			PeriodSeconds:    10,
			FailureThreshold: 3,
			TimeoutSeconds:   2,
		}
		ctr.ReadinessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString(HTTPPortName)}},
			PeriodSeconds:    5,
			FailureThreshold: 2,
			TimeoutSeconds:   2,
		}
	}
	spec := corev1.PodSpec{
		Containers:                    []corev1.Container{ctr},
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false), // keep the env exactly what the config renders
		TerminationGracePeriodSeconds: ptr.To(int64(30)),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(int64(nonRootUID)),
			RunAsGroup:     ptr.To(int64(nonRootUID)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		NodeSelector: w.NodeSelector,
		Tolerations:  w.Tolerations,
		Affinity:     w.Affinity,
	}
	mountVenue(te, c, &spec) // seating.venueFrom: booking and migrate
	if c == Queue {
		spec.ServiceAccountName = ServiceAccountName(te)
		spec.AutomountServiceAccountToken = ptr.To(true)
	}
	if c != Migrate {
		sel := &metav1.LabelSelector{MatchLabels: SelectorLabels(te, c)}
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel, MatchLabelKeys: []string{"pod-template-hash"}},
			{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel, MatchLabelKeys: []string{"pod-template-hash"}},
		}
	}
	return spec
}
