#!/usr/bin/env bash
# Regenerates tshark's -T fields decoding of every capture the differential
# test compares (run from the repository root; needs tshark 4.0.x).
# Usage: cmd/ibdump/testdata/tshark/regen.sh FIELDS_FILE OUTDIR CAPTURE...
set -euo pipefail
fields_file=$1 out=$2
shift 2
command -v tshark >/dev/null || { echo "regen.sh: tshark not found (apt-get install -y tshark)" >&2; exit 1; }
version=$(tshark --version 2>/dev/null | sed -n 1p)
mapfile -t fields < "$fields_file"
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
userdlt=(-o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""')
for cap in "$@"; do
	name=$(basename "$cap" .pcap)
	extra=()
	# tshark's rpcordma heuristic throws on some perftest SENDs (their
	# ICRC then goes missing: send_lat_cm, write_bw_cm ...): it stays off
	# but for the NFS-over-RDMA captures, which ibdump decodes.
	rpcordma=(--disable-protocol rpcordma)
	# tshark's smb_direct heuristic tries every SEND; it stays off but when
	# its fields are asked for: on the crafted SMB Direct captures it hands
	# their SMB2 bodies (a byte pattern) to the SMB2 dissector, which throws
	# and takes the ICRC with it.
	smbdirect=(--disable-protocol smb_direct)
	grep -q '^smb_direct\.' "$fields_file" && smbdirect=()
	case "$name" in
	nfs_rdma_*) rpcordma=() ;;
	*linktype147-userdlt) extra=("${userdlt[@]}") ;;
	*linktype247) continue ;; # its 147 twin is compared
	esac
	# tshark 4.0 cannot read LINKTYPE_INFINIBAND (247): give it a copy whose
	# header says user DLT 147 and map that to the InfiniBand dissector.
	if [ "$(od -An -tu4 -j20 -N4 "$cap" | tr -d ' ')" = 247 ]; then
		cp "$cap" "$tmp/$name.pcap"
		printf '\x93\x00\x00\x00' | dd of="$tmp/$name.pcap" bs=1 seek=20 conv=notrunc status=none
		cap="$tmp/$name.pcap"
		extra=("${userdlt[@]}")
	fi
	{
		echo "# $version; tshark -r $cap -T fields -E header=y -E separator=/t -E occurrence=a (the ULPs ibdump does not decode disabled; NVMe-oF, EoIB and EtherType-over-IB stay on, as ibdump decodes them${rpcordma[*]:+; rpcordma disabled}${rpcordma[*]:-; RPC over RDMA on}${smbdirect[*]:-; SMB Direct on})"
		tshark -r "$cap" "${extra[@]}" "${rpcordma[@]}" "${smbdirect[@]}" \
			--disable-protocol iser --disable-protocol infiniband_sdp \
			--disable-protocol lnet --disable-protocol fcoib --disable-protocol smc --disable-protocol drbd \
			-T fields -E header=y -E separator=/t -E occurrence=a "${args[@]}" 2>/dev/null
	} > "$out/$name.tsv"
done
