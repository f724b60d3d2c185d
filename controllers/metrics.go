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

package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The operator's own metrics, served with controller-runtime's on the
// manager's /metrics.
var (
	reconcileSteps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketfair_operator_reconcile_steps_total",
		Help: "Steps of TicketEvent reconciles run, by step and result (success or error).",
	}, []string{"step", "result"})
	statsFetchErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ticketfair_operator_stats_fetch_errors_total",
		Help: "Failed fetches of a sale's figures from its queue service.",
	})
	ticketEvents = &conditionCollector{
		desc: prometheus.NewDesc("ticketfair_operator_ticketevents",
			"TicketEvents by condition type and status, as last written to their status.",
			[]string{"condition", "status"}, nil),
		conds: map[types.NamespacedName]map[string]metav1.ConditionStatus{},
	}
)

func init() {
	ctrlmetrics.Registry.MustRegister(reconcileSteps, statsFetchErrors, ticketEvents)
}

// Results of a reconcile step.
const (
	resultSuccess = "success"
	resultError   = "error"
)

// conditionCollector counts TicketEvents by condition at scrape time from
// the conditions each reconcile computed.
type conditionCollector struct {
	desc  *prometheus.Desc
	mu    sync.Mutex
	conds map[types.NamespacedName]map[string]metav1.ConditionStatus
}

func (c *conditionCollector) set(key types.NamespacedName, conds []metav1.Condition) {
	m := make(map[string]metav1.ConditionStatus, len(conds))
	for _, cond := range conds {
		m[cond.Type] = cond.Status
	}
	c.mu.Lock()
	c.conds[key] = m
	c.mu.Unlock()
}

func (c *conditionCollector) forget(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.conds, key)
	c.mu.Unlock()
}

func (c *conditionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *conditionCollector) Collect(ch chan<- prometheus.Metric) {
	type key struct {
		typ    string
		status metav1.ConditionStatus
	}
	counts := map[key]int{}
	c.mu.Lock()
	for _, m := range c.conds {
		for typ, status := range m {
			counts[key{typ, status}]++
		}
	}
	c.mu.Unlock()
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k.typ, string(k.status))
	}
}
