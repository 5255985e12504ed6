// Package interop holds the harness that runs Linux rdma_rxe in QEMU guests
// against each other and against ibpeer (run.sh, scenarios.sh, build.sh,
// ci.sh; see README.md), and the small rxe captures it recorded
// (testdata/, with truth.py's count from tshark). The harness needs root
// and QEMU; the package's tests need neither: they check the scenario table,
// the runner's refusals and the recorded captures, so a broken table fails
// go test instead of a long make interop.
package interop
