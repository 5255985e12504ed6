#!/usr/bin/env bash
# Regenerates tshark's -T fields decoding of every capture the differential
# test compares (run from the repository root; needs tshark 4.0.x).
# Usage: cmd/ibdump/testdata/tshark/regen.sh FIELDS_FILE OUTDIR CAPTURE...
set -euo pipefail
fields_file=$1 out=$2
shift 2
version=$(tshark --version 2>/dev/null | head -1)
mapfile -t fields < "$fields_file"
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
for cap in "$@"; do
	name=$(basename "$cap" .pcap)
	extra=()
	case "$name" in
	*linktype147-userdlt) extra=(-o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""') ;;
	*linktype247) continue ;; # tshark 4.0 cannot read LINKTYPE_INFINIBAND; its 147 twin is compared
	esac
	{
		echo "# $version; tshark -r $cap -T fields -E header=y -E separator=/t -E occurrence=a (payload heuristics disabled)"
		tshark -r "$cap" "${extra[@]}" --disable-protocol rpcordma --disable-protocol nvme-rdma \
			--disable-protocol iser --disable-protocol smb_direct --disable-protocol infiniband_sdp \
			--disable-protocol lnet --disable-protocol fcoib --disable-protocol smc --disable-protocol drbd \
			--disable-protocol eoib \
			-T fields -E header=y -E separator=/t -E occurrence=a "${args[@]}" 2>/dev/null
	} > "$out/$name.tsv"
done
