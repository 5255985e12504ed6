#!/usr/bin/env bash
# Times ibdump -T parquet against ibdump -q -z conv,qp on the same generated
# capture (issue 23 asks the export to run at no less than half the speed),
# and prints the export's peak RSS at two capture sizes, to show whether its
# memory follows the row-group size or the capture.
#
# With valgrind installed, it also counts both runs' instructions
# (cachegrind), the steady measure on a loaded machine.
#
# Usage: bench/parquet-export.sh [packets (default 1000000)] [repeat (default 3)]
# Needs GNU time (apt-get install -y time); valgrind is optional.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
repeat=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/ibdump" ./cmd/ibdump
go build -o "$work/gencap" ./bench/gencap
"$work/gencap" -n "$n" -o "$work/bench.pcap"
"$work/gencap" -n $((4 * n)) -o "$work/bench4.pcap"
echo "capture: $n packets, $(du -h "$work/bench.pcap" | cut -f1); 4x: $(du -h "$work/bench4.pcap" | cut -f1)"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# best_of runs a command $repeat times and prints the fastest wall time
# and the user+system CPU time of that run, in seconds.
best_of() {
	local best="" cpu=""
	for _ in $(seq "$repeat"); do
		rm -rf "$work/out"
		/usr/bin/time -f "%e %U %S" -o "$work/t" "$@" >/dev/null 2>&1
		read -r wall user sys <"$work/t"
		if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN{exit !(a<b)}'; then
			best=$wall
			cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')
		fi
	done
	echo "$best $cpu"
}

read -r zw zc < <(best_of "$work/ibdump" -q -z conv,qp "$work/bench.pcap")
read -r pw pc < <(best_of "$work/ibdump" -T parquet -w "$work/out" "$work/bench.pcap")
echo "ibdump -q -z conv,qp:      wall $zw s, cpu $zc s, $(awk -v n="$n" -v t="$zw" 'BEGIN{printf "%d", n/t}') packets/s"
echo "ibdump -T parquet -w DIR:  wall $pw s, cpu $pc s, $(awk -v n="$n" -v t="$pw" 'BEGIN{printf "%d", n/t}') packets/s"
echo "export speed / analysis speed: $(awk -v a="$zw" -v b="$pw" 'BEGIN{printf "%.3f", a/b}') by wall time, $(awk -v a="$zc" -v b="$pc" 'BEGIN{printf "%.3f", a/b}') by CPU time (issue 23 wants >= 0.5)"
if command -v valgrind >/dev/null; then
	# instructions prints the instructions cachegrind counts for a run.
	instructions() {
		rm -rf "$work/out"
		valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
	}
	zi=$(instructions "$work/ibdump" -q -z conv,qp "$work/bench.pcap")
	pi=$(instructions "$work/ibdump" -T parquet -w "$work/out" "$work/bench.pcap")
	echo "instructions: -z conv,qp $zi, -T parquet $pi: export speed / analysis speed $(awk -v a="$zi" -v b="$pi" 'BEGIN{printf "%.3f", a/b}') by instructions"
fi
for f in bench.pcap bench4.pcap; do
	rm -rf "$work/out"
	/usr/bin/time -v "$work/ibdump" -T parquet -w "$work/out" "$work/$f" 2>"$work/v" >/dev/null
	echo "peak RSS of -T parquet on $f: $(awk -F': ' '/Maximum resident/{print $2}' "$work/v") KiB; output $(du -sh "$work/out" | cut -f1)"
done
