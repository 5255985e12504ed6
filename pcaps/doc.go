// Package pcaps holds ibwire's capture corpus.
//
// pcaps/rxe holds real captures of Linux rdma_rxe made by the project's
// interop harness (see rxe/MANIFEST.md). Everything else here is generated:
// `go generate ./pcaps` runs ./gen, which builds each capture with package
// craft — deterministic timestamps, fixed seeds — and writes it together
// with MANIFEST.md, which lists for every file what it holds, what each
// frame is, how it decodes, what icrc_check.py reports and the findings an
// analyzer must make. Running the generator twice gives the same bytes.
package pcaps

//go:generate go run ./gen -o .
