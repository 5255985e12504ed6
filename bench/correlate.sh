#!/bin/sh
# ibdump --correlate against plain ibdump -q -z conv,qp (issue 22): the
# benchmark capture (bench/gencap, N packets) and a copy of it correlated as
# two capture points, against the conversation statistics of one copy;
# wall and CPU time and peak RSS from /usr/bin/time, RUNS runs each,
# interleaved so that both see the same machine load. Peak RSS is also
# shown for a capture of N/5 packets: bounded memory means it hardly grows.
#
# With CG=1, the instructions each executes (valgrind's cachegrind) too:
# the steady measure on a loaded machine, where wall time is noise.
#
#   bench/correlate.sh              # N=1000000, RUNS=5
#   N=200000 RUNS=3 bench/correlate.sh
#   CG=1 RUNS=3 bench/correlate.sh
set -eu
cd "$(dirname "$0")/.."
N=${N:-1000000}
RUNS=${RUNS:-5}
dir=${TMPDIR:-/tmp}/ibwire-bench-correlate
mkdir -p "$dir"
go build -o "$dir/ibdump" ./cmd/ibdump
for n in "$N" "$((N / 5))"; do
	[ -f "$dir/bench-$n.pcap" ] || go run ./bench/gencap -n "$n" -o "$dir/bench-$n.pcap"
	[ -f "$dir/bench-$n-copy.pcap" ] || cp "$dir/bench-$n.pcap" "$dir/bench-$n-copy.pcap"
done
measure() { # label, command...
	label=$1
	shift
	/usr/bin/time -f "$label %e %U %S %M" "$@" 2>&1 >/dev/null | tail -1
}
{
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		measure conv "$dir/ibdump" -q -z conv,qp "$dir/bench-$N.pcap"
		measure correlate "$dir/ibdump" --correlate "$dir/bench-$N.pcap" "$dir/bench-$N-copy.pcap"
		i=$((i + 1))
	done
	measure correlate-small "$dir/ibdump" --correlate "$dir/bench-$((N / 5)).pcap" "$dir/bench-$((N / 5))-copy.pcap"
} | awk -v n="$N" '
{ wall[$1] = wall[$1] " " $2; cpu[$1] = cpu[$1] " " ($3 + $4); rss[$1] = $5 > rss[$1] ? $5 : rss[$1] }
function median(list,   a, k, i, j, t) {
	k = split(list, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return a[int((k + 1) / 2)]
}
END {
	print "| run | packets per capture | median wall s | median CPU s | peak RSS MiB |"
	print "| --- | --: | --: | --: | --: |"
	printf "| ibdump -q -z conv,qp (one copy) | %d | %.2f | %.2f | %.0f |\n", n, median(wall["conv"]), median(cpu["conv"]), rss["conv"] / 1024
	printf "| ibdump --correlate (two copies) | %d | %.2f | %.2f | %.0f |\n", n, median(wall["correlate"]), median(cpu["correlate"]), rss["correlate"] / 1024
	printf "| ibdump --correlate (two copies) | %d | %.2f | %.2f | %.0f |\n", n / 5, median(wall["correlate-small"]), median(cpu["correlate-small"]), rss["correlate-small"] / 1024
	printf "\ncorrelate / conv,qp: %.2f× the wall time, %.2f× the CPU time\n", median(wall["correlate"]) / median(wall["conv"]), median(cpu["correlate"]) / median(cpu["conv"])
}'
if [ "${CG:-0}" = 1 ]; then
	instructions() { # command...: the I refs cachegrind counts
		valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			awk '/I *refs:/ { gsub(",", "", $NF); print $NF }'
	}
	conv=$(instructions "$dir/ibdump" -q -z conv,qp "$dir/bench-$N.pcap")
	corr=$(instructions "$dir/ibdump" --correlate "$dir/bench-$N.pcap" "$dir/bench-$N-copy.pcap")
	echo "$conv $corr" | awk '{ printf "instructions (cachegrind): conv,qp %.3fG, correlate %.3fG: %.2f×\n", $1 / 1e9, $2 / 1e9, $2 / $1 }'
fi
