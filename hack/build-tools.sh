#!/usr/bin/env bash
# Builds the local control plane (kube-apiserver, etcd) and controller-gen from
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
build bin/controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen
