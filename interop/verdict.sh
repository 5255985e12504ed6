# Verdict checks of run.sh that a test can call alone (sourced, not executed). They read $BIN (the
# directory of ibpeer) and add to the caller's why (failures) and notes arrays.

# check_data PCAP REGION DIR: the bytes the capture shows in the responder's region (the data of each
# RDMA WRITE, what each READ response carried; ibpeer replay --image, first copy of each byte) must
# equal ibpeer's buffer as it dumped it when its test ended: as responder what it received or served,
# as requester what it sent or read. With loss, a segment the transport placed twice, at the wrong
# offset or not at all shows here; both buffers are random, so equal means the data crossed. Adds to
# the caller's why/notes.
check_data() {
	local pcap=$1 region=$2 dir=$3 image=$3/capture-region.bin out n at
	if [ ! -s "$region" ]; then
		why+=("data: ibpeer left no buffer dump ($region)")
		return
	fi
	if ! out=$("$BIN/ibpeer" replay --image "$image" "$pcap" 2>&1); then
		why+=("data: ibpeer replay --image failed: ${out//$'\n'/ }")
		return
	fi
	echo "$out" >"$dir/image.log"
	n=$(stat -c %s "$image")
	if [ "$n" -eq 0 ]; then
		why+=("data: the capture shows no RDMA WRITE or READ data")
	elif at=$(cmp -n "$n" "$image" "$region" 2>&1); then
		notes+=("data: the $n bytes the capture moved equal ibpeer's buffer")
	else
		why+=("data: the capture's bytes and ibpeer's buffer differ from byte $(sed -n 's/.*differ: byte \([0-9]*\).*/\1/p' <<<"$at") of $n on")
	fi
}
