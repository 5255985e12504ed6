#!/bin/sh
# Loopback throughput of the endpoint's wires beside a plain UDP sender and
# receiver moving the same datagrams, in one `go test -bench` run
# (ARCHITECTURE.md: the endpoint's hot-path budget). Each op is one
# datagram; batches are written then read back in lockstep, so nothing is
# lost and the figures are per-datagram costs on this machine. PacketWire
# rows need CAP_NET_RAW and are skipped without it.
#
#   bench/endpoint-udp.sh              # 200000 datagrams per row
#   N=20000 bench/endpoint-udp.sh      # quicker
set -eu
cd "$(dirname "$0")/.."
N=${N:-200000}
go test -run '^$' -bench 'BenchmarkUDPLoopback' -benchtime "${N}x" -count 1 ./endpoint/ |
awk '
/^Benchmark/ {
	split($1, p, "/"); wire = p[2]; size = p[3]; batch = p[4]; sub(/-[0-9]+$/, "", batch)
	sub("size=", "", size); sub("batch=", "", batch)
	for (i = 2; i <= NF; i++) { if ($(i+1) == "dgram/s") d = $i; if ($(i+1) == "Gb/s") g = $i; if ($(i+1) == "allocs/op") a = $i }
	printf "| %-11s | %5s | %5s | %10.0f | %7.3f | %s |\n", wire, size, batch, d, g, a
	next
}
/^(goos|goarch|cpu|pkg):/ { print "<!-- " $0 " -->"; next }
' | { echo "| wire        | bytes | batch | datagrams/s | Gb/s    | allocs/op |"; echo "| --- | --: | --: | --: | --: | --: |"; cat; }
