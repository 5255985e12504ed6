#!/usr/bin/env bash
# Times ibdump and tshark on the same generated RoCEv2 capture, in one run,
# and prints packets/s for each and their ratio; also ibdump's peak RSS at
# two capture sizes, to show memory does not grow with the capture.
#
# Usage: bench/ibdump-vs-tshark.sh [packets (default 1000000)] [repeat (default 3)]
# IBDUMP_FLAGS adds flags to every ibdump run (-j 1: one core).
# Needs tshark and GNU time (apt-get install -y tshark time).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
repeat=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/ibdump.bin" ./cmd/ibdump
# shellcheck disable=SC2086
printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$work/ibdump.bin" "${IBDUMP_FLAGS:-}" >"$work/ibdump"
chmod +x "$work/ibdump"
go build -o "$work/gencap" ./bench/gencap
"$work/gencap" -n "$n" -o "$work/bench.pcap"
"$work/gencap" -n $((4 * n)) -o "$work/bench4.pcap"
# The captures' half gigabyte is written back to disk in the background
# for seconds after gencap ends; the first row's runs would otherwise share
# the machine with that writeback.
sync
echo "capture: $n packets, $(du -h "$work/bench.pcap" | cut -f1); tshark: $(tshark --version 2>/dev/null | head -1)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"

# timed runs a command once and prints its wall time in seconds, to the
# millisecond (ibdump's runs take a tenth of a second, so time(1)'s
# centiseconds would make the ratio jump by 10%), and its CPU time (user +
# system, from GNU time): on a machine shared with other work, CPU time
# above wall time shows the cores overlapping.
timed() {
	local s e
	s=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$work/cpu" "$@" >/dev/null 2>&1
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" '{printf "%.3f %.2f\n", e-s, $1+$2}' "$work/cpu"
}

# row times ibdump and tshark $repeat times each, taking turns (ibdump,
# tshark, ibdump ...), and prints the fastest wall time of each, with the
# CPU time of ibdump's fastest run. Taking turns spreads ibdump's tenth-
# of-a-second runs over the whole of tshark's seconds, so that a moment of
# the host's other work cannot slow every one of them.
row() { # name ibdump-cmd... -- tshark-cmd...
	local name=$1; shift
	local ib=() ts=()
	while [ "$1" != "--" ]; do ib+=("$1"); shift; done
	shift
	ts=("$@")
	local ti="" tt="" ci="" t c
	for _ in $(seq "$repeat"); do
		read -r t c <<<"$(timed "${ib[@]}")"
		if [ -z "$ti" ] || awk -v a="$t" -v b="$ti" 'BEGIN{exit !(a<b)}'; then
			ti=$t ci=$c
		fi
		read -r t _ <<<"$(timed "${ts[@]}")"
		if [ -z "$tt" ] || awk -v a="$t" -v b="$tt" 'BEGIN{exit !(a<b)}'; then
			tt=$t
		fi
	done
	awk -v n="$n" -v name="$name" -v ti="$ti" -v ci="$ci" -v tt="$tt" 'BEGIN{
		printf "| %-34s | %7.3f s | %5.2f s | %12.0f | %7.3f s | %10.0f | %6.1fx |\n", name, ti, ci, n/ti, tt, n/tt, tt/ti }'
}

echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| mode | ibdump | ibdump CPU | ibdump pkt/s | tshark | tshark pkt/s | ratio |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
row "-q -z conv,qp vs -q -z conv,udp" "$work/ibdump" -q -z conv,qp "$work/bench.pcap" -- tshark -r "$work/bench.pcap" -q -z conv,udp
row "-q -z conv,qp -z expert vs -q -z conv,udp" "$work/ibdump" -q -z conv,qp -z expert "$work/bench.pcap" -- tshark -r "$work/bench.pcap" -q -z conv,udp
row "default text vs tshark default" "$work/ibdump" "$work/bench.pcap" -- tshark -r "$work/bench.pcap"
row "-T text vs tshark default" "$work/ibdump" -T text "$work/bench.pcap" -- tshark -r "$work/bench.pcap"
row "-V vs tshark -V" "$work/ibdump" -V "$work/bench.pcap" -- tshark -r "$work/bench.pcap" -V
fields=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e ip.src)
row "-T fields (5) vs tshark -T fields" "$work/ibdump" -T fields "${fields[@]}" "$work/bench.pcap" -- tshark -r "$work/bench.pcap" -T fields "${fields[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
rss() { /usr/bin/time -f '%M' -o "$work/rss" "$@" >/dev/null 2>&1; tail -1 "$work/rss"; }
r1=$(rss "$work/ibdump" -q -z conv,qp -z expert "$work/bench.pcap")
r4=$(rss "$work/ibdump" -q -z conv,qp -z expert "$work/bench4.pcap")
echo "peak RSS of ibdump -q -z conv,qp -z expert: $n packets ${r1} KiB, $((4 * n)) packets ${r4} KiB"
r1=$(rss "$work/ibdump" -T text "$work/bench.pcap")
r4=$(rss "$work/ibdump" -T text "$work/bench4.pcap")
echo "peak RSS of ibdump -T text: $n packets ${r1} KiB, $((4 * n)) packets ${r4} KiB"
