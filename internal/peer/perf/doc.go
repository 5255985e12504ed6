// Package perf is what ibpeer's traffic-generating programs (the write,
// read, send and atomic clients, and perftest in either role) share: the
// loop that drives work requests and times them, and perftest's report.
//
// RunTraffic posts work requests on a set of QPs, at most a TX depth
// outstanding on each, polls their completions from one CQ and keeps, in
// Times, a timestamp per post and per completion in the order perftest
// keeps them (its tposted and tcompleted). Times turns those into
// perftest's figures: the run's duration, the best time per message
// (perftest's peak), a bandwidth table row, per-request latencies.
// FillPattern and FirstDiff give every verified message bytes of its own
// and find where a read-back differs.
//
// The report half writes those figures as perftest 6.06 prints them, byte
// for byte (its format strings, checked against C's printf in the tests):
// the test-information block, the local and remote address lines, and the
// bandwidth and latency tables, so that scripts which parse ib_write_bw
// or ib_write_lat output parse ibpeer's.
package perf
