# The two commands of a fresh machine:
#   make demo   runs the controller end to end on a local control plane
#   make test   runs every test
SHELL := /usr/bin/env bash
export KUBEBUILDER_ASSETS := $(CURDIR)/bin/k8s
GO_TEST_FLAGS ?=

.PHONY: all tools generate verify-generated build lint fuzz-short test corpus demo scale clean

all: build

tools: ## Build kube-apiserver, etcd and controller-gen from the Go module proxy into bin/
	@hack/build-tools.sh

generate: tools ## Regenerate deepcopy code and the CRD from api/
	bin/controller-gen object paths=./api/...
	bin/controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases

verify-generated: generate ## Fail when generated files are stale
	@git diff --exit-code -- api config/crd || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

build: ## Build the controller into bin/
	go build -o bin/aibom-controller ./cmd/controller
	go build -o bin/aibom ./cmd/aibom

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

fuzz-short: ## Run every fuzz target briefly (FUZZTIME each, default 10s)
	hack/fuzz-short.sh

test: tools lint verify-generated fuzz-short ## Run all tests (unit and envtest against a real kube-apiserver + etcd)
	go test $(GO_TEST_FLAGS) ./... && cd examples/ollama && go test $(GO_TEST_FLAGS) ./...

# The corpus of real manifests and what a careful reader names in each
# (expected.tsv); see internal/corpus.
CORPUS ?= ../shared/corpus/realworld

corpus: ## Scan every corpus manifest and score runtimes and models found against expected.tsv (fails below 95%)
	@test -d "$(CORPUS)" || { echo "corpus: folder $(CORPUS) not found: set CORPUS to the folder holding expected.tsv"; exit 1; }
	go run ./hack/corpus -dir "$(CORPUS)"

demo: tools build ## Start a local control plane, run the controller, apply examples/, print the AIBOMs
	go run ./hack/demo

# Sizes of the scale harness, e.g. make scale SCALE_FLAGS='-deployments 1000 -namespaces 10'
SCALE_FLAGS ?= -namespaces 50 -objects 10000

scale: tools build ## Measure the controller on a local control plane loaded with realistic chains (docs/performance.md)
	go run ./hack/scale $(SCALE_FLAGS)

clean:
	rm -rf bin _out
