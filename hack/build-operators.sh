#!/usr/bin/env bash
# Builds the real operators the qualification suite (test/operators, make
# qualify) runs, from the Go module proxy at the versions pinned in
# hack/operators/<name>/go.mod, into bin/operators/<name> (git-ignored).
# Each operator has its own small module, so its dependencies never meet
# ours or another operator's. Idempotent: an operator is rebuilt only when
# its binary is missing or older than its go.mod/go.sum. The builds run one
# after another (they share the Go build cache; two cores are not enough to
# run them side by side faster). Usage: hack/build-operators.sh [name...]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mkdir -p bin/operators

# name -> the operator's main package (the module it belongs to is required,
# at its pinned version, in hack/operators/<name>/go.mod).
declare -A main=(
  [lws]=sigs.k8s.io/lws/cmd
  [jobset]=sigs.k8s.io/jobset
  [kuberay]=github.com/ray-project/kuberay/ray-operator
  [trainer]=github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(lws jobset kuberay trainer)

for name in "${names[@]}"; do
  pkg=${main[$name]:?unknown operator $name}
  dir=hack/operators/$name out=bin/operators/$name
  if [ -x "$out" ] && [ "$out" -nt "$dir/go.mod" ] && [ "$out" -nt "$dir/go.sum" ]; then
    echo "operators: $out is up to date"
    continue
  fi
  echo "operators: building $out from $pkg ($(cd "$dir" && go list -m -f '{{.Path}}@{{.Version}}' "$(go list -f '{{.Module.Path}}' "$pkg")"))..."
  start=$SECONDS
  (cd "$dir" && go build -trimpath -o "$root/$out.tmp" "$pkg")
  mv "$root/$out.tmp" "$root/$out"
  echo "operators: built $out in $((SECONDS - start))s"
done
