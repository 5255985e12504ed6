#!/bin/bash
# Keeps one run of the two-point netem scenario (rxe_write_bw_points) in pcaps/multipoint_netem/RUN/:
# guest.pcap.gz (guest a's eth0 before its netem, both directions), bridge.pcap.gz (everything on br0,
# tcpdump), tc-qdisc.txt (guest a's `tc -s qdisc show dev eth0` after the run) and MANIFEST.md (the
# commands, the verdict, netem's dropped counter, and the packets the bridge lacks as tcpdump and
# tshark count them), which correlate/netem_test.go reads. gzip -9 makes a run of ~4000 frames at
# each point about 80 KB a file.
#
#   interop/keep-points.sh            run the scenario (what run.sh needs: root, QEMU), keep it if it passed
#   interop/keep-points.sh RUNDIR     keep the scenario's directory of an earlier run if it passed;
#                                     FAILED=1 keeps a failed one too (a defect's evidence), its verdict
#                                     in the manifest
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
NAME=rxe_write_bw_points
MAC=52:54:00:77:00:11
if [ $# -eq 0 ]; then
	"$HERE/run.sh" "$NAME"
	run=$(readlink -f "${IBWIRE_INTEROP_OUT:-/var/tmp/ibwire-interop-out}/latest")
else
	run=$(readlink -f "$1")
fi
W=$run/$NAME
line=$(grep -E "^$NAME " "$run/summary.txt") || { echo "keep-points: no $NAME in $run" >&2; exit 1; }
verdict=PASS
if ! grep -qE "^$NAME +[^ ]+ +PASS " <<<"$line"; then
	[ "${FAILED:-0}" = 1 ] || { echo "keep-points: $NAME did not pass in $run; not kept (FAILED=1 keeps it)" >&2; exit 1; }
	verdict="FAIL: $(sed -E 's/^[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +//' <<<"$line" | sed "s#$W/##g")"
fi
DEST=$REPO/pcaps/multipoint_netem/$(basename "$run")
mkdir -p "$DEST"
gzip -9 -n -c "$W/point-guest.pcap" >"$DEST/guest.pcap.gz"
gzip -9 -n -c "$W/capture-full.pcap" >"$DEST/bridge.pcap.gz"
cp "$W/tc-qdisc.txt" "$DEST/tc-qdisc.txt"
# shellcheck source=verdict.sh
. "$HERE/verdict.sh"
netem=$(netem_dropped "$W/tc-qdisc.txt")
missing=$(comm -23 <(frames_from "$W/point-guest.pcap" $MAC) <(frames_from "$W/capture-full.pcap" $MAC) | wc -l)
comm -23 <(roce_list "$W/point-guest.pcap" $MAC) <(roce_list "$W/capture-full.pcap" $MAC) >"$W/kept-missing.txt"
roce=$(wc -l <"$W/kept-missing.txt")
frames() { tcpdump -r "$1" -n 2>/dev/null | wc -l; }
{
	cat <<EOF
# Two capture points of one rxe run with netem loss between them (issue 22)

Recorded by \`interop/keep-points.sh\` from the harness scenario \`$NAME\` (interop/scenarios.sh): Linux
rdma_rxe in two QEMU/TCG guests (Debian bookworm, kernel 6.1), guest a 192.168.77.11 (MAC $MAC)
the client, guest b 192.168.77.12 the server, on bridge br0. Guest a's eth0 has
\`tc qdisc add dev eth0 root netem loss 2%\` and nothing else loses packets.

- guest.pcap.gz: inside guest a, every frame eth0 was asked to send, before its root qdisc (netem),
  and every frame it received: a clsact qdisc on eth0 whose egress and ingress matchall filters
  mirror to a dummy device (\`action mirred egress mirror dev point0\`), recorded there by tcpdump;
  its clock is the guest's
- bridge.pcap.gz: \`tcpdump -i br0\` in the harness's network namespace, everything (the tools' TCP
  exchange, ARP, IPv6 too), the host's clock
- tc-qdisc.txt: \`tc -s qdisc show dev eth0\` in guest a once the tool had ended

Facts (correlate/netem_test.go reads them):

- recorded: $(date -u +%F) (run $(basename "$run"))
- client (guest a): \`$(sed -n 's/^client=//p' "$W/meta.txt")\`
- server (guest b): \`$(sed -n 's/^server=//p' "$W/meta.txt")\`
- verdict: $verdict
- guest frames: $(frames "$W/point-guest.pcap")
- bridge frames: $(frames "$W/capture-full.pcap")
- guest MAC: $MAC
- netem dropped: $netem
- frames missing at the bridge: $missing
- RoCE packets missing at the bridge: $roce
- other frames missing at the bridge: $((missing - roce))

The frames missing at the bridge are the frames from guest a that guest.pcap.gz has and
bridge.pcap.gz lacks, counted as multisets of tcpdump's lines (\`tcpdump -n -t\`; the bridge also has
what guest a sent before its capture started). The RoCE packets among them, as tshark lists them
(dest QP, PSN, opcode, ICRC; \`interop/verdict.sh\`'s roce_list): a retransmission of a PSN is a line
of its own.

| dest qp | psn | opcode | icrc |
| --- | --- | --- | --- |
EOF
	awk '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$W/kept-missing.txt"
	echo
	echo "The harness's verdict of that run (check_points in interop/verdict.sh; the bridge point there is"
	echo "ibdump's own capture of br0, RoCE only):"
	echo
	echo '```'
	sed 's/^    | //' "$W/points.out" | sed "s#$W/##g; s#[^ ]*/bin/ibdump #ibdump #"
	echo '```'
} >"$DEST/MANIFEST.md"
echo "kept $DEST: $(du -cb "$DEST"/*.gz | tail -1 | cut -f1) bytes of captures; netem dropped $netem, the bridge lacks $missing ($roce RoCE); $verdict"
