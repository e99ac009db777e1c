# Flotilla — run `make help` for the targets.

SHELL := /usr/bin/env bash -o pipefail
BIN   := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
# The spoke-side CRDs; every other generated CRD belongs to the hub.
AGENT_CRDS := work.open-cluster-management.io_appliedmanifestworks.yaml \
              cluster.open-cluster-management.io_clusterclaims.yaml \
              policy.open-cluster-management.io_configurationpolicies.yaml \
              policy.open-cluster-management.io_certificatepolicies.yaml
# The managed cluster owner's CRDs: the agent reads them where they are
# served and installs them nowhere (tests install them on their spokes).
SPOKE_OWNER_CRDS := about.k8s.io_clusterproperties.yaml
GO_TEST_FLAGS ?=
# BENCH_FLAGS go to test/bench, e.g. "-run fleet -clusters 1000" (see docs/benchmarks.md).
BENCH_FLAGS ?=

.PHONY: help build coredns images push generate verify test test-unit test-integration test-e2e bench demo demo-down clean

help: ## Show this help.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

# VERSION is the release, and so the images' tag: the charts' appVersion is
# its one source (deploy/charts/*/Chart.yaml, kept equal by deploy's tests),
# so that the charts and kustomize bases install the images this tree builds.
# The images' org.opencontainers.image.revision label names the commit.
VERSION ?= $(shell awk '$$1 == "appVersion:" {print $$2}' deploy/charts/flotilla-hub/Chart.yaml)
# The embedded Kubernetes components report the version they were built from.
K8S_VERSION := $(shell go list -m -f '{{.Version}}' k8s.io/kubernetes 2>/dev/null)
K8S_VERSION_PKG := k8s.io/component-base/version
# REGISTRY is where the images are tagged and pushed, and so the image the
# binaries install by default (flotilla join).
REGISTRY ?= ghcr.io/flotilla-io
# COMMIT is the commit the binaries are built from: `flotilla version` and
# the hub's and agent's start-up lines name it beside the release.
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
LDFLAGS := -X github.com/flotilla-io/flotilla/internal/version.Version=$(VERSION) \
           -X github.com/flotilla-io/flotilla/internal/version.Commit=$(COMMIT) \
           -X github.com/flotilla-io/flotilla/internal/version.Registry=$(REGISTRY) \
           -X $(K8S_VERSION_PKG).gitVersion=$(K8S_VERSION) \
           -X $(K8S_VERSION_PKG).gitMajor=$(word 1,$(subst ., ,$(patsubst v%,%,$(K8S_VERSION)))) \
           -X $(K8S_VERSION_PKG).gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION))) \
           -X $(K8S_VERSION_PKG).gitTreeState=clean

# The agent is built without gRPC's tracing (grpcnotrace): that leaves out
# golang.org/x/net/trace, whose init registers pages rendered by
# html/template, and with it text/template's lookup of methods by name,
# which makes the linker keep every exported method of every type the
# agent reaches: 86 MB of binary instead of 59 MB, most of it resident
# (docs/benchmarks.md, Registration). The agent serves no gRPC traces.
# It is built without cgo here too, as in its image: libc's pages are
# 1.5 MiB of its resident memory.
AGENT_TAGS := grpcnotrace

build: ## Build bin/flotilla-hub, bin/flotilla-agent and bin/flotilla.
	go build -ldflags "$(LDFLAGS)" -o $(BIN)/ $$(go list ./cmd/... | grep -v '/cmd/flotilla-agent$$')
	CGO_ENABLED=0 go build -tags $(AGENT_TAGS) -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/flotilla-agent

# Stock CoreDNS (v1.15, only the plugins a cluster's DNS needs) and dnsq,
# a one-question DNS client, from their own Go module: CoreDNS needs newer
# Kubernetes client modules than Flotilla's. The services dns specs run
# it; docs/services.md says how to turn its clusterset.local on.
coredns: ## Build bin/coredns (stock CoreDNS, for clusterset.local) and bin/dnsq from hack/coredns.
	@cd hack/coredns && ../build-with-progress.sh -m "bin/coredns and bin/dnsq from hack/coredns (the first build compiles CoreDNS and its Kubernetes client: minutes)" \
	  go build -o $(BIN)/ . ./cmd/dnsq

# The images: static linux binaries, packed by hack/images without a
# container engine, dated by the commit so that one commit gives one digest.
IMAGES := flotilla-hub flotilla-agent flotilla flotilla-dev-cluster
IMAGE_PLATFORM ?= linux/amd64
IMAGE_BIN := $(BIN)/$(subst /,-,$(IMAGE_PLATFORM))
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

IMAGE_GO := CGO_ENABLED=0 GOOS=$(word 1,$(subst /, ,$(IMAGE_PLATFORM))) GOARCH=$(word 2,$(subst /, ,$(IMAGE_PLATFORM))) \
	  go build -trimpath -ldflags "-s -w -buildid= $(LDFLAGS)" -o $(IMAGE_BIN)/

# Each binary is built on its own, saying which, as the first build takes
# minutes (it compiles the embedded Kubernetes API server).
images: ## Build the container images into bin/images/*.tar (docker load -i ...); REGISTRY=... retags them.
	@n=0; for b in $(IMAGES); do n=$$((n + 1)); \
	  tags=; if [ $$b = flotilla-agent ]; then tags="-tags $(AGENT_TAGS)"; fi; \
	  hack/build-with-progress.sh -m "[$$n/$(words $(IMAGES))] $$b for $(IMAGE_PLATFORM) into $(IMAGE_BIN)" \
	    env $(IMAGE_GO) $$tags ./cmd/$$b || exit 1; \
	done
	@echo "==> Packing the images $(IMAGES) into $(BIN)/images, tagged $(REGISTRY)/<name>:$(VERSION)"
	@go run ./hack/images build --bin-dir $(IMAGE_BIN) --out $(BIN)/images --registry $(REGISTRY) \
	  --version $(VERSION) --revision $$(git rev-parse HEAD 2>/dev/null) --created $(SOURCE_DATE_EPOCH) \
	  --platform $(IMAGE_PLATFORM) $(IMAGES)

push: images ## Push the images to REGISTRY (e.g. make push REGISTRY=registry.example.com/team), with docker login's credentials.
	go run ./hack/images push $(addprefix $(BIN)/images/,$(addsuffix .tar,$(IMAGES)))

$(CONTROLLER_GEN): hack/tools/go.mod
	cd hack/tools && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code and CRDs from the api module.
	cd api && $(CONTROLLER_GEN) object:headerFile=../hack/boilerplate.go.txt paths=./...
	rm -rf manifests/.crds && mkdir -p manifests/.crds
	cd api && $(CONTROLLER_GEN) crd paths=./... output:crd:artifacts:config=../manifests/.crds
	rm -f manifests/hub/crds/*.yaml manifests/agent/crds/*.yaml manifests/spoke-owner/crds/*.yaml
	mkdir -p manifests/spoke-owner/crds
	cd manifests/.crds && for f in *.yaml; do \
	  case " $(AGENT_CRDS) " in *" $$f "*) mv $$f ../agent/crds/;; *) \
	  case " $(SPOKE_OWNER_CRDS) " in *" $$f "*) mv $$f ../spoke-owner/crds/;; *) mv $$f ../hub/crds/;; esac;; esac; done
	rm -rf manifests/.crds
	rm -rf deploy/charts/flotilla-hub/crds && mkdir -p deploy/charts/flotilla-hub/crds
	cp manifests/hub/crds/*.yaml deploy/charts/flotilla-hub/crds/
	go run ./hack/deploygen

verify: generate ## Regenerate, vet and check formatting; fail on any difference.
	go vet ./...
	cd api && go vet ./...
	cd hack/coredns && go vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: run 'gofmt -w' on the files above"; exit 1; }
	@git diff --exit-code -- . || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- api manifests deploy)" || { git status --porcelain -- api manifests deploy; echo "untracked generated files: commit them"; exit 1; }

test: test-unit test-integration ## Unit and integration tests.

test-unit: ## Unit tests (no servers).
	cd api && go test ./...
	go test $(GO_TEST_FLAGS) $$(go list ./... | grep -v -e /test/integration -e /test/e2e)

# The integration suite runs on INTEGRATION_PROCS processes at once, each
# with a hub of its own: its specs mostly wait on API servers and
# controllers, so more processes than cores pay. Each spec is reported as
# it ends; what it logged is shown only if it fails.
INTEGRATION_PROCS ?= 4
# GINKGO_FLAGS go to the ginkgo command line, e.g. --focus="work agent".
GINKGO_FLAGS ?=
GINKGO := go run github.com/onsi/ginkgo/v2/ginkgo

# CoreDNS is built before the suite (the services dns specs run it), so
# that the suite's processes find it compiled.
test-integration: coredns ## Integration tests: real API servers started in-process, INTEGRATION_PROCS processes at once.
	$(GINKGO) -v --procs=$(INTEGRATION_PROCS) --timeout=20m --no-color $(GINKGO_FLAGS) ./test/integration

test-e2e: build images coredns ## End-to-end tests: the real binaries as separate processes, and the images as containers (Docker; they fail under CI=true without one).
	go test $(GO_TEST_FLAGS) -timeout 30m ./test/e2e/... -args -bin-dir=$(BIN) -images-dir=$(BIN)/images

bench: build ## Benchmarks that print the figures recorded in docs/benchmarks.md.
	go run ./test/bench -bin-dir=$(BIN) $(BENCH_FLAGS)

demo: ## Build, start a hub and 3 simulated clusters in .demo/, run workloads and a policy, show them.
	@hack/build-with-progress.sh $(MAKE) --no-print-directory build
	hack/demo.sh

demo-down: ## Stop the demo (flotilla dev down) and remove .demo/.
	@if [ -d .demo ]; then $(BIN)/flotilla dev down --dir .demo; fi
	rm -rf .demo

clean: ## Remove built binaries.
	rm -rf $(BIN)
