#!/usr/bin/env bash
# Builds the local control plane (kube-apiserver, etcd, kube-controller-manager) and controller-gen from
# the Go module proxy into bin/. Nothing is downloaded from anywhere else.
# Idempotent: a binary is rebuilt only when missing or older than the pinned
# versions in hack/tools/go.mod.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mkdir -p bin/k8s

build() { # build OUTPUT PACKAGE [LDFLAGS]
  local out=$1 pkg=$2 ldflags=${3:-}
  if [ -x "$out" ] && [ "$out" -nt hack/tools/go.mod ] && [ "$out" -nt hack/tools/go.sum ]; then
    echo "tools: $out is up to date"
    return
  fi
  echo "tools: building $out from $pkg (first build from an empty module cache takes ~5-10 minutes)..."
  local start=$SECONDS
  (cd hack/tools && go build -trimpath ${ldflags:+-ldflags "$ldflags"} -o "$root/$out.tmp" "$pkg")
  mv "$root/$out.tmp" "$root/$out"
  echo "tools: built $out in $((SECONDS - start))s"
}

build bin/k8s/etcd go.etcd.io/etcd/server/v3
build bin/k8s/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "-X k8s.io/component-base/version.gitVersion=v1.37.2"
# The garbage collector and the workload controllers (Deployments make
# ReplicaSets and Pods, Jobs make Pods) for the envtests where deletion and
# ownership matter, and for the real operators' qualification.
build bin/k8s/kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "-X k8s.io/component-base/version.gitVersion=v1.37.2"
build bin/controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen

# xmllint (Debian's libxml2-utils) validates the XML documents against the
# CycloneDX XSD in the tests; installed from Debian's packages when missing.
if ! command -v xmllint >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "tools: installing xmllint (libxml2-utils) from Debian's packages..."
    apt-get install -y -qq libxml2-utils >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq libxml2-utils >/dev/null; }
  else
    echo "tools: xmllint is missing: install libxml2-utils (Debian/Ubuntu) or libxml2 (other systems); the XML schema tests need it" >&2
    exit 1
  fi
fi
echo "tools: $(xmllint --version 2>&1 | head -1)"
