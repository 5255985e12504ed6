# Interop scenarios: the one table run.sh reads (sourced, not executed).
#
#   def NAME ROLE 'CLIENT COMMAND' 'SERVER COMMAND' [key=value ...]
#
# ROLE says where each command runs:
#   rxe-rxe       client in guest a (192.168.77.11), server in guest b (192.168.77.12): a baseline
#                 between two Linux rxe devices; an optional host= command runs beside them
#   guest-client  client in guest a, server on the host side of the bridge (192.168.77.1, ibpeer)
#   guest-server  server in guest a, client on the host side of the bridge
# Host commands run inside the private netns with the freshly built ibpeer and ibdump first on PATH.
#
# keys:
#   expect_client= / expect_server= / expect_host=  extended regexp the side's output must match
#                  (each side must also exit 0; a scenario without an expectation for a side only
#                  checks its exit status)
#   loss=N%        netem loss on eth0 egress of every guest, and (guest-client, guest-server) nftables
#                  loss on the host side's RoCE output, so the loss hits the data whichever way it
#                  flows; a loss scenario passes only when the capture shows a retransmission
#   guest_loss=N%  netem loss on guest a's eth0 egress only (not with loss=): the one place that loses
#                  packets, which points=guest then sees from both sides
#   points=guest   guest a is a capture point too, upstream of its netem (its eth0 mirrored to a dummy
#                  device before the root qdisc); the verdict (check_points) requires netem's dropped
#                  count to equal the frames the bridge lacks, and ibdump --correlate to put exactly the
#                  RoCE ones on guest → bridge and nothing anywhere else
#   mtu=N          netdev MTU of the guests, taps and bridge (1500 -> rxe active_mtu 1024)
#   listen=tcp|sleep  how a guest server signals readiness: a TCP listener on 18515 (the tools'
#                  out-of-band port) or 2 s (RDMA CM tools have no TCP listener)
#   min_roce=N     the capture must hold at least N RoCE packets (default 1)
#   timeout=S      seconds each side may run (default 120)
#   check_data=1  (ibpeer perftest write/read on the host) ibpeer dumps its buffer (--dump-region) and
#                  the verdict requires the bytes the capture shows in the responder's region (WRITE
#                  data, READ responses: ibpeer replay --image) to equal it: byte-exact delivery
#   refused=RE     the expected verdict is "refused cleanly": the host side (ibpeer) exits non-zero on its
#                  own, printing RE (why it refused); each guest side exits non-zero, not by timeout (a
#                  guest server a refused client never reached may be stopped instead), prints its
#                  expect_ line (its failure message) when one is given and never forbid=; the capture
#                  holds no RoCE packet at all (nothing half-ran)
#   forbid=RE      (with refused=) what no guest side may print: the tool's result
#   tolerate=RE    a guest side's non-zero exit (not a timeout) is only a note when its output
#                  matches RE and its expectation: for a tool bug we did not write and cannot fix
#   desc=TEXT      one line for the listing
#
# Guests: rxe0 on eth0, GID index 1 = ::ffff:<IPv4> (RoCEv2), active MTU 1024. The ibpeer command
# lines follow issue 8 and ENDPOINT.md §2: each compatibility mode takes the tool's own flags
# (-s size, -n iterations, -A atomic, -C count, ...) plus --bind <host IP>, the address whose
# ::ffff-mapped GID ibpeer advertises; a trailing address or -a/-s names the peer as the tool does.

GA=192.168.77.11   # guest a
GB=192.168.77.12   # guest b
HOST=192.168.77.1  # host side of br0: ibpeer binds here

PT="-d rxe0 -x 1 -F"   # perftest on rxe: device, RoCEv2 GID index, no CPU-frequency warning
PP="-d rxe0 -g 1"      # ibv_*_pingpong on rxe: device, RoCEv2 GID index

# What success prints.
OK_PP='[0-9]+ iters in [0-9.]+ seconds'                      # ibv_*_pingpong, both sides
OK_BW='^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+'   # perftest result row (#bytes #iterations BW peak, average, MsgRate)
OK_LAT='^[[:space:]]*[0-9]+[[:space:]]+[0-9]+([[:space:]]+[0-9.]+){7}[[:space:]]*$'   # perftest latency row (#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%)
OK_RPING_C='^ping data: rdma-ping-9:'                         # rping -c -v: the 10th ping's data
OK_RPING_S='^server ping data: rdma-ping-9:'                  # rping -s -v
OK_UCM='test complete'                                        # ucmatose, both sides
OK_UDADDY='^return status 0$'                                 # udaddy, both sides ("test complete" prints on failure too)
# rping in rdma-core 44 (bookworm) may exit 255 after a complete run: its CM thread calls
# rdma_get_cm_event on the channel main() is destroying (fixed upstream by rdma-core PR #1622,
# "rping: Fix spurious failure return codes", 2025). Seen here once in 5 rxe<->rxe runs.
RPING_RACE='rdma_get_cm_event: Bad file descriptor'
# What perftest prints when its peer closes the set-up connection in the middle of the exchange.
PT_CLOSED="Failed to exchange data between server and clients|Couldn't read remote address"

# ---- (a) rxe <-> rxe baselines: prove the harness, and the numbers ibpeer is compared with -------
def rxe_rc_pingpong rxe-rxe "ibv_rc_pingpong $PP -n 100 $GB" "ibv_rc_pingpong $PP -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="rxe<->rxe ibv_rc_pingpong, default size 4096 x 100"
def rxe_write_bw rxe-rxe "ib_write_bw $PT -n 200 $GB" "ib_write_bw $PT -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_write_bw, default size 65536 x 200"
def rxe_read_bw rxe-rxe "ib_read_bw $PT -n 200 $GB" "ib_read_bw $PT -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_read_bw, default size 65536 x 200"
def rxe_write_bw_loss rxe-rxe "ib_write_bw $PT -s 4096 -n 200 $GB" "ib_write_bw $PT -s 4096 -n 200" loss=2% \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_write_bw 4096 x 200, netem loss 2% in both guests"
def rxe_rping rxe-rxe "rping -c -a $GB -v -V -C 10" "rping -s -a $GB -v -V -C 10" listen=sleep tolerate="$RPING_RACE" \
	expect_client="$OK_RPING_C" expect_server="$OK_RPING_S" desc="rxe<->rxe rping -v -V -C 10 (RDMA CM on QP1)"

# Every other guest command line the peer_* scenarios use, first between two rxe devices: a peer_*
# failure then means ibpeer, not a tool flag the bookworm tools do not take.
def rxe_rc_pingpong_8k rxe-rxe "ibv_rc_pingpong $PP -s 8192 -n 100 $GB" "ibv_rc_pingpong $PP -s 8192 -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="rxe<->rxe ibv_rc_pingpong -s 8192 x 100"
def rxe_uc_pingpong rxe-rxe "ibv_uc_pingpong $PP -n 100 $GB" "ibv_uc_pingpong $PP -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="rxe<->rxe ibv_uc_pingpong, 4096 x 100"
def rxe_ud_pingpong rxe-rxe "ibv_ud_pingpong $PP -n 100 $GB" "ibv_ud_pingpong $PP -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="rxe<->rxe ibv_ud_pingpong, default size 1024 x 100"
def rxe_send_bw rxe-rxe "ib_send_bw $PT -n 200 $GB" "ib_send_bw $PT -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_send_bw, 65536 x 200"
def rxe_atomic_fadd rxe-rxe "ib_atomic_bw $PT -n 200 $GB" "ib_atomic_bw $PT -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_atomic_bw FETCH_AND_ADD x 200"
def rxe_atomic_cas rxe-rxe "ib_atomic_bw $PT -A CMP_AND_SWAP -n 200 $GB" "ib_atomic_bw $PT -A CMP_AND_SWAP -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_atomic_bw -A CMP_AND_SWAP x 200"
def rxe_ucmatose rxe-rxe "ucmatose -s $GB" "ucmatose" listen=sleep \
	expect_client="$OK_UCM" expect_server="$OK_UCM" desc="rxe<->rxe ucmatose (RDMA CM, 10 SENDs each way)"
def rxe_write_bw_cm rxe-rxe "ib_write_bw -d rxe0 -R -F -n 200 $GB" "ib_write_bw -d rxe0 -R -F -n 200" listen=sleep \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_write_bw -R (RDMA CM), 65536 x 200"
def rxe_read_bw_loss rxe-rxe "ib_read_bw $PT -s 4096 -n 200 $GB" "ib_read_bw $PT -s 4096 -n 200" loss=2% \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_read_bw 4096 x 200, netem loss 2% in both guests"
# A REQ to a port nobody listens on: guest b's ib_cm answers REJ reason 8 (Invalid Service ID) and
# rping exits 255 after "cma event RDMA_CM_EVENT_REJECTED, error 8" (interop/testdata).
def rxe_rping_reject rxe-rxe "rping -c -a $GB -p 7999 -v -C 1" "sleep 6" listen=sleep tolerate='RDMA_CM_EVENT_REJECTED' \
	expect_client='RDMA_CM_EVENT_REJECTED, error 8' min_roce=2 timeout=30 desc="rxe<->rxe rping to a port nobody listens on: guest b's ib_cm rejects the REQ"
def rxe_rping_loss rxe-rxe "rping -c -a $GB -v -V -C 30" "rping -s -a $GB -v -V -C 30" listen=sleep loss=5% tolerate="$RPING_RACE" \
	expect_client="$OK_RPING_C" expect_server="$OK_RPING_S" desc="rxe<->rxe rping -v -V -C 30, netem loss 5% in both guests"

# Captures issue 17's fixes are proven against (kept in testdata/, MANIFEST.md): a SEND stream under
# loss, the three latency tests (one message in flight at a time), and one perftest run three times
# over in a row. The harness records only UDP 4791, so in the reruns nothing on the wire announces
# the second and third connection: each run's QPs and PSNs just start (perftest exchanges them over
# TCP 18515). A perftest server accepts one client and exits, so the client waits 3 s before each
# run for the next server to listen (a TCP probe would be taken for the client by the server).
# rxe numbers QPs cyclically per device (0x11, 0x12, 0x13 in _nextqp); rxe_perftest_reruns deletes
# and re-adds rxe0 between runs on both sides, so every run is QPN 0x11 <-> 0x11 with fresh random
# PSNs: the same QPN pair three times over, with no set-up traffic in the capture (issue 17 item 5).
def rxe_send_bw_loss rxe-rxe "ib_send_bw $PT -s 4096 -n 200 $GB" "ib_send_bw $PT -s 4096 -n 200" loss=2% \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_send_bw 4096 x 200, netem loss 2% in both guests"
def rxe_write_lat rxe-rxe "ib_write_lat $PT -n 200 $GB" "ib_write_lat $PT -n 200" \
	expect_client="$OK_LAT" expect_server="$OK_LAT" desc="rxe<->rxe ib_write_lat, default size 2 x 200"
def rxe_read_lat rxe-rxe "ib_read_lat $PT -n 200 $GB" "ib_read_lat $PT -n 200" \
	expect_client="$OK_LAT" desc="rxe<->rxe ib_read_lat, default size 2 x 200 (the server prints no result)"
def rxe_send_lat rxe-rxe "ib_send_lat $PT -n 200 $GB" "ib_send_lat $PT -n 200" \
	expect_client="$OK_LAT" expect_server="$OK_LAT" desc="rxe<->rxe ib_send_lat, default size 2 x 200"
RXE_READD='{ rdma link delete rxe0 && rdma link add rxe0 type rxe netdev eth0 || exit 1; }; for i in $(seq 50); do grep -q ffff /sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null && break; sleep 0.1; done'
def rxe_perftest_reruns rxe-rxe \
	"for run in 1 2 3; do if [ \$run != 1 ]; then $RXE_READD; fi; sleep 3; ib_write_bw $PT -s 4096 -n 50 $GB || exit 1; done" \
	"for run in 1 2 3; do if [ \$run != 1 ]; then $RXE_READD; fi; ib_write_bw $PT -s 4096 -n 50 || exit 1; done" timeout=180 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_write_bw 4096 x 50, three runs in a row, rxe0 re-added between them: QPN 0x11 each time"
def rxe_perftest_reruns_nextqp rxe-rxe \
	"for run in 1 2 3; do sleep 3; ib_write_bw $PT -s 4096 -n 50 $GB || exit 1; done" \
	"for run in 1 2 3; do ib_write_bw $PT -s 4096 -n 50 || exit 1; done" timeout=180 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_write_bw 4096 x 50, three runs in a row on one rxe0: QPN 0x11, 0x12, 0x13"

# ---- host-side diagnostics: prove both host roles with plain tools -----------------------------
def diag_host_sniff rxe-rxe "ibv_rc_pingpong $PP -n 20 $GB" "ibv_rc_pingpong $PP -n 20" \
	host="ibdump -i br0 -c 20" expect_host='RoCEv2 192\.168\.77\.1[12]\.[0-9]+ > 192\.168\.77\.1[12]\.4791: RC Send' \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="rxe<->rxe pingpong while the host sniffs br0 live with ibdump -i -c 20"
def diag_host_ping guest-server "ping -c 3 -W 5 $GA" "timeout 60 tcpdump -n -l -i eth0 -c 3 'icmp[icmptype] == icmp-echo'" \
	listen=sleep min_roce=0 expect_client='3 received' expect_server='3 packets captured' \
	desc="host client (ping) -> guest server (tcpdump): host-client plumbing, no RDMA"
def diag_guest_ping guest-client "ping -c 3 -W 5 $HOST" "timeout 60 tcpdump -n -l -i br0 -c 3 'icmp[icmptype] == icmp-echo'" \
	min_roce=0 expect_client='3 received' expect_server='3 packets captured' \
	desc="guest client (ping) -> host server (tcpdump): guest-client plumbing, no RDMA"

# ---- (b) issue 8: each tool against ibpeer, in both roles ---------------------------------------
# ibv_*_pingpong: OOB TCP 18515, 52-byte "LLLL:QQQQQQ:PPPPPP:GID" messages (ENDPOINT.md §2.1)
def peer_rc_pingpong_gc guest-client "ibv_rc_pingpong $PP -n 100 $HOST" "ibpeer pingpong --rc --bind $HOST -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibv_rc_pingpong (guest, client) -> ibpeer pingpong --rc (server), 4096 x 100"
def peer_rc_pingpong_gs guest-server "ibpeer pingpong --rc --bind $HOST -n 100 $GA" "ibv_rc_pingpong $PP -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibpeer pingpong --rc (client) -> ibv_rc_pingpong (guest, server), 4096 x 100"
def peer_rc_pingpong_8k_gc guest-client "ibv_rc_pingpong $PP -s 8192 -n 100 $HOST" "ibpeer pingpong --rc --bind $HOST -s 8192 -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibv_rc_pingpong -s 8192 (guest, client) -> ibpeer (server)"
def peer_rc_pingpong_8k_gs guest-server "ibpeer pingpong --rc --bind $HOST -s 8192 -n 100 $GA" "ibv_rc_pingpong $PP -s 8192 -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibpeer pingpong --rc -s 8192 (client) -> ibv_rc_pingpong (guest, server)"
def peer_uc_pingpong_gc guest-client "ibv_uc_pingpong $PP -n 100 $HOST" "ibpeer pingpong --uc --bind $HOST -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibv_uc_pingpong (guest, client) -> ibpeer pingpong --uc (server)"
def peer_uc_pingpong_gs guest-server "ibpeer pingpong --uc --bind $HOST -n 100 $GA" "ibv_uc_pingpong $PP -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibpeer pingpong --uc (client) -> ibv_uc_pingpong (guest, server)"
def peer_ud_pingpong_gc guest-client "ibv_ud_pingpong $PP -n 100 $HOST" "ibpeer pingpong --ud --bind $HOST -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibv_ud_pingpong (guest, client) -> ibpeer pingpong --ud (server), 1024 x 100"
def peer_ud_pingpong_gs guest-server "ibpeer pingpong --ud --bind $HOST -n 100 $GA" "ibv_ud_pingpong $PP -n 100" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibpeer pingpong --ud (client) -> ibv_ud_pingpong (guest, server)"

# perftest TCP mode: version "6.06", 108-byte pingpong_dest records (ENDPOINT.md §2.2)
def peer_write_bw_gc guest-client "ib_write_bw $PT -n 200 $HOST" "ibpeer perftest write --bind $HOST -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_write_bw (guest, client) -> ibpeer perftest write (server), 65536 x 200"
def peer_write_bw_gs guest-server "ibpeer perftest write --bind $HOST -n 200 $GA" "ib_write_bw $PT -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest write (client) -> ib_write_bw (guest, server)"
def peer_read_bw_gc guest-client "ib_read_bw $PT -n 200 $HOST" "ibpeer perftest read --bind $HOST -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_read_bw (guest, client) -> ibpeer perftest read (server)"
def peer_read_bw_gs guest-server "ibpeer perftest read --bind $HOST -n 200 $GA" "ib_read_bw $PT -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest read (client) -> ib_read_bw (guest, server)"
def peer_send_bw_gc guest-client "ib_send_bw $PT -n 200 $HOST" "ibpeer perftest send --bind $HOST -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_send_bw (guest, client) -> ibpeer perftest send (server)"
def peer_send_bw_gs guest-server "ibpeer perftest send --bind $HOST -n 200 $GA" "ib_send_bw $PT -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest send (client) -> ib_send_bw (guest, server)"
def peer_atomic_fadd_gc guest-client "ib_atomic_bw $PT -n 200 $HOST" "ibpeer perftest atomic --bind $HOST -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_atomic_bw FETCH_AND_ADD (guest, client) -> ibpeer perftest atomic (server)"
def peer_atomic_fadd_gs guest-server "ibpeer perftest atomic --bind $HOST -n 200 $GA" "ib_atomic_bw $PT -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest atomic (client) -> ib_atomic_bw FETCH_AND_ADD (guest, server)"
def peer_atomic_cas_gc guest-client "ib_atomic_bw $PT -A CMP_AND_SWAP -n 200 $HOST" "ibpeer perftest atomic -A CMP_AND_SWAP --bind $HOST -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_atomic_bw -A CMP_AND_SWAP (guest, client) -> ibpeer (server)"
def peer_atomic_cas_gs guest-server "ibpeer perftest atomic -A CMP_AND_SWAP --bind $HOST -n 200 $GA" "ib_atomic_bw $PT -A CMP_AND_SWAP -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest atomic -A CMP_AND_SWAP (client) -> ib_atomic_bw (guest, server)"

def peer_srq_pingpong_gc guest-client "ibv_srq_pingpong $PP -n 500 $HOST" "ibpeer pingpong --srq --bind $HOST -n 500" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibv_srq_pingpong (guest, client, 16 QPs on one SRQ) -> ibpeer pingpong --srq (server)"
def peer_srq_pingpong_gs guest-server "ibpeer pingpong --srq --bind $HOST -q 4 -n 500 $GA" "ibv_srq_pingpong $PP -n 500" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibpeer pingpong --srq -q 4 (client) -> ibv_srq_pingpong (guest, server, 16 QPs)"

# RDMA CM over QP1 (ENDPOINT.md §2.3): rping, ucmatose, perftest -R
def peer_rping_gc guest-client "rping -c -a $HOST -v -V -C 10" "ibpeer rping -s --bind $HOST -v -V -C 10" tolerate="$RPING_RACE" \
	expect_client="$OK_RPING_C" expect_server="$OK_RPING_S" desc="rping -c (guest) -> ibpeer rping -s (server), 10 pings, data validated"
def peer_rping_gs guest-server "ibpeer rping -c --bind $HOST -a $GA -v -V -C 10" "rping -s -a $GA -v -V -C 10" listen=sleep tolerate="$RPING_RACE" \
	expect_client="$OK_RPING_C" expect_server="$OK_RPING_S" desc="ibpeer rping -c (client) -> rping -s (guest, server)"
def peer_ucmatose_gc guest-client "ucmatose -s $HOST" "ibpeer serve --bind $HOST --cm 7471" \
	expect_client="$OK_UCM" desc="ucmatose client (guest) -> ibpeer serve --cm 7471 (ucmatose's port)"
def peer_ucmatose_gs guest-server "ibpeer ucmatose --bind $HOST -s $GA" "ucmatose" listen=sleep \
	expect_client="$OK_UCM" expect_server="$OK_UCM" desc="ibpeer ucmatose (client) -> ucmatose server (guest)"
def peer_udaddy_gc guest-client "udaddy -s $HOST -C 10 -S 256" "ibpeer udaddy --bind $HOST -C 10 -S 256" \
	expect_client="$OK_UDADDY" expect_server="$OK_UDADDY" desc="udaddy client (guest) -> ibpeer udaddy (server): SIDR, 10 UD SENDs with immediate each way"
# serve --cm is a daemon that ends on SIGINT (exit 0 when no ucmatose test is running): stop it after 50 s.
def peer_udaddy_serve_gc guest-client "udaddy -s $HOST -c 2 -C 10 -S 1024" "timeout --preserve-status -s INT 50 ibpeer serve --bind $HOST --cm 7174" \
	expect_client="$OK_UDADDY" desc="udaddy client (guest, 2 connections) -> ibpeer serve --cm 7174 (the udaddy echo beside ucmatose's server), stopped after 50 s"
def peer_udaddy_gs guest-server "ibpeer udaddy --bind $HOST -s $GA -C 10 -S 256" "udaddy -C 10 -S 256" listen=sleep \
	expect_client="$OK_UDADDY" expect_server="$OK_UDADDY" desc="ibpeer udaddy (client) -> udaddy server (guest)"
def peer_write_bw_cm_gc guest-client "ib_write_bw -d rxe0 -R -F -n 200 $HOST" "ibpeer perftest write -R --bind $HOST -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_write_bw -R (guest, client) -> ibpeer perftest write -R (server)"
def peer_write_bw_cm_gs guest-server "ibpeer perftest write -R --bind $HOST -n 200 $GA" "ib_write_bw -d rxe0 -R -F -n 200" listen=sleep \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest write -R (client) -> ib_write_bw -R (guest, server)"

# ---- (c) 2% loss injected inside the guest (netem on eth0 egress) -------------------------------
def peer_write_bw_loss_gc guest-client "ib_write_bw $PT -s 4096 -n 200 $HOST" "ibpeer perftest write --bind $HOST -s 4096 -n 200" loss=2% check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_write_bw (guest, client, 2% loss) -> ibpeer (server)"
def peer_write_bw_loss_gs guest-server "ibpeer perftest write --bind $HOST -s 4096 -n 200 $GA" "ib_write_bw $PT -s 4096 -n 200" loss=2% check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest write (client) -> ib_write_bw (guest, server, 2% loss)"
def peer_read_bw_loss_gc guest-client "ib_read_bw $PT -s 4096 -n 200 $HOST" "ibpeer perftest read --bind $HOST -s 4096 -n 200" loss=2% check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_read_bw (guest, client, 2% loss) -> ibpeer (server)"
def peer_read_bw_loss_gs guest-server "ibpeer perftest read --bind $HOST -s 4096 -n 200 $GA" "ib_read_bw $PT -s 4096 -n 200" loss=2% check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest read (client) -> ib_read_bw (guest, server, 2% loss)"
def peer_rping_loss_gc guest-client "rping -c -a $HOST -v -V -C 30" "ibpeer rping -s --bind $HOST -v -V -C 30" loss=5% tolerate="$RPING_RACE" \
	expect_client="$OK_RPING_C" expect_server="$OK_RPING_S" desc="rping -c -C 30 (guest, 5% loss) -> ibpeer rping -s, data validated"
def peer_rping_loss_gs guest-server "ibpeer rping -c --bind $HOST -a $GA -v -V -C 30" "rping -s -a $GA -v -V -C 30" loss=5% listen=sleep tolerate="$RPING_RACE" \
	expect_client="$OK_RPING_C" expect_server="$OK_RPING_S" desc="ibpeer rping -c -C 30 -> rping -s (guest, 5% loss), data validated"

# ---- issue 24: small messages, and what ibpeer refuses ------------------------------------------
# perftest places messages under 4 KiB at 64-byte strides (100 bytes: every 128), so the bytes
# between are never written: the data check compares only the bytes the capture shows.
def peer_write_bw_100_gc guest-client "ib_write_bw $PT -s 100 -n 200 $HOST" "ibpeer perftest write --bind $HOST -s 100 -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_write_bw -s 100 (guest, client) -> ibpeer (server): strided WRITEs, byte-exact"
def peer_write_bw_100_gs guest-server "ibpeer perftest write --bind $HOST -s 100 -n 200 $GA" "ib_write_bw $PT -s 100 -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest write -s 100 (client) -> ib_write_bw (guest, server)"
def peer_read_bw_100_gc guest-client "ib_read_bw $PT -s 100 -n 200 $HOST" "ibpeer perftest read --bind $HOST -s 100 -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_read_bw -s 100 (guest, client) -> ibpeer (server): strided READs, byte-exact"
def peer_read_bw_100_gs guest-server "ibpeer perftest read --bind $HOST -s 100 -n 200 $GA" "ib_read_bw $PT -s 100 -n 200" check_data=1 \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest read -s 100 (client) -> ib_read_bw (guest, server)"

# perftest's latency tests (issue 24): one message in flight; the READ and atomic servers print
# no result, the WRITE and SEND ones do (ibpeer waits for the peer's WRITE with QP.RemoteWrites
# where perftest polls the last byte of its buffer).
def peer_write_lat_gc guest-client "ib_write_lat $PT -n 200 $HOST" "ibpeer perftest write_lat --bind $HOST -n 200" \
	expect_client="$OK_LAT" expect_server="$OK_LAT" desc="ib_write_lat (guest, client) -> ibpeer perftest write_lat (server), 2 x 200"
def peer_write_lat_gs guest-server "ibpeer perftest write_lat --bind $HOST -n 200 $GA" "ib_write_lat $PT -n 200" \
	expect_client="$OK_LAT" expect_server="$OK_LAT" desc="ibpeer perftest write_lat (client) -> ib_write_lat (guest, server), 2 x 200"
def peer_read_lat_gc guest-client "ib_read_lat $PT -n 200 $HOST" "ibpeer perftest read_lat --bind $HOST -n 200" \
	expect_client="$OK_LAT" desc="ib_read_lat (guest, client) -> ibpeer perftest read_lat (server), 2 x 200"
def peer_read_lat_gs guest-server "ibpeer perftest read_lat --bind $HOST -n 200 $GA" "ib_read_lat $PT -n 200" \
	expect_client="$OK_LAT" desc="ibpeer perftest read_lat (client) -> ib_read_lat (guest, server), 2 x 200"
def peer_send_lat_gc guest-client "ib_send_lat $PT -n 200 $HOST" "ibpeer perftest send_lat --bind $HOST -n 200" \
	expect_client="$OK_LAT" expect_server="$OK_LAT" desc="ib_send_lat (guest, client) -> ibpeer perftest send_lat (server), 2 x 200"
def peer_send_lat_gs guest-server "ibpeer perftest send_lat --bind $HOST -n 200 $GA" "ib_send_lat $PT -n 200" \
	expect_client="$OK_LAT" expect_server="$OK_LAT" desc="ibpeer perftest send_lat (client) -> ib_send_lat (guest, server), 2 x 200"
def peer_atomic_lat_gc guest-client "ib_atomic_lat $PT -n 200 $HOST" "ibpeer perftest atomic_lat --bind $HOST -n 200" \
	expect_client="$OK_LAT" desc="ib_atomic_lat FETCH_AND_ADD (guest, client) -> ibpeer perftest atomic_lat (server)"
def peer_atomic_lat_gs guest-server "ibpeer perftest atomic_lat --bind $HOST -n 200 $GA" "ib_atomic_lat $PT -n 200" \
	expect_client="$OK_LAT" desc="ibpeer perftest atomic_lat (client) -> ib_atomic_lat FETCH_AND_ADD (guest, server)"

# Refused cleanly: ibpeer perftest runs one QP, one direction. A guest client asking for more is
# refused in the set-up exchange before any traffic (several QPs: one QP message per QP; -b: the
# end-of-traffic message before any traffic), and fails there without a result; ibpeer as the
# client refuses a guest server with several QPs the same way, and its own -b at once.
def peer_write_bw_q4_gc guest-client "ib_write_bw $PT -q 4 -n 200 $HOST" "ibpeer perftest write --bind $HOST -n 200" \
	refused='refused: the peer runs 4 QPs \(perftest -q 4\)' forbid="$OK_BW" expect_client="$PT_CLOSED" \
	desc="ib_write_bw -q 4 (guest, client) -> ibpeer perftest write (server): refused in the exchange"
def peer_write_bw_q4_gs guest-server "ibpeer perftest write --bind $HOST -n 200 $GA" "ib_write_bw $PT -q 4 -n 200" \
	refused='refused: the peer runs 4 QPs \(perftest -q 4\)' forbid="$OK_BW" expect_server="$PT_CLOSED" \
	desc="ibpeer perftest write (client) -> ib_write_bw -q 4 (guest, server): refused in the exchange"
def peer_write_bw_q4both_gc guest-client "ib_write_bw $PT -q 4 -n 200 $HOST" "ibpeer perftest write -q 4 --bind $HOST -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_write_bw -q 4 (guest, client) -> ibpeer perftest write -q 4 (server): four QPs round-robin"
def peer_write_bw_q4both_gs guest-server "ibpeer perftest write -q 4 --bind $HOST -n 200 $GA" "ib_write_bw $PT -q 4 -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest write -q 4 (client) -> ib_write_bw -q 4 (guest, server)"
def peer_write_bw_bidir_gc guest-client "ib_write_bw $PT -b -n 200 $HOST" "ibpeer perftest write --bind $HOST -n 200" \
	refused='refused: .*bidirectional test \(perftest -b\)' forbid="$OK_BW" expect_client="$PT_CLOSED" \
	desc="ib_write_bw -b (guest, client) -> ibpeer perftest write (server): refused before any traffic"
def peer_write_bw_bidirboth_gs guest-server "ibpeer perftest write -b --bind $HOST -n 200 $GA" "ib_write_bw $PT -b -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest write -b (client) -> ib_write_bw -b (guest, server): both sides write, both print the sum"
def peer_write_bw_bidirboth_gc guest-client "ib_write_bw $PT -b -n 200 $HOST" "ibpeer perftest write -b --bind $HOST -n 200" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_write_bw -b (guest, client) -> ibpeer perftest write -b (server)"

# ---- issue 22: one run captured at two points, netem between them -------------------------------
# Guest a is a capture point itself (points=guest: its eth0's frames mirrored to dummy0 before the
# root qdisc, where netem drops 2%, guest_loss=), the bridge the other; nothing else loses packets.
# The verdict (check_points) requires ibdump --correlate to put every RoCE packet the guest sent and
# the bridge lacks on guest → bridge, the same packets tshark finds missing, and netem's own dropped
# counter to equal the frames the bridge lacks.
def rxe_write_bw_points rxe-rxe "ib_write_bw $PT -s 16 -n 1500 $GB" "ib_write_bw $PT -s 16 -n 1500" guest_loss=2% points=guest \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="rxe<->rxe ib_write_bw 16 x 1500, netem loss 2% in guest a only, captured in guest a before netem and on the bridge"
