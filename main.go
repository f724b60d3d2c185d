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
	"flag"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
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
	var metricsAddr, probeAddr, workloadImage, watchNamespaces string
	var leaderElect, redisCleanup, podMonitors bool
	var statsInterval time.Duration
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so only one operator replica reconciles")
	flag.StringVar(&workloadImage, "workload-image", "ticketfair:dev", "image of the ticketfair workloads (queue, booking, relay, tickets) when a TicketEvent names none")
	flag.StringVar(&watchNamespaces, "watch-namespaces", "", "comma-separated namespaces whose TicketEvents are reconciled; empty watches all")
	flag.DurationVar(&statsInterval, "stats-interval", controllers.DefaultStatsInterval, "how often sale figures are fetched from the queue while a sale runs")
	flag.BoolVar(&redisCleanup, "redis-cleanup", false, "add the finalizer "+controllers.FinalizerRedisCleanup+" to every TicketEvent; when one is deleted, "+
		"stop its queue and booking pods, then delete all of its Redis keys (tf:{eventId}:*: waiting queue, sessions, counters, admit log). "+
		"Orders and seats in PostgreSQL are never touched. Off: such a finalizer is removed and the keys are kept")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.BoolVar(&podMonitors, "pod-monitors", false, "create a PodMonitor (Prometheus Operator) per TicketEvent, if the API server serves PodMonitors when the operator starts")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	cacheOpts := cache.Options{
		// Only the operator's own Secrets (the generated keys) are cached,
		// not every Secret of the watched namespaces.
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": render.ManagerName})},
		},
	}
	if watchNamespaces != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(watchNamespaces, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				cacheOpts.DefaultNamespaces[ns] = cache.Config{}
			}
		}
	}
	metricsOpts := metricsserver.Options{BindAddress: metricsAddr}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "ticketfair-operator.ticketfair.io",
		// Step down at once on SIGTERM so a rolling update hands over quickly.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		log.Error(err, "unable to create manager")
		os.Exit(1)
	}
	r := &controllers.TicketEventReconciler{
		Client:        mgr.GetClient(),
		Scheme:        mgr.GetScheme(),
		Options:       render.Options{Image: workloadImage},
		Recorder:      mgr.GetEventRecorder("ticketfair-operator"),
		StatsInterval: statsInterval,
		RedisCleanup:  redisCleanup,
		// Uncached: the Redis URL Secret (only the operator's own Secrets
		// are cached) and the sale's pods (not worth caching every pod).
		APIReader: mgr.GetAPIReader(),
	}
	if podMonitors {
		served, err := controllers.PodMonitorsServed(mgr.GetConfig())
		if err != nil {
			log.Error(err, "unable to discover PodMonitors")
			os.Exit(1)
		}
		r.PodMonitors = served
		log.Info("PodMonitors per TicketEvent", "served", served)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to create controller")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "unable to set up ready check")
		os.Exit(1)
	}
	log.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "problem running manager")
		os.Exit(1)
	}
}
