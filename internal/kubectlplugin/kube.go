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

package kubectlplugin

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// fieldManager names the plugin to the API server, as field manager of its
// patches and as user agent, so its writes are told apart from the
// operator's and from kubectl's.
const fieldManager = "kubectl-ticketfair"

// resource is how RBAC names what the plugin reads and patches.
var resource = "ticketevents." + ticketsv1alpha1.GroupVersion.Group

// kube holds the standard kubeconfig flags (--kubeconfig, --context,
// -n/--namespace, --as, ...) and opens a client from them. Unset flags fall
// back to KUBECONFIG, ~/.kube/config, the current context and its
// namespace, as kubectl does.
type kube struct {
	loading   *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
	warnings  io.Writer
}

func newKube(warnings io.Writer) *kube {
	return &kube{loading: clientcmd.NewDefaultClientConfigLoadingRules(), warnings: warnings}
}

func (k *kube) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&k.loading.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "",
		"path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	clientcmd.BindOverrideFlags(&k.overrides, fs, clientcmd.RecommendedConfigOverrideFlags(""))
}

// connect returns a client for TicketEvents (and Secrets) and the
// namespace to work in.
func (k *kube) connect() (client.Client, string, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.loading, &k.overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG or create ~/.kube/config")
		}
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = fieldManager
	cfg.WarningHandler = rest.NewWarningWriter(k.warnings, rest.WarningWriterOptions{Deduplicate: true})
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{ticketsv1alpha1.AddToScheme, corev1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, "", err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return c, ns, nil
}

// explain turns an API error of verb on TicketEvent name (empty for a
// list) in namespace ns (empty for all namespaces) into a message saying
// what to do about it.
func explain(err error, verb, ns, name string) error {
	if err == nil {
		return nil
	}
	where := fmt.Sprintf("in namespace %q", ns)
	if ns == "" {
		where = "in any namespace"
	}
	switch {
	case apierrors.IsNotFound(err) && name != "" && isObjectNotFound(err, name):
		return fmt.Errorf("ticketevent %q not found %s", name, where)
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return fmt.Errorf("the cluster does not serve %s/%s TicketEvents: is the ticketfair CRD installed? (%w)",
			ticketsv1alpha1.GroupVersion.Group, ticketsv1alpha1.GroupVersion.Version, err)
	case apierrors.IsForbidden(err):
		scope := "a Role (or ClusterRole) bound in that namespace"
		if ns == "" {
			scope = "a ClusterRole bound with a ClusterRoleBinding"
		}
		return fmt.Errorf("not allowed to %s %s %s: your user needs the verb %q on %s through %s; "+
			"the plugin as a whole needs get, list and patch (docs/kubectl-plugin.md)\n(%w)", verb, resource, where, verb, resource, scope, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server rejected your credentials; check --kubeconfig, --context and --user (%w)", err)
	}
	return err
}

// isObjectNotFound tells a missing TicketEvent from a missing resource (no
// CRD): only the former names the object in its details.
func isObjectNotFound(err error, name string) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Name == name
}
