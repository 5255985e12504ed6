# Sample scenarios whose captures are kept in pcaps/rxe/interop/ (interop/keep-samples.sh runs them
# and copies the captures). Small on purpose: a few iterations each, so the corpus stays small.
# The table of scenarios.sh is read first for its variables and its scenarios; the samples are
# passing ibpeer scenarios of that table at fewer iterations. Same syntax as scenarios.sh.
# shellcheck source=scenarios.sh
. "$(dirname "${BASH_SOURCE[0]}")/scenarios.sh"

def sample_rc_pingpong_gc guest-client "ibv_rc_pingpong $PP -s 1024 -n 10 $HOST" "ibpeer pingpong --rc --bind $HOST -s 1024 -n 10" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibv_rc_pingpong -s 1024 -n 10 (guest, client) -> ibpeer pingpong --rc (server)"
def sample_ud_pingpong_gs guest-server "ibpeer pingpong --ud --bind $HOST -s 512 -n 10 $GA" "ibv_ud_pingpong $PP -s 512 -n 10" \
	expect_client="$OK_PP" expect_server="$OK_PP" desc="ibpeer pingpong --ud -s 512 -n 10 (client) -> ibv_ud_pingpong (guest, server)"
def sample_write_bw_gc guest-client "ib_write_bw $PT -s 4096 -n 20 $HOST" "ibpeer perftest write --bind $HOST -s 4096 -n 20" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_write_bw -s 4096 -n 20 (guest, client) -> ibpeer perftest write (server)"
def sample_read_bw_gs guest-server "ibpeer perftest read --bind $HOST -s 4096 -n 20 $GA" "ib_read_bw $PT -s 4096 -n 20" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ibpeer perftest read -s 4096 -n 20 (client) -> ib_read_bw (guest, server)"
def sample_atomic_cas_gc guest-client "ib_atomic_bw $PT -A CMP_AND_SWAP -n 20 $HOST" "ibpeer perftest atomic -A CMP_AND_SWAP --bind $HOST -n 20" \
	expect_client="$OK_BW" expect_server="$OK_BW" desc="ib_atomic_bw -A CMP_AND_SWAP -n 20 (guest, client) -> ibpeer perftest atomic (server)"
