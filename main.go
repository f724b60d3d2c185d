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

// Command manager is the ticketfair operator: it reconciles TicketEvents
// into the queue, booking, relay and tickets workloads of each sale.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/controllers"
	"github.com/ticketfair/ticketfair/controllers/render"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(ticketsv1alpha1.AddToScheme(scheme))
}

func main() {
	if err := run(ctrl.SetupSignalHandler(), os.Args[1:], nil); err != nil {
		ctrl.Log.WithName("setup").Error(err, "operator stopped")
		os.Exit(1)
	}
}

// leaderElectionID names the operator's Lease.
const leaderElectionID = "ticketfair-operator.ticketfair.io"

// run parses args and runs the operator until ctx ends. cfg is the API
// server's config; nil takes it from --kubeconfig, KUBECONFIG, in-cluster
// config or ~/.kube/config, as kubectl does.
func run(ctx context.Context, args []string, cfg *rest.Config) error {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	var metricsAddr, probeAddr, workloadImage, watchNamespaces, leaderElectionNamespace, kubeconfig string
	var leaderElect, redisCleanup, secureMetrics, podMonitors bool
	var statsInterval time.Duration
	fs.StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig; only needed outside a cluster")
	fs.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "address the metrics endpoint binds to; 0 disables it")
	fs.BoolVar(&secureMetrics, "metrics-secure", true, "serve /metrics over HTTPS, to callers authenticated by the API server "+
		"(TokenReview) and allowed GET on the non-resource URL /metrics (SubjectAccessReview, e.g. the metrics-reader ClusterRole); false serves plain HTTP")
	fs.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	fs.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so only one operator replica reconciles")
	fs.StringVar(&leaderElectionNamespace, "leader-election-namespace", "",
		"namespace of the leader election Lease; in a cluster it defaults to the operator's own namespace, outside one it must be set")
	fs.StringVar(&workloadImage, "workload-image", "ticketfair:dev", "image of the ticketfair workloads (queue, booking, relay, tickets) when a TicketEvent names none")
	fs.StringVar(&watchNamespaces, "watch-namespaces", "", "comma-separated namespaces whose TicketEvents are reconciled; empty watches all")
	fs.DurationVar(&statsInterval, "stats-interval", controllers.DefaultStatsInterval, "how often sale figures are fetched from the queue while a sale runs")
	fs.BoolVar(&redisCleanup, "redis-cleanup", false, "add the finalizer "+controllers.FinalizerRedisCleanup+" to every TicketEvent; when one is deleted, "+
		"stop its queue and booking pods, then delete all of its Redis keys (tf:{eventId}:*: waiting queue, sessions, counters, admit log). "+
		"Orders and seats in PostgreSQL are never touched. Off: such a finalizer is removed and the keys are kept")
	opts := zap.Options{}
	opts.BindFlags(fs)
	fs.BoolVar(&podMonitors, "pod-monitors", false, "create a PodMonitor (Prometheus Operator) per TicketEvent, if the API server serves PodMonitors when the operator starts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	if cfg == nil {
		var err error
		if kubeconfig != "" {
			cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		} else {
			cfg, err = ctrl.GetConfig()
		}
		if err != nil {
			return fmt.Errorf("API server config: %w", err)
		}
	}

	cacheOpts := cache.Options{
		// Only the operator's own Secrets (the generated keys) are cached,
		// not every Secret of the watched namespaces.
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": render.ManagerName})},
		},
	}
	var namespaces []string
	if watchNamespaces != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(watchNamespaces, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				cacheOpts.DefaultNamespaces[ns] = cache.Config{}
				namespaces = append(namespaces, ns)
			}
		}
	}
	// As kubebuilder's scaffold: HTTPS with a self-signed certificate,
	// authentication and authorization delegated to the API server, and no
	// HTTP/2 (CVE-2023-44487, CVE-2023-39325).
	metricsOpts := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: secureMetrics,
		TLSOpts:       []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
	if secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: leaderElectionNamespace,
		// Step down at once on SIGTERM so a rolling update hands over quickly.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	r := &controllers.TicketEventReconciler{
		Client:        mgr.GetClient(),
		Scheme:        mgr.GetScheme(),
		Options:       render.Options{Image: workloadImage},
		Recorder:      mgr.GetEventRecorder("ticketfair-operator"),
		StatsInterval: statsInterval,
		RedisCleanup:  redisCleanup,
		// Uncached: the Secrets the spec refers to (only the operator's own
		// Secrets are cached) and the sale's pods (not worth caching every pod).
		APIReader:  mgr.GetAPIReader(),
		Namespaces: namespaces,
	}
	if podMonitors {
		served, err := controllers.PodMonitorsServed(mgr.GetConfig())
		if err != nil {
			return fmt.Errorf("discover PodMonitors: %w", err)
		}
		r.PodMonitors = served
		log.Info("PodMonitors per TicketEvent", "served", served)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("create controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("ready check: %w", err)
	}
	log.Info("starting manager")
	return mgr.Start(ctx)
}
