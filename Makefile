# The two commands of a fresh machine:
#   make demo   runs the controller end to end on a local control plane
#   make test   runs every test
SHELL := /usr/bin/env bash
export KUBEBUILDER_ASSETS := $(CURDIR)/bin/k8s
GO_TEST_FLAGS ?=
# The one version of the binaries, the image and the chart (VERSION).
VERSION := $(shell cat VERSION)
LDFLAGS := -X github.com/aibom-dev/aibom/internal/version.Version=$(VERSION)

.PHONY: all tools operators qualify compatibility generate verify-generated build print-version tidy image image-sbom image-verify chart-lint release-test lint fuzz-short test corpus demo dev scale clean

all: build

tools: ## Build kube-apiserver, etcd and controller-gen from the Go module proxy into bin/, and install xmllint (libxml2-utils) when missing
	@hack/build-tools.sh

generate: tools ## Regenerate deepcopy code and the CRD from api/
	bin/controller-gen object paths=./api/...
	bin/controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	cp config/crd/bases/*.yaml charts/aibom/crds/

verify-generated: generate ## Fail when generated files are stale
	@git diff --exit-code -- api config/crd charts/aibom/crds || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

build: ## Build the controller and the CLI into bin/, stamped with VERSION
	go build -ldflags '$(LDFLAGS)' -o bin/aibom-controller ./cmd/controller
	go build -ldflags '$(LDFLAGS)' -o bin/aibom ./cmd/aibom

print-version: ## Print VERSION and the link flags that stamp it
	@echo "VERSION=$(VERSION)"; echo "LDFLAGS=$(LDFLAGS)"

tidy: ## go mod tidy in every module (the root, and the modules that replace it: run after changing the root's go.mod)
	go mod tidy
	for m in examples/ollama hack/image test/release; do (cd $$m && go mod tidy) || exit 1; done

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

fuzz-short: ## Run every fuzz target briefly (FUZZTIME each, default 10s)
	hack/fuzz-short.sh

# Where the image is meant to be pushed (nothing is pushed by make).
IMAGE_REPO ?= ghcr.io/aibom-dev/aibom-controller

# The SLSA builder id the provenance names: the build platform that vouches
# for the build. A release CI sets its own (docs/release.md).
BUILDER_ID ?= https://github.com/aibom-dev/aibom/hack/image/local

image: ## Build the linux/amd64+arm64 OCI image into _out/image without Docker or network (beyond the Go module proxy); prints its digest and writes its SBOM (sbom.cdx.json) and SLSA provenance (provenance.intoto.json) next to it
	cd hack/image && go run . build -root ../.. -repository $(IMAGE_REPO) -out ../../_out/image
	cd hack/image && go run . sbom -layout ../../_out/image
	cd hack/image && go run . provenance -layout ../../_out/image -root ../.. -builder-id $(BUILDER_ID)

image-sbom: image ## Kept for scripts: make image writes _out/image/sbom.cdx.json (CycloneDX 1.6, bound to the digest) itself

image-verify: ## Build the image twice from scratch and fail unless both digests, SBOMs and provenance statements are equal
	rm -rf _out/image _out/image-binaries && $(MAKE) -s image >/dev/null && cp _out/image/digest _out/digest.first \
		&& cp _out/image/sbom.cdx.json _out/sbom.first && cp _out/image/provenance.intoto.json _out/provenance.first
	rm -rf _out/image _out/image-binaries && $(MAKE) -s image >/dev/null
	@diff _out/digest.first _out/image/digest && cmp _out/sbom.first _out/image/sbom.cdx.json \
		&& cmp _out/provenance.first _out/image/provenance.intoto.json && echo "reproducible: $$(cat _out/image/digest)"

chart-lint: tools ## helm lint + render charts/aibom (default and non-default values), dry-run it on a real API server, compare it with config/ and the envtest RBAC
	cd test/release && go test $(GO_TEST_FLAGS) -run 'TestChart' .

release-test: tools ## Everything test/release checks: the chart, one version everywhere, the qualification run of the binary installed from the chart
	cd test/release && go test $(GO_TEST_FLAGS) ./...

test: tools lint verify-generated fuzz-short ## Run all tests (unit and envtest against a real kube-apiserver + etcd)
	go test $(GO_TEST_FLAGS) ./... && cd examples/ollama && go test $(GO_TEST_FLAGS) ./...
	cd hack/image && go test $(GO_TEST_FLAGS) ./...
	$(MAKE) release-test

operators: ## Build the real operators of the qualification (hack/operators/*) into bin/operators/ from the Go module proxy; each rebuilt only when its go.mod/go.sum changes
	@hack/build-operators.sh

# The qualification against the real operators (test/operators,
# docs/compatibility.md).
QUALIFY_FLAGS ?=

qualify: tools operators ## Run LeaderWorkerSet, JobSet, KubeRay and Kubeflow Trainer (pinned, built from the module proxy) with kube-controller-manager and the controller; check their samples' documents and docs/compatibility.md
	go vet -tags qualify ./test/operators
	go test -tags qualify -count=1 -timeout 30m $(QUALIFY_FLAGS) ./test/operators

compatibility: tools operators ## Rewrite docs/compatibility.md from a qualification run
	go test -tags qualify -count=1 -timeout 30m ./test/operators -update

# The corpus of real manifests and what a careful reader names in each
# (expected.tsv); see internal/corpus.
CORPUS ?= ../shared/corpus/realworld

corpus: ## Scan every corpus manifest and score runtimes and models found against expected.tsv (fails below 95%)
	@test -d "$(CORPUS)" || { echo "corpus: folder $(CORPUS) not found: set CORPUS to the folder holding expected.tsv"; exit 1; }
	go run ./hack/corpus -dir "$(CORPUS)"

demo: tools build ## Start a local control plane, run the controller, apply examples/, print the AIBOMs
	go run ./hack/demo

# An adapter author's loop, e.g. make dev DEV_FLAGS='-dir ./my-operator -adapter-profile ./my-operator/profile.yaml'
DEV_FLAGS ?=

dev: tools build ## Local control plane + controller with your -adapter-profile/-adapter-plugin, your CRDs and samples (-dir); stays up until Ctrl-C (docs/writing-an-adapter.md)
	go run ./hack/dev $(DEV_FLAGS)

# Sizes of the scale harness, e.g. make scale SCALE_FLAGS='-deployments 1000 -namespaces 10'
SCALE_FLAGS ?= -namespaces 50 -objects 10000

scale: tools build ## Measure the controller on a local control plane loaded with realistic chains (docs/performance.md)
	go run ./hack/scale $(SCALE_FLAGS)

clean:
	rm -rf bin _out
