#!/bin/bash
# Fast interop check for CI (.ci/run): the ibv_rc_pingpong scenario in both roles against ibpeer,
# after the rxe<->rxe baseline that proves the image and the harness. The guest image is built on
# the fly when the cache (IBWIRE_INTEROP_CACHE, default /var/tmp/ibwire-interop-cache) lacks it.
# Needs root and network access to a Debian mirror on a cold cache. Exit status as run.sh.
set -euo pipefail
cd "$(dirname "$0")"
export GUEST_TIMEOUT=${GUEST_TIMEOUT:-60}
exec ./run.sh rxe_rc_pingpong peer_rc_pingpong_gc peer_rc_pingpong_gs
