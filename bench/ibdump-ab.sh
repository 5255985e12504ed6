#!/usr/bin/env bash
# Compares ibdump built at two git revisions on the same generated capture,
# in one run, runs interleaved (A B A B ...) so that a machine busy with
# something else slows both alike: the measure of the rule that a feature may
# not slow the decode path by more than 5%.
#
# Usage: bench/ibdump-ab.sh OLD-REV [NEW-REV (default: the working tree)]
#        [rounds (default 10)] [-- ibdump flags (default: -q -z conv,qp)]
# Prints, per revision, the CPU time (task-clock from perf stat when perf can
# read it, else user+system time from GNU time) mean and best over the rounds,
# and NEW/OLD for both.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/ibdump-ab.sh OLD-REV [NEW-REV] [rounds] [-- flags]}
shift
new=""
rounds=10
if [ $# -gt 0 ] && [ "$1" != -- ]; then new=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != -- ]; then rounds=$1; shift; fi
[ "${1:-}" = -- ] && shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-q -z conv,qp)

work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; git worktree remove --force "$work/new" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

build() { # rev dir out
	if [ -z "$1" ]; then
		go build -o "$3" ./cmd/ibdump
		return
	fi
	git worktree add -q --detach "$2" "$1"
	(cd "$2" && go build -o "$3" ./cmd/ibdump)
}
build "$old" "$work/old" "$work/ibdump-old"
build "$new" "$work/new" "$work/ibdump-new"
go build -o "$work/gencap" ./bench/gencap
"$work/gencap" -n 1000000 -o "$work/bench.pcap"

# cpu_ms runs ibdump once and prints the CPU milliseconds it used.
if perf stat -e task-clock true >/dev/null 2>&1; then
	cpu_ms() {
		perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/{printf "%.1f\n", $1}'
	}
	what="task-clock (perf stat)"
else
	cpu_ms() {
		/usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.1f\n", ($1+$2)*1000}'
	}
	what="user+system (GNU time, 10 ms resolution)"
fi

echo "ibdump ${flags[*]} on 1,000,000 packets; $rounds rounds interleaved; CPU time: $what"
echo "old: ${old} $(git rev-parse --short "$old")   new: ${new:-working tree} $(git rev-parse --short "${new:-HEAD}")$([ -z "$new" ] && ! git diff --quiet && echo ' (modified)')"
: >"$work/times"
for _ in $(seq "$rounds"); do
	for side in old new; do
		echo "$side $(cpu_ms "$work/ibdump-$side" "${flags[@]}" "$work/bench.pcap")" >>"$work/times"
	done
done
awk '{s[$1]+=$2; n[$1]++; if (!($1 in m) || $2<m[$1]) m[$1]=$2}
	END {
		printf "old: mean %.1f ms, best %.1f ms\nnew: mean %.1f ms, best %.1f ms\n", s["old"]/n["old"], m["old"], s["new"]/n["new"], m["new"]
		printf "new/old: mean %+.1f%%, best %+.1f%%\n", 100*(s["new"]/n["new"])/(s["old"]/n["old"])-100, 100*m["new"]/m["old"]-100
	}' "$work/times"
