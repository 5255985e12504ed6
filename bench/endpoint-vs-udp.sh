#!/bin/bash
# The endpoint's RC WRITE goodput over loopback beside plain batched UDP
# moving datagrams of the same size, in one run (issue 25):
#   udp       bench/udpmover: sendmmsg/recvmmsg batches of 64 between two
#             blocking sockets, DGRAM-byte datagrams (4136 at MTU 4096,
#             1080 at MTU 1024), as many datagrams as the WRITEs send
#   write     ibpeer write --size 65536 --iters ITERS against ibpeer serve
#   perftest  ibpeer perftest write -s 65536 -n ITERS, both ends ibpeers
# at path MTU 4096 and 1024. The rows run interleaved, ROUNDS rounds; the
# table has each row's median MB/s (10^6 bytes/s: RDMA payload for the
# endpoint, UDP payload for udp), its spread, and the median's share of
# udp's median at the same MTU. The load average is printed before and
# after: on a shared machine compare rows of one run only.
#
# As root the run goes into a network namespace of its own (unshare -n),
# so nothing else on the machine shares its loopback or ports; otherwise it
# uses 127.0.0.1 and 127.0.0.2 on the machine's loopback (UDP 4791, TCP
# 18515 and 9000-9001 must be free).
#
#   bench/endpoint-vs-udp.sh                  # ROUNDS=5 ITERS=10000
#   ROUNDS=3 ITERS=4000 bench/endpoint-vs-udp.sh
#   IBPEERS="old=/tmp/ibpeer-old new=/tmp/ibpeer-new" bench/endpoint-vs-udp.sh
#       # several ibpeer builds, interleaved, each in its own rows
#   MTUS=4096 bench/endpoint-vs-udp.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${ENDPOINT_VS_UDP_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	exec env ENDPOINT_VS_UDP_NETNS=1 unshare -n "$0" "$@"
fi
[ -n "${ENDPOINT_VS_UDP_NETNS:-}" ] && ip link set lo up
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-10000}
MTUS=${MTUS:-"4096 1024"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/udpmover" ./bench/udpmover
if [ -z "${IBPEERS:-}" ]; then
	go build -o "$tmp/ibpeer" ./cmd/ibpeer
	IBPEERS="ibpeer=$tmp/ibpeer"
fi
A=127.0.0.1 B=127.0.0.2

# listening NAME ADDR:PORT: wait until a TCP listener is up
listening() {
	for _ in $(seq 200); do
		ss -ltn | grep -q " $1 " && return 0
		sleep 0.05
	done
	echo "endpoint-vs-udp: nothing listens on $1" >&2
	return 1
}

# each run appends "MTU ROW MB/s" to $tmp/results
udp() { # MTU
	local dg=$(($1 + 40)) n=$((ITERS * 65536 / $1))
	[ "$1" = 1024 ] && dg=1080
	"$tmp/udpmover" recv --addr $B:9000 --size $dg --n $n >"$tmp/out" &
	local r=$!
	sleep 0.1 # a UDP receiver has no listener to wait for; its first datagram starts its clock anyway
	"$tmp/udpmover" send --addr $A:9001 --to $B:9000 --size $dg --n $n
	wait $r
	awk -v m="$1" '{ print m, "udp", $(NF-1) }' "$tmp/out" >>"$tmp/results"
}
write() { # MTU NAME BIN
	"$3" serve --addr $B --mtu "$1" >/dev/null 2>&1 &
	local s=$!
	listening $B:18515
	"$3" write --addr $A --to $B --size 65536 --iters "$ITERS" >"$tmp/out" 2> >(sed "s/^/[MTU $1, write $2] /" >&2)
	kill -INT $s
	wait $s || true
	awk -v m="$1" -v r="write $2" '$1 == 65536 { print m, r, $4 * 125 }' "$tmp/out" >>"$tmp/results"
}
perftest() { # MTU NAME BIN
	"$3" perftest write --addr $B -s 65536 -n "$ITERS" -m "$1" --report_gbits >/dev/null 2>&1 &
	local s=$!
	listening $B:18515
	"$3" perftest write --addr $A -s 65536 -n "$ITERS" -m "$1" --report_gbits $B >"$tmp/out" 2> >(sed "s/^/[MTU $1, perftest $2] /" >&2)
	wait $s || true
	awk -v m="$1" -v r="perftest $2" '$1 == 65536 { print m, r, $4 * 125 }' "$tmp/out" >>"$tmp/results"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/results"
for round in $(seq "$ROUNDS"); do
	for mtu in $MTUS; do
		udp "$mtu"
		for nb in $IBPEERS; do
			write "$mtu" "${nb%%=*}" "${nb#*=}"
			perftest "$mtu" "${nb%%=*}" "${nb#*=}"
		done
	done
	echo "round $round done: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$ROUNDS rounds, 65536-byte WRITEs x $ITERS; udp datagrams: 4136 bytes at MTU 4096, 1080 at MTU 1024"
echo
echo "| MTU | mover | MB/s (median) | min-max | vs udp |"
echo "| --: | --- | --: | --: | --: |"
python3 - "$tmp/results" <<'EOF'
import collections, statistics, sys
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault((f[0], " ".join(f[1:-1])), []).append(float(f[-1]))
for (mtu, name), v in rows.items():
    med = statistics.median(v)
    udp = statistics.median(rows[(mtu, "udp")]) if (mtu, "udp") in rows else 0
    share = f"{100 * med / udp:.0f}%" if udp else "-"
    print(f"| {mtu} | {name} | {med:,.0f} | {min(v):,.0f}-{max(v):,.0f} | {share} |")
EOF
