# ticketfair: operator and workloads. Tools are pinned and built from Go
# modules into ./bin, because release downloads do not reach every machine.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

IMG ?= ticketfair:dev
LOCALBIN ?= $(CURDIR)/bin
export PATH := $(LOCALBIN):$(PATH)

CONTROLLER_TOOLS_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.2
HELM_VERSION ?= v4.3.2
STATICCHECK_VERSION ?= v0.8.2
ENVTEST_K8S_VERSION ?= v1.37.2
ENVTEST_ETCD_VERSION ?= v3.7.3
MAILPIT_VERSION ?= v1.33.1

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
STATICCHECK ?= $(LOCALBIN)/staticcheck-$(STATICCHECK_VERSION)
ENVTEST_ASSETS ?= $(LOCALBIN)/envtest

GO_TEST_FLAGS ?= -race -count=1 -timeout 30m
TEST_PKGS ?= ./...

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate the CRD and RBAC manifests.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:generateEmbeddedObjectMeta=true webhook paths="./api/..." paths="./controllers/..." output:crd:artifacts:config=config/crd/bases
	@if [ -x hack/sync-chart.sh ]; then hack/sync-chart.sh; fi

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: vet staticcheck openapi-lint ## Run go vet, staticcheck and the OpenAPI lint.
	$(STATICCHECK) ./...

.PHONY: openapi-lint
openapi-lint: ## Validate the OpenAPI 3.1 documents of queue, booking and tickets (workloads/openapi).
	go test -count=1 -run TestDocumentsAreValid ./workloads/openapi/

.PHONY: deps
deps: ## Install the system packages the tests need (demo's with zbar-tools, redis-sentinel, redis-tools, postgresql-client-15, chromium, prometheus).
	hack/install-deps.sh test

.PHONY: test
test: deps envtest tools kafka generate manifests lint ## Unit and integration tests against real Redis, PostgreSQL, Apache Kafka, Mailpit, Chromium and kube-apiserver.
	hack/check-clean.sh
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) TICKETFAIR_TEST_REQUIRE_SERVICES=1 go test $(GO_TEST_FLAGS) $(TEST_PKGS)

.PHONY: envtest
envtest: ## Link the envtest assets (etcd, kube-apiserver) into bin/envtest; built once per version with the cluster binaries (hack/build-kube.sh).
	@if [ -x $(ENVTEST_ASSETS)/etcd ] && [ -x $(ENVTEST_ASSETS)/kube-apiserver ]; then :; else \
		hack/build-envtest.sh $(ENVTEST_ASSETS) $(ENVTEST_K8S_VERSION) $(ENVTEST_ETCD_VERSION); fi

##@ Local sale

DEMO_ARGS ?=
# KAFKA=apache runs the sale on Apache Kafka (KRaft, fetched once with Maven)
# instead of the embedded Kafka-protocol broker.
KAFKA ?= embedded
.PHONY: demo
demo: mailpit ## Run a local sale end to end on this machine (pass flags with DEMO_ARGS="--customers 2000000 ...", KAFKA=apache for Apache Kafka); installs redis-server, postgresql-15, nginx, zbar-tools and builds Mailpit.
	hack/install-deps.sh $(if $(filter apache,$(KAFKA)),bench,demo)
	$(if $(filter apache,$(KAFKA)),hack/fetch-kafka.sh >/dev/null)
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair ./workloads/cmd/ticketfair
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair-dev ./workloads/cmd/ticketfair-dev
	$(LOCALBIN)/ticketfair-dev demo --kafka $(KAFKA) $(DEMO_ARGS)

CHAOS_PLAN ?= default
CHAOS_ARGS ?= --customers 50000 --seats 10000 --max-active 500 --admit-rate 35 --hold-ttl 20s --profile joinwindow=150s
.PHONY: chaos
chaos: mailpit ## A local sale under a fault plan (CHAOS_PLAN=default|small|<file>) on a three-node Apache Kafka cluster: kills, store restarts, broker outages (all nodes, one node), network faults; audited.
	hack/install-deps.sh chaos
	hack/fetch-kafka.sh >/dev/null
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair ./workloads/cmd/ticketfair
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair-dev ./workloads/cmd/ticketfair-dev
	$(LOCALBIN)/ticketfair-dev demo --faults $(CHAOS_PLAN) --kafka apache --kafka-nodes 3 $(CHAOS_ARGS)

.PHONY: bench
bench: mailpit ## Measure joins/s, polls/s, holds/s, check-ins/s, mails/s and relay publish/s against redis-benchmark, pgbench, a plain Go handler and kafka-producer-perf-test in one run; writes docs/bench-results.md.
	hack/install-deps.sh bench
	hack/fetch-kafka.sh >/dev/null
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair ./workloads/cmd/ticketfair
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair-dev ./workloads/cmd/ticketfair-dev
	$(LOCALBIN)/ticketfair-dev bench --out docs/bench-results.md $(BENCH_ARGS)

##@ Build

.PHONY: build
build: generate ## Build the operator, the service binary, the development tools (ticketfair-dev) and the kubectl plugin (kubectl-ticketfair) into bin/.
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/manager .
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair ./workloads/cmd/ticketfair
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/ticketfair-dev ./workloads/cmd/ticketfair-dev
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/kubectl-ticketfair ./cmd/kubectl-ticketfair

.PHONY: run
run: manifests generate ## Run the operator against the current kubeconfig.
	go run . --workload-image=$(IMG)

.PHONY: docker-build
docker-build: ## Build the image (needs a Docker engine).
	docker build -t $(IMG) .

# make image: the Dockerfile's image without a container engine or a
# registry (hack/image, its own module): static binaries (the operator and
# the service binary; never ticketfair-dev), the CA
# certificates of Debian's ca-certificates, time zones, user 65532. Also
# the sandbox (pause) image of the test node.
IMAGE_DIR ?= $(LOCALBIN)/image
PAUSE_IMG ?= ticketfair-pause:dev
.PHONY: image
image: ## Build the image as OCI tarballs into bin/image/ (ticketfair.tar, pause.tar), no Docker needed.
	hack/install-deps.sh cluster
	rm -rf $(IMAGE_DIR) && mkdir -p $(IMAGE_DIR)/root
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o $(IMAGE_DIR)/root/manager .
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o $(IMAGE_DIR)/root/ticketfair ./workloads/cmd/ticketfair
	cd hack/image && CGO_ENABLED=0 go build -trimpath -o $(IMAGE_DIR)/build-image . && \
		CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o $(IMAGE_DIR)/root/pause ./pause
	$(IMAGE_DIR)/build-image -o $(IMAGE_DIR)/ticketfair.tar -tag $(IMG) -entrypoint /manager \
		-add $(IMAGE_DIR)/root/manager=/manager -add $(IMAGE_DIR)/root/ticketfair=/ticketfair \
		-add /etc/ssl/certs/ca-certificates.crt=/etc/ssl/certs/ca-certificates.crt \
		-add /usr/share/zoneinfo=/usr/share/zoneinfo \
		-label org.opencontainers.image.title=ticketfair \
		-label "org.opencontainers.image.description=ticketfair operator and workloads" \
		-label org.opencontainers.image.licenses=Apache-2.0
	$(IMAGE_DIR)/build-image -o $(IMAGE_DIR)/pause.tar -tag $(PAUSE_IMG) -entrypoint /pause -user 65535:65535 \
		-add $(IMAGE_DIR)/root/pause=/pause

.PHONY: helm-lint
helm-lint: helm ## Lint the Helm chart.
	$(HELM) lint --strict charts/ticketfair

.PHONY: chart-check
chart-check: manifests helm-lint ## CI: the chart's CRD and RBAC match config/, and the chart lints.
	hack/sync-chart.sh --check
	$(HELM) lint --strict charts/ticketfair --set crds.enabled=false --set 'watchNamespaces={a,b}'

.PHONY: delivery-check
delivery-check: envtest helm ## `helm template` and `kubectl apply --dry-run=server -f config/samples/` against envtest.
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) HELM=$(HELM) go test -count=1 -run TestDeliveryManifests ./controllers/

##@ Single-node cluster (root; everything inside the network namespace "ticketfair")

KUBE_ENV = KUBE_VERSION=$(ENVTEST_K8S_VERSION) ETCD_VERSION=$(ENVTEST_ETCD_VERSION)

.PHONY: cluster-up
cluster-up: image ## Start a real single-node Kubernetes (kubelet, containerd, kube-proxy, PodSecurity) on this machine.
	$(KUBE_ENV) hack/cluster.sh up $(IMAGE_DIR)/pause.tar

.PHONY: cluster-down
cluster-down: ## Stop the cluster; fails if any process, mount, cgroup or namespace is left.
	$(KUBE_ENV) hack/cluster.sh down

.PHONY: e2e
e2e: deps image helm mailpit kafka ## Helm-install the operator on the cluster (brought up and down when not running) and run a disrupted, audited sale.
	$(KUBE_ENV) hack/e2e.sh $(IMAGE_DIR) $(ENVTEST_K8S_VERSION) $(ENVTEST_ETCD_VERSION) $(HELM)

##@ Deployment

.PHONY: install
install: manifests kustomize ## Install the CRDs into the current cluster.
	$(KUSTOMIZE) build config/crd | kubectl apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs from the current cluster.
	$(KUSTOMIZE) build config/crd | kubectl delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator to the current cluster.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | sed 's|--workload-image=.*|--workload-image=$(IMG)|' | kubectl apply --server-side -f -

.PHONY: undeploy
undeploy: kustomize ## Remove the operator from the current cluster.
	$(KUSTOMIZE) build config/default | kubectl delete --ignore-not-found -f -

##@ Tools

.PHONY: controller-gen kustomize helm staticcheck mailpit kafka tools
tools: controller-gen kustomize helm staticcheck mailpit ## Build every pinned tool.
controller-gen: $(CONTROLLER_GEN)
kustomize: $(KUSTOMIZE)
helm: $(HELM)
staticcheck: $(STATICCHECK)

kafka: ## Fetch the pinned Apache Kafka broker (hack/kafka/pom.xml) with Maven once, into a cache outside the clone, and link it to bin/kafka.
	hack/fetch-kafka.sh

mailpit: ## Build Mailpit (the SMTP server of the ticket mail tests and the local sale) once per version and link it to bin/mailpit.
	hack/build-mailpit.sh $(MAILPIT_VERSION)

$(CONTROLLER_GEN): ; $(call go-install-tool,$@,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))
$(KUSTOMIZE): ; $(call go-install-tool,$@,sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))
$(HELM): ; $(call go-install-tool,$@,helm.sh/helm/v4/cmd/helm,$(HELM_VERSION))
$(STATICCHECK): ; $(call go-install-tool,$@,honnef.co/go/tools/cmd/staticcheck,$(STATICCHECK_VERSION))

# go-install-tool installs package $2 at version $3 as $1, caching the binary
# outside the clone so a fresh clone on the same machine reuses it.
TOOL_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ticketfair/tools
define go-install-tool
@set -e; mkdir -p $(LOCALBIN) $(TOOL_CACHE); \
cached=$(TOOL_CACHE)/$$(basename $(1)); \
if [ ! -x "$$cached" ]; then \
  echo ">> installing $(2)@$(3)"; \
  tmp=$$(mktemp -d); GOBIN=$$tmp GOFLAGS= go install $(2)@$(3); mv $$tmp/* "$$cached"; rm -rf $$tmp; \
fi; \
ln -sf "$$cached" $(1); ln -sf $$(basename $(1)) $(LOCALBIN)/$$(basename $(1) | sed 's/-v[0-9].*//')
endef
