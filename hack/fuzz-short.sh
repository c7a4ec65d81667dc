#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a short time each and fails if
# any of them fails.
#
#   hack/fuzz-short.sh                 # every target, FUZZTIME each (default 10s)
#   FUZZTIME=1m hack/fuzz-short.sh     # longer
#   hack/fuzz-short.sh FuzzWalk        # only targets whose name matches
#
# Targets are found by grepping the module's *_test.go files for
# "func FuzzX(f *testing.F)". `go test -fuzz` accepts one target per package,
# so each target gets its own run:
#   go test -run '^$' -fuzz '^FuzzX$' -fuzztime $FUZZTIME ./pkg
#
# A failure writes its input to the package's testdata/fuzz/FuzzX/ (commit it:
# it becomes a regression seed) and fails the script. One failure is not the
# target's: Go's fuzz coordinator can report "context deadline exceeded" when
# -fuzztime expires while a worker is busy (golang/go#75804, fixed in Go
# 1.27), with no failing input. Such a run, with that line as the only
# failure and no new input written, is reported and not counted.
#
# Environment: FUZZTIME (default 10s), FUZZPARALLEL (workers per target,
# default 1: the suite shares the machine with other tests), FUZZMINIMIZETIME
# (default 100x: interesting inputs are minimised briefly, so that a slow
# target does not spend its whole budget minimising).
set -euo pipefail

cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10s}"
FUZZPARALLEL="${FUZZPARALLEL:-1}"
FUZZMINIMIZETIME="${FUZZMINIMIZETIME:-100x}"
filter="${1:-}"

# "<package dir> <target>" per line, sorted; examples/ holds other modules.
targets=$(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' \
	--exclude-dir=examples --exclude-dir=_out --exclude-dir=bin --exclude-dir=.git . |
	sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*$|\1 \2|' | sort -u || true)

if [ -z "$targets" ]; then
	echo "fuzz-short: no fuzz targets found" >&2
	exit 1
fi

failed=()
passed=0
while read -r dir name; do
	if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then
		continue
	fi
	corpus="$dir/testdata/fuzz/$name"
	before=$(ls "$corpus" 2>/dev/null | sort || true)
	echo "=== fuzz ./$dir $name ($FUZZTIME)"
	log=$(mktemp)
	status=0
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" \
		-parallel "$FUZZPARALLEL" "./$dir" >"$log" 2>&1 || status=$?
	after=$(ls "$corpus" 2>/dev/null | sort || true)
	new=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | sed '/^$/d')
	if [ "$status" -eq 0 ]; then
		tail -n 1 "$log"
		passed=$((passed + 1))
	elif [ -z "$new" ] && grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE '^\s+(Failing input written|panic:|.*_test\.go:[0-9]+:)' "$log"; then
		echo "fuzz-short: $name: 'context deadline exceeded' at the end of -fuzztime without a failing input (golang/go#75804); not counted"
		passed=$((passed + 1))
	else
		cat "$log"
		if [ -n "$new" ]; then
			echo "fuzz-short: $name: failing input(s) written to $corpus: $new"
		fi
		failed+=("./$dir $name")
	fi
	rm -f "$log"
done <<<"$targets"

if [ "$passed" -eq 0 ] && [ "${#failed[@]}" -eq 0 ]; then
	echo "fuzz-short: no target matches '$filter'" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz-short: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz-short: $passed target(s) passed"
