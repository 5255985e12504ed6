// Package duckdb checks ibdump's Parquet export with a real query engine:
// DuckDB, through its Go bindings and their prebuilt library. It is its
// own module, the only place cgo is used, so the three commands stay free
// of it; its test builds ibdump from the parent module, exports every
// capture of pcaps/rxe, and compares what SQL computes from the tables
// with what ibdump -z conv,qp -T json says.
package duckdb
