#!/bin/sh
# Pacing accuracy and top speed of ibpeer replay, in one `go test -bench`
# run (issue 9): the 1000 RoCEv2 datagrams of pcaps/rxe/write_bw.pcap,
# looped, sent to a UDP wire on 127.0.0.1
#   - paced at --pps 10000 for N datagrams (50000 = 5 s): achieved rate,
#     its distance from the asked rate, pacing-error percentiles;
#   - unpaced (--top, batches of 64 through the endpoint's UDP wire);
#   - a plain net.UDPConn blaster sending the same datagrams, one WriteTo each.
# "received" is the share the receiving wire counted.
#
#   bench/replay-rate.sh             # N=50000: the 5-second paced row
#   N=10000 bench/replay-rate.sh     # quicker
set -eu
cd "$(dirname "$0")/.."
N=${N:-50000}
go test -run '^$' -bench 'BenchmarkReplayRate' -benchtime "${N}x" -count 1 ./replay/ |
awk '
/^Benchmark/ {
	split($1, p, "/"); row = p[2]; sub(/-[0-9]+$/, "", row)
	pps = ""; off = "-"; p50 = "-"; p90 = "-"; p99 = "-"; mx = "-"; rcv = ""; mb = ""
	for (i = 2; i <= NF; i++) {
		u = $(i+1)
		if (u == "pps") pps = $i; if (u == "%off-rate") off = sprintf("%+.3f%%", $i)
		if (u == "p50-µs") p50 = $i; if (u == "p90-µs") p90 = $i; if (u == "p99-µs") p99 = $i; if (u == "max-µs") mx = $i
		if (u == "%received") rcv = $i; if (u == "Mb/s") mb = $i
	}
	printf "| %-16s | %10.0f | %8.1f | %9s | %8s | %8s | %8s | %8s | %6.1f%% |\n", row, pps, mb, off, p50, p90, p99, mx, rcv
	next
}
/^(goos|goarch|cpu|pkg):/ { print "<!-- " $0 " -->"; next }
' | { echo "| sender           | packets/s  | Mb/s     | vs asked  | p50 µs   | p90 µs   | p99 µs   | max µs   | received |"; echo "| --- | --: | --: | --: | --: | --: | --: | --: | --: |"; cat; }
