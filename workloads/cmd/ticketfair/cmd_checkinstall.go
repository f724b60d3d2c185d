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

package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ticketfair/ticketfair/workloads/internal/installcheck"
)

func init() {
	register("check-install", "helm test: the operator is available and the TicketEvent API is served", runCheckInstall)
}

func runCheckInstall(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("check-install", flag.ContinueOnError)
	ns := fs.String("namespace", os.Getenv("POD_NAMESPACE"), "namespace of the operator Deployment")
	deploy := fs.String("deployment", "", "name of the operator Deployment")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for both")
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig (default: in-cluster)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ns == "" || *deploy == "" {
		return errors.New("check-install: --namespace and --deployment are required")
	}
	var cfg *rest.Config
	var err error
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return err
	}
	return installcheck.Wait(ctx, cfg, *ns, *deploy, *timeout, 2*time.Second)
}
