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

package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Kube starts a Kubernetes API server (envtest: real etcd and
// kube-apiserver) with the project's CRDs installed, and stops it when the
// test ends. The binaries come from KUBEBUILDER_ASSETS, else bin/envtest
// (make envtest).
func Kube(t testing.TB) (*envtest.Environment, *rest.Config) {
	t.Helper()
	env, cfg, err := StartKube()
	if err != nil {
		Unavailable(t, "envtest (make envtest)", err)
		return nil, nil
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env, cfg
}

// StartKube starts envtest with the project's CRDs; the caller stops it.
func StartKube() (*envtest.Environment, *rest.Config, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, nil, err
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		os.Setenv("KUBEBUILDER_ASSETS", filepath.Join(root, "bin", "envtest"))
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, err
	}
	return env, cfg, nil
}
