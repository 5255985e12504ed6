#!/bin/bash
# Interop harness: Linux rdma_rxe in QEMU guests against each other and against ibpeer.
#
#   interop/run.sh [NAME|GLOB ...]   run scenarios (default: all), one at a time; summary at the end
#   interop/run.sh list              names, roles and descriptions
#   interop/run.sh check             validate the scenario table (no root needed)
#   interop/run.sh netdown           remove the private netns (after KEEP_NS=1)
#
# Each scenario: a private netns with bridge br0 (host side 192.168.77.1), guest a (.11) and, for
# rxe-rxe, guest b (.12) booted under QEMU TCG from the image build.sh makes; the host command runs
# in the netns; `ibdump -i br0 -w` records the RoCE traffic; `ibdump -q --check` must find no ICRC
# error; both sides must exit 0 and print what the scenario expects (scenarios.sh).
# Exit status: 0 when every scenario passed (or failed while named in XFAIL), 1 otherwise, 2 usage.
#
# env: IBWIRE_INTEROP_CACHE  image + binaries (default /var/tmp/ibwire-interop-cache)
#      IBWIRE_INTEROP_OUT    results root (default /var/tmp/ibwire-interop-out); each run writes
#                            OUT/<UTC time>/<scenario>/ and points OUT/latest at it
#      XFAIL='GLOB ...'      scenarios expected to fail today: a failure is reported XFAIL and does
#                            not fail the run; a pass is reported XPASS and fails it (update the list)
#      KEEP_NS=1             keep the netns after the run      GUEST_TIMEOUT  default per-side timeout
#      FULL_PCAP=1           also record all of br0 with tcpdump (capture-full.pcap: ARP, TCP exchanges)
#      INTEROP_SCENARIOS     the table to read (default interop/scenarios.sh)
#      IBWIRE_INTEROP_BIN    where ibdump and ibpeer are (default CACHE/bin)
#      NO_BUILD=1            do not run build.sh / go build (use what the cache holds)
#      RETRY_INCONCLUSIVE=0  do not run a scenario again whose capture dropped packets or whose loss
#                            caused no retransmission (default: once, saying so in the verdict)
#      IBWIRE_INTEROP_LOCK   the machine-wide lock one run holds (default /tmp/ibwire-interop-netns.lock)
#      POINTS_WINDOW         ibdump --correlate's window in points=guest verdicts (default 200ms)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
C=${IBWIRE_INTEROP_CACHE:-/var/tmp/ibwire-interop-cache}
OUTROOT=${IBWIRE_INTEROP_OUT:-/var/tmp/ibwire-interop-out}
BIN=${IBWIRE_INTEROP_BIN:-$C/bin}   # ibdump, ibpeer (built here unless NO_BUILD=1)
NS=ibwire-interop
XFAIL=${XFAIL:-}
GUEST_TIMEOUT=${GUEST_TIMEOUT:-120}
GRACE=${GRACE:-15}   # seconds the others may still run once a side has failed (4x once one succeeded)
IPA=192.168.77.11; IPB=192.168.77.12; IPH=192.168.77.1

log() { echo "[interop $(date -u +%T)] $*"; }
die() { echo "interop: $*" >&2; exit 2; }

# ------------------------------------------------------------------ scenario table
declare -a ORDER=()
declare -A ROLE=() CLIENT=() SERVER=() OPT=()
def() {  # NAME ROLE CLIENT SERVER [key=value ...]
	local name=$1 role=$2
	case $role in rxe-rxe | guest-client | guest-server) ;; *) die "scenario $name: unknown role $role" ;; esac
	[ -z "${ROLE[$name]:-}" ] || die "scenario $name defined twice"
	ORDER+=("$name"); ROLE[$name]=$role; CLIENT[$name]=$3; SERVER[$name]=$4
	shift 4
	local kv
	for kv in "$@"; do
		case ${kv%%=*} in
		expect_client | expect_server | expect_host | loss | guest_loss | points | mtu | listen | min_roce | timeout | desc | host | tolerate | check_data | refused | forbid) ;;
		*) die "scenario $name: unknown key ${kv%%=*}" ;;
		esac
		OPT[$name.${kv%%=*}]=${kv#*=}
	done
}
opt() { echo "${OPT[$1.$2]:-${3:-}}"; }  # NAME KEY [DEFAULT]
SCENARIOS=${INTEROP_SCENARIOS:-$HERE/scenarios.sh}
# shellcheck source=scenarios.sh
. "$SCENARIOS"
# shellcheck source=verdict.sh
. "$HERE/verdict.sh"

# check_table: every value in the table has the form run_one relies on (run.sh check).
check_table() {
	local n k pat bad=0
	for n in "${ORDER[@]}"; do
		for k in expect_client expect_server expect_host tolerate refused forbid; do
			pat=$(opt "$n" $k)
			[ -z "$pat" ] && continue
			grep -Eq -- "$pat" </dev/null 2>/dev/null
			[ $? = 2 ] && { echo "scenario $n: $k is not an extended regexp: $pat"; bad=1; }
		done
		[[ $(opt "$n" listen tcp) == @(tcp|sleep) ]] || { echo "scenario $n: listen must be tcp or sleep"; bad=1; }
		for k in loss guest_loss; do
			[[ -z $(opt "$n" $k) || $(opt "$n" $k) =~ ^[0-9]+(\.[0-9]+)?%$ ]] || { echo "scenario $n: $k must look like 2%"; bad=1; }
		done
		[ -z "$(opt "$n" loss)" ] || [ -z "$(opt "$n" guest_loss)" ] || { echo "scenario $n: loss= and guest_loss= exclude each other"; bad=1; }
		[[ -z $(opt "$n" points) || $(opt "$n" points) == guest ]] || { echo "scenario $n: points must be guest"; bad=1; }
		[ -z "$(opt "$n" points)" ] || [ -n "$(opt "$n" guest_loss)" ] || { echo "scenario $n: points=guest needs guest_loss= (what the two points must account for)"; bad=1; }
		for k in mtu min_roce timeout; do
			[[ -z $(opt "$n" $k) || $(opt "$n" $k) =~ ^[0-9]+$ ]] || { echo "scenario $n: $k must be a number"; bad=1; }
		done
		[ -n "${CLIENT[$n]}" ] && [ -n "${SERVER[$n]}" ] || { echo "scenario $n: needs a client and a server command"; bad=1; }
		[ "${ROLE[$n]}" = rxe-rxe ] || [ -z "$(opt "$n" host)" ] || { echo "scenario $n: host= is for rxe-rxe (the host side is the peer in ${ROLE[$n]})"; bad=1; }
		[ -n "$(opt "$n" desc)" ] || { echo "scenario $n: no desc"; bad=1; }
		[[ -z $(opt "$n" check_data) || ($(opt "$n" check_data) == 1 && ${ROLE[$n]} != rxe-rxe) ]] ||
			{ echo "scenario $n: check_data=1 is for a scenario whose host side is ibpeer perftest"; bad=1; }
		if [ -n "$(opt "$n" refused)" ]; then
			[ "${ROLE[$n]}" != rxe-rxe ] || { echo "scenario $n: refused= is for a scenario whose host side is ibpeer"; bad=1; }
			[ -z "$(opt "$n" check_data)$(opt "$n" loss)" ] || { echo "scenario $n: a refused test moves no data (no check_data=, loss=)"; bad=1; }
			[ -n "$(opt "$n" forbid)" ] || { echo "scenario $n: refused= needs forbid=, what the guest must not print (its result)"; bad=1; }
		fi
	done
	[ $bad = 0 ] && echo "${#ORDER[@]} scenarios ok"
	return $bad
}

# ------------------------------------------------------------------ network
net_up() {  # MTU
	local mtu=$1 t
	ip netns list | grep -qw "$NS" || ip netns add "$NS"
	ip -n "$NS" link set lo up
	ip -n "$NS" link show br0 >/dev/null 2>&1 ||
		ip -n "$NS" link add br0 address 52:54:00:77:00:01 type bridge stp_state 0 forward_delay 0
	ip -n "$NS" addr show dev br0 | grep -q "$IPH/" || ip -n "$NS" addr add "$IPH/24" dev br0
	for t in tapa tapb; do
		ip -n "$NS" link show $t >/dev/null 2>&1 || ip -n "$NS" tuntap add dev $t mode tap
		ip -n "$NS" link set $t master br0
		ip -n "$NS" link set $t mtu "$mtu" up
	done
	ip -n "$NS" link set br0 mtu "$mtu" up
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.br0.disable_ipv6=1 2>/dev/null || true
}
net_down() { ip netns del "$NS" 2>/dev/null || true; }

# host_loss LOSS: drop LOSS (2%) of the RoCE datagrams the host side sends, so that loss hits the
# data whichever way it flows (the guests' netem covers what they send; the host kernel has no
# sch_netem, so nftables' numgen draws instead, in the netns's output hook).
host_loss() {
	local per10k
	per10k=$(awk -v l="${1%\%}" 'BEGIN { printf "%d", l * 100 }')
	ip netns exec "$NS" nft -f - <<EOF
table inet ibwire_loss {
	chain out {
		type filter hook output priority 0; policy accept;
		udp dport 4791 numgen random mod 10000 < $per10k counter drop
	}
}
EOF
}

# ------------------------------------------------------------------ guests
boot_guest() {  # NAME IP MAC TAP SHARE MTU TIMEOUT -> pid
	local name=$1 ip=$2 mac=$3 tap=$4 share=$5 mtu=$6 tmo=$7
	ip netns exec "$NS" qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 -nographic -no-reboot \
		-kernel "$C/vmlinuz" -initrd "$C/initrd.img" \
		-append "console=ttyS0 quiet panic=-1 lab.name=$name lab.ip=$ip/24 lab.mtu=$mtu lab.timeout=$tmo" \
		-drive "file=$C/rootfs.img,if=virtio,format=raw,snapshot=on" \
		-virtfs "local,path=$share,mount_tag=lab,security_model=none,id=lab" \
		-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no" -device "virtio-net-pci,netdev=n0,mac=$mac" \
		>"$share/$name.serial.log" 2>&1 &
	echo $!
}

# guest_script NAME SIDE(client|server) CMD LOSS LISTEN WAITFOR [POINT]: the script guest NAME runs.
# A server touches /lab/NAME/listening once ready; a client waits for WAITFOR (a path under /lab).
# POINT=1 makes the guest a capture point (point_start, point_stop).
guest_script() {
	local name=$1 side=$2 cmd=$3 loss=$4 listen=$5 waitfor=$6 point=${7:-}
	echo '#!/bin/bash'
	[ -n "$point" ] && point_start "$name"
	[ -n "$loss" ] && echo "tc qdisc add dev eth0 root netem loss $loss && echo '# netem loss $loss on eth0'"
	guest_main "$@"
	[ -n "$point" ] && point_stop "$name"
	return 0
}

# point_start NAME: the guest's own capture point, upstream of its netem. tcpdump on eth0 sees an
# outgoing frame only in dev_hard_start_xmit, after the root qdisc, so never the frames netem drops.
# The clsact qdisc's egress hook runs earlier, in __dev_queue_xmit before the root qdisc's enqueue:
# a matchall filter there mirrors every frame eth0 is asked to send (and, on the ingress hook, every
# frame it receives) to point0, a dummy device, where tcpdump records it. point0 carries no address
# and no IPv6, so it sends nothing of its own (modprobe dummy numdummies=0: no dummy0 either). The
# guest's tcpdump log and its capture go to /lab/NAME/.
point_start() {
	cat <<EOF
modprobe dummy numdummies=0 && modprobe -a sch_ingress cls_matchall act_mirred || { echo '# point: kernel modules missing'; exit 97; }
ip link add point0 type dummy && sysctl -qw net.ipv6.conf.point0.disable_ipv6=1 &&
	ip link set point0 mtu \$(cat /sys/class/net/eth0/mtu) up &&
	tc qdisc add dev eth0 clsact &&
	tc filter add dev eth0 egress matchall action mirred egress mirror dev point0 &&
	tc filter add dev eth0 ingress matchall action mirred egress mirror dev point0 ||
	{ echo '# point: cannot mirror eth0 to point0'; exit 97; }
tcpdump -Z root -i point0 -n -s 0 -B 16384 -U -w /tmp/point.pcap 2>/lab/$1/point-tcpdump.log &
TD=\$!
for i in \$(seq 40); do grep -q 'listening on' /lab/$1/point-tcpdump.log && break; sleep 0.25; done
echo '# point: eth0 egress (before the root qdisc) and ingress mirrored to point0, tcpdump -i point0'
EOF
}

# point_stop NAME: once the tool is done (and its TCP connection closed), netem's counters, then the
# capture. Runs after the tool whatever its exit status, which stays the script's.
point_stop() {
	cat <<EOF
RC=\$?
sleep 1
tc -s qdisc show dev eth0 >/lab/$1/tc-qdisc.txt 2>&1
kill -INT \$TD; wait \$TD
cp /tmp/point.pcap /lab/$1/point.pcap
exit \$RC
EOF
}

# guest_main NAME SIDE CMD LOSS LISTEN WAITFOR: the tool's part of guest_script.
guest_main() {
	local name=$1 side=$2 cmd=$3 loss=$4 listen=$5 waitfor=$6
	if [ "$side" = server ]; then
		cat <<EOF
echo '# server: $(printf '%s' "$cmd" | sed "s/'/'\\\\''/g")'
$cmd &
P=\$!
if [ "$listen" = tcp ]; then
	for i in \$(seq 40); do ss -ltnH 2>/dev/null | grep -q ':18515 ' && break; kill -0 \$P 2>/dev/null || break; sleep 0.25; done
else
	sleep 2
fi
touch /lab/$name/listening
wait \$P
EOF
	else
		cat <<EOF
for i in \$(seq 150); do [ -z "$waitfor" ] || [ -e "$waitfor" ] && break; sleep 0.5; done
echo '# client: $(printf '%s' "$cmd" | sed "s/'/'\\\\''/g")'
$cmd
EOF
	fi
}

# ------------------------------------------------------------------ host side
# host_start NAME CMD LOG WAITFOR TIMEOUT: run CMD in the netns (after WAITFOR exists, if given);
# writes LOG, LOG.rc and LOG.pid (the pid of `timeout`, which leads the command's process group).
host_start() {
	local name=$1 cmd=$2 logf=$3 waitfor=$4 tmo=$5
	(
		if [ -n "$waitfor" ]; then
			for _ in $(seq $((tmo * 4))); do [ -e "$waitfor" ] || [ -e "$logf.stop" ] && break; sleep 0.25; done
		fi
		echo "# host: $cmd" >"$logf"
		if [ -e "$logf.stop" ] || { [ -n "$waitfor" ] && [ ! -e "$waitfor" ]; }; then
			echo "# not started: the guest never signalled ${waitfor##*/share/}" >>"$logf"
			echo 125 >"$logf.rc"
			exit
		fi
		ip netns exec "$NS" env PATH="$BIN:$PATH" timeout "$tmo" bash -c "$cmd" >>"$logf" 2>&1 &
		echo $! >"$logf.pid"
		wait $!
		echo $? >"$logf.rc"
	) &
}

# ------------------------------------------------------------------ one scenario
# Fills RESULT[name] (PASS/FAIL/XFAIL/XPASS), WHY[name], WALL[name], PKTS[name].
declare -A RESULT=() WHY=() WALL=() PKTS=() INCONC=()

is_xfail() { local g; for g in ${XFAIL//,/ }; do [[ $1 == $g ]] && return 0; done; return 1; }

indent() { sed 's/^/    | /'; }

# expect_note PATTERN FILE: ", expected /PATTERN/ found|MISSING" for a side's header line.
expect_note() {
	[ -n "$1" ] || return 0
	if grep -Eq -- "$1" "$2"; then echo ", expected /$1/ found"; else echo ", expected /$1/ MISSING"; fi
}

run_one() {
	local name=$1 role=${ROLE[$1]}
	local mtu loss gloss point listen tmo min_roce hostcmd
	mtu=$(opt "$name" mtu 1500); loss=$(opt "$name" loss); listen=$(opt "$name" listen tcp)
	# guest_loss=: netem in guest a only (its own capture point, points=guest, sees what it drops)
	gloss=$(opt "$name" guest_loss); gloss=${gloss:-$loss}
	point=$([ "$(opt "$name" points)" = guest ] && echo 1)
	tmo=$(opt "$name" timeout "$GUEST_TIMEOUT"); min_roce=$(opt "$name" min_roce 1)
	hostcmd=$(opt "$name" host)
	local W=$RUNDIR/$name S=$RUNDIR/$name/share
	rm -rf "$W"; mkdir -p "$S/a" "$S/b"
	echo
	log "=== $name ($role): $(opt "$name" desc)"
	net_up "$mtu"

	# who runs what: guest a always boots; guest b only for rxe-rxe
	local ga_side ga_cmd gb_cmd="" host_side="" host_wait=""
	case $role in
	rxe-rxe)
		ga_side=client; ga_cmd=${CLIENT[$name]}; gb_cmd=${SERVER[$name]}
		guest_script b server "$gb_cmd" "$loss" "$listen" "" >"$S/b.sh"
		guest_script a client "$ga_cmd" "$gloss" "$listen" /lab/b/listening "$point" >"$S/a.sh"
		[ -n "$hostcmd" ] && host_side=host host_wait=$S/b/listening
		;;
	guest-client)
		ga_side=client; ga_cmd=${CLIENT[$name]}; hostcmd=${SERVER[$name]}; host_side=server
		guest_script a client "$ga_cmd" "$gloss" "$listen" "" "$point" >"$S/a.sh"
		;;
	guest-server)
		ga_side=server; ga_cmd=${SERVER[$name]}; hostcmd=${CLIENT[$name]}; host_side=client
		host_wait=$S/a/listening
		guest_script a server "$ga_cmd" "$gloss" "$listen" "" "$point" >"$S/a.sh"
		;;
	esac
	chmod +x "$S"/*.sh
	[ -n "$loss" ] && [ "$role" != rxe-rxe ] && host_loss "$loss"
	# check_data=1: ibpeer perftest leaves its buffer behind for the data check of the verdict
	local REGION=$W/host-region.bin
	[ "$(opt "$name" check_data)" = 1 ] && hostcmd+=" --dump-region $REGION"

	# live capture of br0 with our own ibdump; tcpdump only if ibdump -i cannot capture
	local PCAP=$W/capture.pcap CAPTOOL=ibdump CPID
	ip netns exec "$NS" "$BIN/ibdump" -i br0 -w "$PCAP" >"$W/capture.log" 2>&1 &
	CPID=$!
	sleep 0.5
	if ! kill -0 $CPID 2>/dev/null; then
		log "ibdump -i br0 failed ($(tail -1 "$W/capture.log")); capturing with tcpdump instead"
		CAPTOOL=tcpdump
		ip netns exec "$NS" tcpdump -Z root -i br0 -n -s 0 -U -w "$PCAP" 'udp port 4791' >"$W/capture.log" 2>&1 &
		CPID=$!
		sleep 0.5
	fi

	# FULL_PCAP=1: also everything on br0 (ARP, the tools' TCP exchange) with tcpdump, for debugging
	local FPID=""
	# (points=guest: the verdict counts the frames other than RoCE that netem dropped from it)
	if [ "${FULL_PCAP:-0}" = 1 ] || [ -n "$point" ]; then
		ip netns exec "$NS" tcpdump -Z root -i br0 -n -s 0 -U -w "$W/capture-full.pcap" >"$W/capture-full.log" 2>&1 &
		FPID=$!
	fi

	local t0 t1 now
	t0=$(date +%s.%N)
	[ "$host_side" = server ] && host_start "$name" "$hostcmd" "$W/host.log" "" "$tmo"
	local PA PB=""
	PA=$(boot_guest a $IPA 52:54:00:77:00:11 tapa "$S" "$mtu" "$tmo")
	[ -n "$gb_cmd" ] && PB=$(boot_guest b $IPB 52:54:00:77:00:12 tapb "$S" "$mtu" "$tmo")
	[ "$host_side" = client ] || [ "$host_side" = host ] && host_start "$name" "$hostcmd" "$W/host.log" "$host_wait" "$tmo"

	# Wait for every side. Boot (~10 s) + tmo bounds the guests. Once a side is done the others get
	# GRACE seconds when it failed (so a side that fails at once, like today's `ibpeer: unknown
	# command`, does not leave its peer waiting for tmo), 4 x GRACE when it succeeded (its peer is
	# finishing too, maybe slowly on a loaded machine). A diagnostic host command starts no clock.
	local deadline=$(($(date +%s) + tmo + 60)) first_done="" grace=$GRACE killed=""
	while :; do
		local running=0 finished=()
		if kill -0 "$PA" 2>/dev/null; then running=1; else finished+=("$S/a/rc"); fi
		if [ -n "$PB" ]; then if kill -0 "$PB" 2>/dev/null; then running=1; else finished+=("$S/b/rc"); fi; fi
		if [ -n "$host_side" ]; then
			if [ -e "$W/host.log.rc" ]; then
				[ "$host_side" = host ] || finished+=("$W/host.log.rc")
			else
				running=1
			fi
		fi
		[ $running = 0 ] && break
		now=$(date +%s)
		if [ -z "$first_done" ] && [ ${#finished[@]} -gt 0 ]; then
			first_done=$now grace=$((GRACE * 4))
			local f
			for f in "${finished[@]}"; do [ "$(cat "$f" 2>/dev/null)" = 0 ] || grace=$GRACE; done
		fi
		if [ "$now" -gt "$deadline" ] || { [ -n "$first_done" ] && [ $((now - first_done)) -gt "$grace" ]; }; then
			local sig=TERM
			[ -n "$killed" ] && sig=KILL  # the second time round, they did not stop on TERM
			killed="stopped after $([ "$now" -gt "$deadline" ] && echo "the ${tmo}+60 s deadline" || echo "${grace} s grace"):"
			kill -$sig "$PA" $PB 2>/dev/null && killed+=" guests"
			touch "$W/host.log.stop"
			if [ -n "$host_side" ] && [ ! -e "$W/host.log.rc" ] && [ -e "$W/host.log.pid" ]; then
				kill -$sig "$(cat "$W/host.log.pid")" 2>/dev/null && killed+=" host"
			fi
			sleep 2
			deadline=$((now + 30)); first_done=$((now + 100000))
		fi
		sleep 0.2
	done
	t1=$(date +%s.%N)
	sleep 0.5
	kill -INT $CPID 2>/dev/null
	for _ in $(seq 20); do kill -0 $CPID 2>/dev/null || break; sleep 0.25; done
	kill -KILL $CPID 2>/dev/null
	wait $CPID 2>/dev/null
	[ -n "$FPID" ] && { kill -INT "$FPID"; wait "$FPID"; } 2>/dev/null

	# ---- verdict
	local why=() notes=() rc refused forbid
	refused=$(opt "$name" refused); forbid=$(opt "$name" forbid)
	inconclusive=""
	for g in a b; do
		[ "$g" = b ] && [ -z "$gb_cmd" ] && continue
		local side=$ga_side; [ "$g" = b ] && side=server
		cp "$S/$g/out.log" "$W/guest-$g.log" 2>/dev/null || echo "(no output: the guest did not run its script)" >"$W/guest-$g.log"
		rc=$(cat "$S/$g/rc" 2>/dev/null || echo "none (did not finish)")
		local pat; pat=$(opt "$name" "expect_$side")
		echo "--- guest $g ($side) exit=$rc$(expect_note "$pat" "$W/guest-$g.log")"
		indent <"$W/guest-$g.log"
		local tol; tol=$(opt "$name" tolerate)
		# tolerate=: a tool's known spurious failure (an exit status other than a timeout, with
		# the tool's own success line present and its known error message printed) is a note
		if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [[ $rc =~ ^[0-9]+$ ]] && [ -n "$tol" ] &&
			grep -Eq -- "$tol" "$W/guest-$g.log" && { [ -z "$pat" ] || grep -Eq -- "$pat" "$W/guest-$g.log"; }; then
			notes+=("note: guest $g $side exit=$rc tolerated (output matches /$tol/)")
		elif [ -n "$refused" ]; then
			# refused: the guest fails (its expected line, when given, is its failure message) and
			# prints no result; a guest server the refused host never reached may be left waiting
			[ "$rc" = 0 ] && why+=("guest $g $side exit=0 although ibpeer refused")
			[ "$rc" = 124 ] && why+=("guest $g $side exit=124 (timeout): not a clean failure")
		elif [ "$rc" != 0 ]; then
			why+=("guest $g $side exit=$rc$([ "$rc" = 124 ] && echo ' (timeout)')")
		fi
		[ -n "$pat" ] && ! grep -Eq -- "$pat" "$W/guest-$g.log" && why+=("guest $g $side: expected line missing")
		[ -n "$forbid" ] && grep -Eq -- "$forbid" "$W/guest-$g.log" && why+=("guest $g $side printed /$forbid/ (a result) although ibpeer refused")
	done
	if [ -n "$host_side" ]; then
		rc=$(cat "$W/host.log.rc" 2>/dev/null || echo "none (did not finish)")
		local pat; pat=$(opt "$name" "expect_$host_side")
		echo "--- host ($host_side) exit=$rc$(expect_note "$pat" "$W/host.log")"
		indent <"$W/host.log"
		if [ -n "$refused" ]; then
			# refused at once: an exit status of its own (not a timeout, not stopped) and the reason
			[[ $rc =~ ^[0-9]+$ ]] && [ "$rc" != 0 ] && [ "$rc" != 124 ] || why+=("host $host_side exit=$rc: want a refusal (a non-zero exit of its own)")
			grep -Eq -- "$refused" "$W/host.log" || why+=("host $host_side: refusal /$refused/ missing")
		else
			[ "$rc" = 0 ] || why+=("host $host_side exit=$rc$([ "$rc" = 124 ] && echo ' (timeout)')")
		fi
		[ -n "$pat" ] && ! grep -Eq -- "$pat" "$W/host.log" && why+=("host $host_side: expected line missing")
	fi
	if [ -n "$killed" ]; then
		# a refused client never reaches the guest server, which waits until it is stopped
		if [ -n "$refused" ] && [ "$host_side" = client ]; then
			notes+=("note: $killed (the guest server waited for the refused client)")
		else
			why+=("$killed")
		fi
	fi
	echo "--- capture ($CAPTOOL -i br0): $PCAP"
	local roce drops retrans
	check_capture "$PCAP" "$W/capture.log" "$W" "$min_roce" "$gloss" "$([ -n "$refused" ] && echo 1)" >"$W/check.out"
	indent <"$W/check.out"
	if [ -n "$point" ]; then
		echo "--- capture point guest (guest a, eth0 before netem): $W/point-guest.pcap"
		cp "$S/a/point.pcap" "$W/point-guest.pcap" 2>/dev/null
		cp "$S/a/tc-qdisc.txt" "$S/a/point-tcpdump.log" "$W/" 2>/dev/null
		check_points "$W" 52:54:00:77:00:11 $IPA >"$W/points.out"
		indent <"$W/points.out"
	fi
	[ "$(opt "$name" check_data)" = 1 ] && check_data "$PCAP" "$REGION" "$W"
	# a note, not a failure: the peers' verdict does not depend on which tool recorded them
	[ "$CAPTOOL" = ibdump ] || notes+=("note: captured with tcpdump because ibdump -i failed")

	local wall; wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	{
		echo "scenario=$name"; echo "role=$role"; echo "client=${CLIENT[$name]}"; echo "server=${SERVER[$name]}"
		echo "host=$hostcmd"; echo "mtu=$mtu"; echo "loss=$loss"; echo "guest_loss=$(opt "$name" guest_loss)"
		echo "points=$(opt "$name" points)"; echo "capture_tool=$CAPTOOL"
		echo "wall_s=$wall"; echo "ready_a=$(cat "$S/a/ready" 2>/dev/null)"; echo "ready_b=$(cat "$S/b/ready" 2>/dev/null)"
	} >"$W/meta.txt"
	local res=PASS
	[ ${#why[@]} -gt 0 ] && [ -n "${why[0]}" ] && res=FAIL
	if is_xfail "$name"; then [ $res = PASS ] && res=XPASS || res=XFAIL; fi
	RESULT[$name]=$res; WALL[$name]=$wall; PKTS[$name]=${roce:-0}; INCONC[$name]=$inconclusive
	local w; WHY[$name]=""
	for w in "${why[@]}" "${notes[@]}"; do [ -n "$w" ] && WHY[$name]+="${WHY[$name]:+; }$w"; done
	log "$res $name (${wall} s, ${roce:-0} RoCE packets)${WHY[$name]:+: ${WHY[$name]}}"
	[ "${KEEP_NS:-0}" = 1 ] || net_down
}

# ------------------------------------------------------------------ main
[ $# -ge 1 ] || set -- all
case $1 in
list)
	for n in "${ORDER[@]}"; do printf '%-24s %-13s %s\n' "$n" "${ROLE[$n]}" "$(opt "$n" desc)"; done
	exit 0 ;;
netdown) net_down; exit 0 ;;
check) check_table; exit ;;
esac

# resolve names/globs against the table, keeping its order
declare -a RUN=()
for arg in "$@"; do
	[ "$arg" = all ] && arg='*'
	found=0
	for n in "${ORDER[@]}"; do
		if [[ $n == $arg ]]; then found=1; [[ " ${RUN[*]:-} " == *" $n "* ]] || RUN+=("$n"); fi
	done
	[ $found = 1 ] || die "no scenario matches '$arg' (interop/run.sh list)"
done
check_table >/dev/null || die "the scenario table is inconsistent: $(check_table)"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, taps, qemu)"
for n in "${RUN[@]}"; do
	[ -n "$(opt "$n" loss)" ] && [ "${ROLE[$n]}" != rxe-rxe ] && ! command -v nft >/dev/null &&
		die "$n: loss on the host side needs nft (apt-get install nftables)"
done

# The netns, bridge and taps have fixed names: one run at a time per machine, whatever its
# cache or results directory. A second run waits for the first instead of tearing its net down,
# and before it builds: the binaries in the cache are the first run's until it ends (a second
# run's build once swapped ibpeer under a running one).
LOCK=${IBWIRE_INTEROP_LOCK:-/tmp/ibwire-interop-netns.lock}
exec 9>"$LOCK"
if ! flock -n 9; then
	log "another interop run holds $LOCK (netns $NS); waiting up to an hour"
	flock -w 3600 9 || die "another interop run still holds $LOCK after an hour"
fi

if [ "${NO_BUILD:-0}" != 1 ]; then
	mkdir -p "$C"
	"$HERE/build.sh" >"$C/build.log" 2>&1 || { tail -20 "$C/build.log"; die "image build failed (log: $C/build.log)"; }
	grep "^\[build" "$C/build.log"
	mkdir -p "$BIN"
	# ibdump and ibpeer from the checkout. A working tree that does not build (someone mid-edit)
	# falls back to HEAD, loudly; ibpeer that does not build at all leaves the ibpeer scenarios to fail.
	for cmd in ibdump ibpeer; do
		rm -f "$BIN/$cmd"
		if ! (cd "$REPO" && go build -o "$BIN/$cmd" "./cmd/$cmd") 2>"$C/$cmd.build.log"; then
			log "WARNING: ./cmd/$cmd does not build in the working tree ($(head -2 "$C/$cmd.build.log" | tr '\n' ' ')); building it from HEAD"
			rm -rf "$C/src-head" && mkdir -p "$C/src-head"
			(cd "$REPO" && git archive HEAD | tar -x -C "$C/src-head") &&
				(cd "$C/src-head" && go build -o "$BIN/$cmd" "./cmd/$cmd") 2>>"$C/$cmd.build.log" ||
				log "WARNING: ./cmd/$cmd does not build from HEAD either; see $C/$cmd.build.log"
		fi
	done
fi
[ -x "$BIN/ibdump" ] || die "no ibdump in $BIN"
[ -f "$C/rootfs.img" ] || die "no guest image in $C (interop/build.sh)"

mkdir -p "$OUTROOT"
RUNDIR=$OUTROOT/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RUNDIR" && ln -sfn "$RUNDIR" "$OUTROOT/latest"
log "${#RUN[@]} scenario(s); results in $RUNDIR${XFAIL:+; expected to fail: $XFAIL}"
trap 'net_down; exit 130' INT TERM

T0=$(date +%s)
for n in "${RUN[@]}"; do
	run_one "$n"
	# Evidence that is only incomplete (the capture dropped packets, the loss hit nothing) says
	# nothing about the peers: run once more, saying so; the second verdict stands.
	if [[ ${RESULT[$n]} == @(FAIL|XFAIL) ]] && [ -n "${INCONC[$n]}" ] && [ "${RETRY_INCONCLUSIVE:-1}" = 1 ]; then
		first=${INCONC[$n]}
		log "retrying $n once: $first"
		rm -rf "$RUNDIR/$n.try1" && mv "$RUNDIR/$n" "$RUNDIR/$n.try1"
		run_one "$n"
		WHY[$n]+="${WHY[$n]:+; }note: retried once, the first run ($n.try1) was inconclusive: $first"
	fi
done

echo
printf '%-24s %-13s %-6s %7s %6s  %s\n' SCENARIO ROLE RESULT WALL_S ROCE WHY
for n in "${RUN[@]}"; do
	printf '%-24s %-13s %-6s %7s %6s  %s\n' "$n" "${ROLE[$n]}" "${RESULT[$n]}" "${WALL[$n]}" "${PKTS[$n]}" "${WHY[$n]}"
done | tee "$RUNDIR/summary.txt"
bad=$(grep -cE '^[^ ]+ +[^ ]+ +(FAIL|XPASS) ' "$RUNDIR/summary.txt")
echo "$(grep -c ' PASS ' "$RUNDIR/summary.txt") passed, $bad failed, $(grep -c ' XFAIL ' "$RUNDIR/summary.txt") expected failures, $(($(date +%s) - T0)) s; logs and captures in $RUNDIR"
[ "$bad" = 0 ]
