// Package parquetout writes what ibdump decodes and analyses as Parquet
// files, the columnar format the engines built for many captures read
// (DuckDB on one machine, Spark, Trino or ClickHouse on many). ibdump
// -T parquet -w DIR is its command line.
//
// It writes three tables, each a folder under DIR. packets holds one row
// per frame: typed columns taken from decode's field registry (the names
// -Y and -e know, the types -G fields prints), the capture file, frame
// number and byte offset of the record, so that a query's result leads
// back to the packets, and the conversation analysis' per-packet verdicts.
// connections holds one row per connection with every key of -z conv,qp
// -T json, read from the same table (internal/output.ConvTable) the JSON is
// rendered from, plus the files and frames each connection spans. findings
// holds one row per expert finding.
//
// Labels (--label host=a17) go into every row of every table and name the
// folders the files sit in, Hive-style (packets/host=a17/...), so the
// outputs of a fleet can be copied side by side into one tree. Sharding by
// connection (--shard conv,N) spreads the packets over N files by
// connection id, so a query for one connection reads one file.
//
// Memory is bounded by the row-group size, not the capture's: rows are
// handed to the Parquet writer column by column in small batches, and a
// row group is closed every RowGroupRows rows. Each column chunk carries
// min/max statistics, so filters on time, connection or opcode skip row
// groups; strings and addresses are dictionary-encoded; pages are zstd.
//
// Only this package imports the Parquet library (github.com/parquet-go/
// parquet-go; BENCHMARKS.md says why that one).
package parquetout
