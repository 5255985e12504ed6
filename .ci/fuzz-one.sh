#!/usr/bin/env bash
# fuzz-one.sh PKG TARGET FUZZTIME: fuzz one native target for FUZZTIME.
#
# A target fails when the fuzzer finds an input that fails it: Go then
# writes that input to PKG/testdata/fuzz/TARGET and this script exits 1.
#
# Go's fuzzing coordinator has a shutdown race of its own: when -fuzztime
# runs out while a worker is still inside a call, it can report
# "context deadline exceeded" and fail the target with no input written
# (internal/fuzz's CoordinateFuzzing returns its own deadline as an error;
# seen across many projects on loaded two-core runners, e.g.
# luthersystems/elps#335). That is not a finding and nothing can reproduce
# it. So a failure that wrote no input and says only that is checked by
# replaying the target's whole committed corpus; the script passes, and
# says so, only if the replay passes.
#
# Minimization is bounded (FUZZMINIMIZETIME, 200 runs unless set). Go's
# default gives each input 60 s, and while a worker minimizes it fuzzes
# nothing. A coverage bit that only some runs of an input set (endpoint's
# FuzzCMPassive: fmt's printer pool refilled after a GC) makes an input
# "new", its minimized form is not, so the bit never joins the coordinator's
# coverage and the next GC starts another minimization, so unbounded
# minimization can take a short run's whole time. A crasher is still
# written, only less minimized.
set -uo pipefail
pkg=$1 name=$2 fuzztime=$3
minimize=${FUZZMINIMIZETIME:-200x}
corpus="$pkg/testdata/fuzz/$name"
before=$(ls "$corpus" 2>/dev/null | sort)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

go test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && exit 0

after=$(ls "$corpus" 2>/dev/null | sort)
if [ "$before" != "$after" ]; then
	echo "fuzz-one: $name found a failing input: $(comm -13 <(echo "$before") <(echo "$after") | sed "s|^|$corpus/|")" >&2
	exit 1
fi
if ! grep -q '^    context deadline exceeded$' "$out" || grep -qE 'panic:|Failing input' "$out"; then
	echo "fuzz-one: $name failed (exit $status)" >&2
	exit 1
fi
echo "fuzz-one: $name: Go's fuzz coordinator missed its own stop deadline and wrote no input; replaying the corpus"
go test "$pkg" -run "^$name\$" -count 1 -v 2>&1 | tail -3
exit "${PIPESTATUS[0]}"
