#!/bin/bash
# ib_write_bw and ib_read_bw between two Linux rxe guests and between rxe and ibpeer, in one run,
# at the same sizes (the scenarios of interop/scenarios.sh: 65536 bytes x 200, MTU 1024), and a
# table of the perftest rows the client printed. Needs what interop/run.sh needs (root, QEMU).
# Under TCG the guests, not the peers, set every number: compare rows of one run only.
#   bench/interop-bw.sh [ROUNDS]   (default 1; each round runs the six scenarios once)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-1}
OUT=${IBWIRE_INTEROP_OUT:-/var/tmp/ibwire-interop-out}
scen=(rxe_write_bw peer_write_bw_gc peer_write_bw_gs rxe_read_bw peer_read_bw_gc peer_read_bw_gs)
rows=()
for r in $(seq "$rounds"); do
	interop/run.sh "${scen[@]}" >&2 || echo "bench: some scenario failed in round $r (its row is missing)" >&2
	run=$(readlink -f "$OUT/latest")
	for s in "${scen[@]}"; do
		case $s in
		rxe_*) log=$run/$s/guest-a.log who="rxe client -> rxe server" ;;
		*_gc) log=$run/$s/guest-a.log who="rxe client -> ibpeer server" ;;
		*_gs) log=$run/$s/host.log who="ibpeer client -> rxe server" ;;
		esac
		tool=ib_write_bw
		[[ $s == *read* ]] && tool=ib_read_bw
		row=$(grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+' "$log" 2>/dev/null | tail -1 || true)
		[ -n "$row" ] || continue
		read -r bytes iters peak avg rate <<<"$row"
		rows+=("| $r | $tool | $who | $bytes | $iters | $peak | $avg | $rate |")
	done
done
echo "| round | tool | direction | bytes | iterations | BW peak MB/s | BW average MB/s | MsgRate Mpps |"
echo "| --: | --- | --- | --: | --: | --: | --: | --: |"
printf '%s\n' "${rows[@]}"
