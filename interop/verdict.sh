# Verdict checks of run.sh that a test can call alone (sourced, not executed). They read $BIN (the
# directory of ibdump and ibpeer) and add to the caller's why (failures) and notes arrays; a
# failure that only says the evidence is incomplete (the capture dropped packets, a loss scenario
# whose loss hit nothing) also sets the caller's inconclusive, which run.sh answers with one retry.

# capture_drops CAPLOG: the packets the live capture lost, as the capture tool counted them when it
# stopped: ibdump -i and tcpdump print "N packets dropped by kernel", tcpdump also "N packets
# dropped by interface". Prints the sum (0 when the log has neither line).
capture_drops() {
	awk '/packets dropped by (kernel|interface)/ { n += $1 } END { print n + 0 }' "$1" 2>/dev/null || echo 0
}

# check_capture PCAP CAPLOG DIR MIN_ROCE LOSS REFUSED: the capture as evidence. ibdump --check must
# find no bad ICRC and no malformed packet (its output goes to DIR/check.log and to stdout), and the
# capture must hold at least MIN_ROCE RoCE packets (none at all with REFUSED=1: a refused test never
# half-runs). Every other check reads the whole conversation from the capture, so a capture that
# dropped packets (CAPLOG) fails the run whatever else it shows. A loss scenario (LOSS not empty)
# must show at least one retransmission (ibdump's ibwire.analysis.retransmission): loss that
# cost nothing proves nothing. A plain ACK naming a READ or atomic request fails the run
# (acks_naming_requests). Sets the caller's roce, drops and retrans.
check_capture() {
	local pcap=$1 caplog=$2 dir=$3 min_roce=$4 loss=$5 refused=$6 out rc
	out=$("$BIN/ibdump" -q --check "$pcap" 2>&1); rc=$?
	echo "$out" >"$dir/check.log"
	echo "$out"
	roce=$(sed -n 's/.* \([0-9][0-9]*\) RoCE\/IB.*/\1/p' <<<"$out" | tail -1)
	roce=${roce:-0}
	[ "$rc" = 0 ] || why+=("ibdump --check exit=$rc")
	if [ "$refused" = 1 ]; then
		[ "$roce" = 0 ] || why+=("refused, yet the capture holds $roce RoCE packets: the test half-ran")
	else
		[ "$roce" -ge "$min_roce" ] || why+=("capture holds $roce RoCE packets, want >= $min_roce")
	fi
	local named
	named=$(acks_naming_requests "$pcap")
	[ -z "$named" ] || why+=("a plain ACK names a READ or atomic request's PSN (frames $named): the requester may complete the request without its data (rxe does)")
	drops=$(capture_drops "$caplog")
	if [ "$drops" -gt 0 ]; then
		why+=("capture incomplete: $drops packets dropped by the capture; its checks need the whole conversation")
		inconclusive="the capture dropped $drops packets"
	fi
	retrans=""
	if [ -n "$loss" ] && [ "$refused" != 1 ]; then
		retrans=$("$BIN/ibdump" -r "$pcap" -Y ibwire.analysis.retransmission -count 2>&1 | sed -n 's/^\([0-9][0-9]*\) packets$/\1/p')
		if [ -z "$retrans" ]; then
			why+=("loss: ibdump could not count the retransmissions")
		elif [ "$retrans" = 0 ]; then
			why+=("loss $loss: the capture shows no retransmission, so the loss tested nothing")
			inconclusive=${inconclusive:-"loss $loss caused no retransmission"}
		else
			notes+=("loss $loss: $retrans retransmitted packets")
		fi
	fi
}

# acks_naming_requests PCAP: the frames of plain ACKs (AETH syndrome ACK) whose PSN is the first PSN
# of a READ or atomic request the other side sent. No responder should send one: a READ is answered
# by its responses and an atomic by its ATOMIC ACK, and rxe's completer takes such an ACK for the
# request's completion, finishing a READ without its data (peer_rping_loss_gs, run 20261126T021454Z,
# frame 103: ibpeer re-ACKed a duplicate SEND with the READ's PSN). Prints them space-separated.
acks_naming_requests() {
	"$BIN/ibdump" -r "$1" -T fields -E separator=, -e frame.number -e ip.src -e ip.dst \
		-e bth.opcode -e bth.psn -e aeth.syndrome.opcode 2>/dev/null |
		awk -F, '$4 == 12 || $4 == 19 || $4 == 20 { req[$2 ">" $3 " " $5] = 1 }
			$4 == 17 && $6 == "0" && ($3 ">" $2 " " $5) in req { printf "%s%s", sep, $1; sep = " " }'
}

# check_data PCAP REGION DIR: the bytes the capture shows in the responder's region (the data of each
# RDMA WRITE, what each READ response carried; ibpeer replay --image, first copy of each byte) must
# equal ibpeer's buffer as it dumped it when its test ended: as responder what it received or served,
# as requester what it sent or read. Only the bytes the capture shows are compared (--image-mask):
# perftest places messages under 4 KiB at 64-byte strides, so the bytes between are never written,
# and ibpeer's buffer keeps its own random bytes there. With loss, a segment the transport placed
# twice, at the wrong offset or not at all shows here; both buffers are random, so equal means the
# data crossed. Adds to the caller's why/notes.
check_data() {
	local pcap=$1 region=$2 dir=$3 image=$3/capture-region.bin mask=$3/capture-region.mask out n shown at
	if [ ! -s "$region" ]; then
		why+=("data: ibpeer left no buffer dump ($region)")
		return
	fi
	if ! out=$("$BIN/ibpeer" replay --image "$image" --image-mask "$mask" "$pcap" 2>&1); then
		why+=("data: ibpeer replay --image failed: ${out//$'\n'/ }")
		return
	fi
	echo "$out" >"$dir/image.log"
	n=$(stat -c %s "$image")
	shown=$(tr -d '\000' <"$mask" | wc -c)
	if [ "$n" -eq 0 ] || [ "$shown" -eq 0 ]; then
		why+=("data: the capture shows no RDMA WRITE or READ data")
		return
	fi
	if [ "$(stat -c %s "$region")" -lt "$n" ]; then
		why+=("data: ibpeer's buffer holds $(stat -c %s "$region") bytes, the capture shows $n")
		return
	fi
	# the first byte (1-based) that differs where the capture shows it: cmp -l lists every
	# differing byte, the mask (od, one byte a line) says which of them the capture shows
	at=$(cmp -l -n "$n" "$image" "$region" 2>/dev/null |
		awk 'NR == FNR { shown[NR] = $1; next } shown[$1] == 1 { print $1; exit }' <(od -An -v -tu1 -w1 "$mask") -)
	if [ -z "$at" ]; then
		notes+=("data: the $shown bytes the capture shows written equal ibpeer's buffer")
	else
		why+=("data: the capture's bytes and ibpeer's buffer differ from byte $at of $n on")
	fi
}

# netem_dropped TCFILE: the "dropped N" of the netem qdisc in `tc -s qdisc show dev eth0` output
# (the counter netem raises for each packet its loss draws; the clsact qdisc has its own line).
netem_dropped() {
	awk '/^qdisc / { in_netem = ($2 == "netem") } in_netem && /dropped/ {
		sub(/.*dropped /, ""); sub(/,.*/, ""); print; exit }' "$1" 2>/dev/null
}

# roce_list PCAP SRCMAC: one line per RoCE packet SRCMAC sent, by tshark (not our decoder): dest QP,
# PSN, opcode, ICRC. A retransmission repeats its original's line, so two such lists compare as
# multisets (sort, comm).
roce_list() {
	tshark -r "$1" -Y "eth.src == $2 && infiniband" -T fields -E separator=' ' \
		-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.opcode -e infiniband.invariant.crc 2>/dev/null | sort
}

# frames_from PCAP MAC: one line per frame MAC sent, as tcpdump prints it without its time (TCP's
# timestamps option makes each TCP segment's line its own), sorted: a multiset comm can subtract.
frames_from() {
	tcpdump -r "$1" -n -t "ether src $2" 2>/dev/null | sort
}

# The matching window of check_points' correlation. A frame the guest receives waits in QEMU and
# the guest's TCG-emulated CPU before its ingress hook sees it: up to 39 ms in the first run
# (rxe_write_bw_points, 2026-11-26), past ibdump's default window (20 ms, for real hosts).
POINTS_WINDOW=${POINTS_WINDOW:-200ms}

# check_points DIR MAC IP: the two capture points of a points=guest scenario. DIR holds
# point-guest.pcap (guest a's eth0 before its netem, both directions), capture.pcap (ibdump on br0,
# RoCE only), capture-full.pcap (tcpdump on br0, everything), tc-qdisc.txt (guest a's
# `tc -s qdisc show dev eth0` after the tool) and the three captures' logs. The guest (MAC, IP) sent
# through netem and nothing else lost packets, so, when neither capture dropped any:
#   - the frames netem dropped are exactly those from MAC the guest point has and the bridge lacks
#     (frames_from, tcpdump's lines; the bridge also has what the guest sent before its capture
#     started, which the subtraction leaves out);
#   - ibdump --correlate --point guest= --point bridge= puts every RoCE packet the guest sent and the
#     bridge lacks on the segment guest → bridge, the very packets (dest QP and PSN) tshark finds in
#     the guest point's list and not the bridge's, and locates no other loss and no capture drop.
# Writes DIR/correlate.{json,txt}, DIR/correlate-lost.txt, DIR/points-missing.txt (RoCE, tshark) and
# DIR/points-missing-frames.txt (every frame, tcpdump); adds to the caller's why and notes (and
# inconclusive when a capture dropped packets).
check_points() {
	local dir=$1 mac=$2 ip=$3 g=$1/point-guest.pcap b=$1/capture.pcap full=$1/capture-full.pcap
	local netem gdrop fdrop missing roce lost_gb lost_all cdrops tshark_psns ours_psns
	local -a corr=("$BIN/ibdump" --correlate --correlate-window "$POINTS_WINDOW" --point "guest=$g" --point "bridge=$b")
	if [ ! -s "$g" ]; then
		why+=("points: guest a left no capture ($(tail -1 "$dir/point-tcpdump.log" 2>/dev/null))")
		return
	fi
	cat "$dir/tc-qdisc.txt" 2>/dev/null
	netem=$(netem_dropped "$dir/tc-qdisc.txt")
	if [ -z "$netem" ]; then
		why+=("points: no netem counter from guest a (tc-qdisc.txt)")
		return
	fi
	gdrop=$(capture_drops "$dir/point-tcpdump.log"); fdrop=$(capture_drops "$dir/capture-full.log")
	if [ "$gdrop" != 0 ] || [ "$fdrop" != 0 ]; then
		why+=("points: the captures dropped packets (guest $gdrop, bridge full $fdrop): the counts cannot close")
		inconclusive=${inconclusive:-"a point's capture dropped packets"}
	fi
	comm -23 <(frames_from "$g" "$mac") <(frames_from "$full" "$mac") >"$dir/points-missing-frames.txt"
	missing=$(wc -l <"$dir/points-missing-frames.txt")
	comm -23 <(roce_list "$g" "$mac") <(roce_list "$b" "$mac") >"$dir/points-missing.txt"
	roce=$(wc -l <"$dir/points-missing.txt")
	echo "frames guest a sent that the guest point has and the bridge lacks (tcpdump): $missing, RoCE among them (tshark): $roce"

	if ! "${corr[@]}" -T json >"$dir/correlate.json" 2>"$dir/correlate.err"; then
		why+=("points: ibdump --correlate failed: $(head -1 "$dir/correlate.err")")
		return
	fi
	"${corr[@]}" >"$dir/correlate.txt" 2>&1
	echo "${corr[*]}"
	cat "$dir/correlate.txt"
	"${corr[@]}" -Y ibwire.correlate.lost_on -T fields \
		-e frame.number -e ibwire.correlate.point -e ip.src -e infiniband.bth.destqp -e infiniband.bth.psn \
		-e infiniband.bth.opcode -e ibwire.correlate.copy -e ibwire.correlate.lost_on >"$dir/correlate-lost.txt" 2>&1
	lost_gb=$(jq --arg ip "$ip" '[.flows[] | select(.src == $ip) | .segments[] | select(.name == "guest → bridge") | .losses] | add // 0' "$dir/correlate.json")
	lost_all=$(jq '[.flows[].segments[].losses] | add // 0' "$dir/correlate.json")
	cdrops=$(jq '[.points[].capture_drops] | add // 0' "$dir/correlate.json")
	echo "netem dropped $netem; ibdump --correlate: $lost_gb lost guest → bridge, $((lost_all - lost_gb)) lost elsewhere, $cdrops capture drops"

	[ "$missing" = "$netem" ] ||
		why+=("points: netem dropped $netem, yet the bridge lacks $missing frames the guest point has from guest a")
	[ "$lost_gb" = "$roce" ] ||
		why+=("points: ibdump --correlate puts $lost_gb losses on guest → bridge, the bridge lacks $roce RoCE packets the guest sent")
	[ "$lost_all" = "$lost_gb" ] || why+=("points: ibdump --correlate locates $((lost_all - lost_gb)) losses elsewhere than guest → bridge")
	[ "$cdrops" = 0 ] || why+=("points: ibdump --correlate counts $cdrops capture drops; neither capture dropped any")
	# the very packets: dest QP and PSN of each, as a multiset
	tshark_psns=$(awk '{ print $1, $2 }' "$dir/points-missing.txt" | sort)
	ours_psns=$(awk -F'\t' -v ip="$ip" '$3 == ip && $8 == "guest → bridge" { print $4, $5 }' "$dir/correlate-lost.txt" | sort)
	[ "$tshark_psns" = "$ours_psns" ] ||
		why+=("points: the packets ibdump --correlate lost on guest → bridge are not those tshark finds missing (diff in $dir/points-missing.txt, correlate-lost.txt)")
	notes+=("points: netem dropped $netem ($roce RoCE, $((missing - roce)) other), ibdump --correlate: $lost_gb lost guest → bridge")
}
