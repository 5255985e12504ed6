#!/bin/bash
# Runs the sample scenarios of samples.sh and keeps their captures in pcaps/rxe/interop/, with a
# MANIFEST.md line each (commands, packets, ibdump --check verdict). Needs what run.sh needs (root,
# QEMU, the image). Usage: interop/keep-samples.sh [NAME|GLOB ...]   (default: every sample_*)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
DEST=$REPO/pcaps/rxe/interop
export INTEROP_SCENARIOS=$HERE/samples.sh
OUT=${IBWIRE_INTEROP_OUT:-/var/tmp/ibwire-interop-out}
[ $# -gt 0 ] || set -- 'sample_*'
set -f
"$HERE/run.sh" "$@"
set +f
run=$(readlink -f "$OUT/latest")
mkdir -p "$DEST"
manifest=$DEST/MANIFEST.md
[ -f "$manifest" ] || cat >"$manifest" <<'HEAD'
# Interop samples: ibpeer against Linux rdma_rxe

Captures of passing interop scenarios (interop/samples.sh), recorded by `ibdump -i br0 -w` on the
guests' bridge: guest a 192.168.77.11 (rxe0, kernel 6.1, rdma-core 44, perftest) and ibpeer on the
host side 192.168.77.1. RoCE packets only (the tools' TCP exchange is not in them). Regenerate with
`interop/keep-samples.sh` (root, QEMU); each run replaces a file and appends its line here.

| file | scenario | guest command | ibpeer command | ibdump --check | recorded |
|---|---|---|---|---|---|
HEAD
for dir in "$run"/sample_*/; do
	name=$(basename "$dir")
	[[ $name == *.try1 ]] && continue # the first run of a retried scenario
	if ! grep -qE "^$name +[^ ]+ +PASS " "$run/summary.txt"; then
		echo "keep-samples: $name did not pass; not kept" >&2
		continue
	fi
	file=${name#sample_}.pcap
	cp "$dir/capture.pcap" "$DEST/$file"
	guest=$(sed -n 's/^client=//p' "$dir/meta.txt") peer=$(sed -n 's/^server=//p' "$dir/meta.txt")
	if grep -q '^role=guest-server' "$dir/meta.txt"; then
		guest=$(sed -n 's/^server=//p' "$dir/meta.txt") peer=$(sed -n 's/^client=//p' "$dir/meta.txt")
	fi
	check=$(grep -m1 'check ok\|check FAILED' "$dir/check.log" || true)
	grep -v "^| $file |" "$manifest" >"$manifest.tmp" || true
	echo "| $file | $name | \`$guest\` | \`$peer\` | $check | $(date -u +%F) |" >>"$manifest.tmp"
	mv "$manifest.tmp" "$manifest"
	echo "kept $DEST/$file ($(stat -c %s "$DEST/$file") bytes)"
done
