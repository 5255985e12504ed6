package perf

// perftest's report text, reproduced exactly so that scripts which parse
// ib_write_bw/ib_write_lat output can parse ibpeer's. The format strings
// are perftest 6.06's (Debian bookworm perftest 4.5-0.17; read from the
// binary's string table): the test-information block that
// ctx_print_test_info prints, the "local/remote address" lines of
// ctx_print_pingpong_data, and the bandwidth and latency tables of
// print_report_bw and print_report_lat.

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ResultLine is perftest's RESULT_LINE (87 dashes).
const ResultLine = "---------------------------------------------------------------------------------------\n"

// TestInfo is the test-information block. Which optional lines appear
// is the caller's decision, made as perftest makes it: TX depth on the side
// that sends (client, duplex, latency tests), RX depth on a SEND receiver,
// CQ moderation in bandwidth tests, GID index when one was given, and
// "Outstand reads" instead of "Max inline data" for READ and atomics.
type TestInfo struct {
	Verb          string // perftest's testsStr: "Send", "RDMA_Write", "RDMA_Read", "Atomic"
	Latency       bool   // a latency test, else bandwidth
	Bidirectional bool
	Device        string
	DualPort      bool
	QPs           int
	Transport     string // "IB"
	Connection    string // "RC", "UC", "UD", "XRC", "DC"
	SRQ           bool
	PCIeRelaxed   bool // PCIe relaxed ordering
	WRAPI         bool // the ibv_wr_* posting API
	TXDepth       int  // 0: line omitted
	RXDepth       int  // 0: line omitted
	CQModeration  int  // 0: line omitted
	MTU           int  // bytes
	LinkType      string
	GIDIndex      int // < 0: line omitted
	OutReads      int // > 0: "Outstand reads" replaces "Max inline data"
	MaxInline     int
	RDMACM        bool // QPs connected with rdma_cm
	DataExRDMACM  bool // the set-up exchange runs over rdma_cm, not TCP
}

func OnOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

// WriteTestInfo writes the block from its opening dashes to its closing
// ones.
func WriteTestInfo(w io.Writer, in TestInfo) error {
	var b strings.Builder
	b.WriteString(ResultLine)
	b.WriteString("                    ")
	b.WriteString(in.Verb + " ")
	if in.Bidirectional {
		b.WriteString("Bidirectional ")
	}
	if in.Latency {
		b.WriteString("Latency ")
	} else {
		b.WriteString("BW ")
	}
	b.WriteString("Test\n")
	fmt.Fprintf(&b, " Dual-port       : %s\t\tDevice         : %s\n", OnOff(in.DualPort), in.Device)
	fmt.Fprintf(&b, " Number of qps   : %d\t\tTransport type : %s\n", in.QPs, in.Transport)
	fmt.Fprintf(&b, " Connection type : %s\t\tUsing SRQ      : %s\n", in.Connection, OnOff(in.SRQ))
	fmt.Fprintf(&b, " PCIe relax order: %s\n", OnOff(in.PCIeRelaxed))
	fmt.Fprintf(&b, " ibv_wr* API     : %s\n", OnOff(in.WRAPI))
	if in.TXDepth > 0 {
		fmt.Fprintf(&b, " TX depth        : %d\n", in.TXDepth)
	}
	if in.RXDepth > 0 {
		fmt.Fprintf(&b, " RX depth        : %d\n", in.RXDepth)
	}
	if in.CQModeration > 0 {
		fmt.Fprintf(&b, " CQ Moderation   : %d\n", in.CQModeration)
	}
	fmt.Fprintf(&b, " Mtu             : %d[B]\n", in.MTU)
	fmt.Fprintf(&b, " Link type       : %s\n", in.LinkType)
	if in.GIDIndex >= 0 {
		fmt.Fprintf(&b, " GID index       : %d\n", in.GIDIndex)
	}
	if in.OutReads > 0 {
		fmt.Fprintf(&b, " Outstand reads  : %d\n", in.OutReads)
	} else {
		fmt.Fprintf(&b, " Max inline data : %d[B]\n", in.MaxInline)
	}
	fmt.Fprintf(&b, " rdma_cm QPs\t : %s\n", OnOff(in.RDMACM))
	exchange := "Ethernet"
	if in.DataExRDMACM {
		exchange = "rdma_cm"
	}
	fmt.Fprintf(&b, " Data ex. method : %s\n", exchange)
	b.WriteString(ResultLine)
	_, err := io.WriteString(w, b.String())
	return err
}

// Dest is one side's connection data as ctx_print_pingpong_data prints
// it.
type Dest struct {
	LID      uint16
	QPN, PSN uint32
	OutReads int // > 0: printed (READ and atomic tests)
	RKey     uint32
	VAddr    uint64
	RDMA     bool // RKey and VAddr printed (WRITE, READ, atomic tests)
	GID      [16]byte
}

// cHexAlt formats v as C's printf("%#0<width>x"): zero-padded to width
// with a 0x prefix inside it, except that 0 gets no prefix.
func cHexAlt(v uint64, width int) string {
	if v == 0 {
		return strings.Repeat("0", width)
	}
	h := strconv.FormatUint(v, 16)
	if pad := width - 2 - len(h); pad > 0 {
		h = strings.Repeat("0", pad) + h
	}
	return "0x" + h
}

// WriteDest writes " local address: …" (side "local") or " remote
// address: …" and the GID line, whose bytes perftest prints in decimal.
func WriteDest(w io.Writer, side string, d Dest) error {
	var b strings.Builder
	fmt.Fprintf(&b, " %s address: LID %s QPN %s PSN %s", side, cHexAlt(uint64(d.LID), 4), cHexAlt(uint64(d.QPN), 6), cHexAlt(uint64(d.PSN), 6))
	if d.OutReads > 0 {
		fmt.Fprintf(&b, " OUT %s", cHexAlt(uint64(d.OutReads), 4))
	}
	if d.RDMA {
		fmt.Fprintf(&b, " RKey %s VAddr %s", cHexAlt(uint64(d.RKey), 8), cHexAlt(d.VAddr, 16))
	}
	b.WriteString("\n GID: ")
	for i, g := range d.GID {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02d", g)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// BWRow is one line of a bandwidth table.
type BWRow struct {
	Bytes      uint64
	Iterations uint64
	PeakGbps   float64 // or MB/s when the table says so
	AvgGbps    float64
	MsgRate    float64 // Mpps
}

// WriteBWTable writes the bandwidth table between dashes: the header,
// one line per row.
func WriteBWTable(w io.Writer, mbps bool, rows []BWRow) error {
	var b strings.Builder
	b.WriteString(ResultLine)
	if mbps {
		b.WriteString(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n")
	} else {
		b.WriteString(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n")
	}
	for _, r := range rows {
		fmt.Fprintf(&b, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n", r.Bytes, r.Iterations, r.PeakGbps, r.AvgGbps, r.MsgRate)
	}
	b.WriteString(ResultLine)
	_, err := io.WriteString(w, b.String())
	return err
}

// BWFigures turns a transfer into perftest's figures: Gb/s are 10^9
// bits per second (perftest divides bytes/s by 125,000,000), MB/s are 2^20
// bytes per second, MsgRate is millions of messages per second.
func BWFigures(size, iterations uint64, seconds float64, mbps bool) (bw, msgRate float64) {
	if seconds <= 0 {
		return 0, 0
	}
	bytesPerSec := float64(size) * float64(iterations) / seconds
	if mbps {
		bw = bytesPerSec / (1 << 20)
	} else {
		bw = bytesPerSec / 125e6
	}
	return bw, float64(iterations) / seconds / 1e6
}

// LatRow is one line of a latency table, in microseconds.
type LatRow struct {
	Bytes      uint64
	Iterations uint64
	Min, Max   float64
	Typical    float64 // the median
	Avg        float64
	Stdev      float64
	P99, P999  float64
}

// LatStats computes a latency row from per-iteration samples in
// microseconds (one-way figures, as the tool reports them: half the round
// trip for WRITE and SEND ping-pong): minimum, maximum, median ("typical";
// the mean of the two middle samples when their number is even), mean,
// population standard deviation, and the 99% and 99.9% percentiles as
// perftest takes them, the sample at index ceil(n·p) of the sorted array
// (clamped to the last sample).
func LatStats(size uint64, samples []float64) LatRow {
	row := LatRow{Bytes: size, Iterations: uint64(len(samples))}
	n := len(samples)
	if n == 0 {
		return row
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	row.Min, row.Max = s[0], s[n-1]
	if n%2 == 0 {
		row.Typical = (s[n/2-1] + s[n/2]) / 2
	} else {
		row.Typical = s[n/2]
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	row.Avg = sum / float64(n)
	var sq float64
	for _, v := range s {
		sq += (v - row.Avg) * (v - row.Avg)
	}
	row.Stdev = math.Sqrt(sq / float64(n))
	at := func(p float64) float64 { return s[min(int(math.Ceil(float64(n)*p)), n-1)] }
	row.P99, row.P999 = at(0.99), at(0.999)
	return row
}

// WriteLatTable writes the latency table between dashes.
func WriteLatTable(w io.Writer, rows []LatRow) error {
	var b strings.Builder
	b.WriteString(ResultLine)
	b.WriteString(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n")
	for _, r := range rows {
		fmt.Fprintf(&b, " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
			r.Bytes, r.Iterations, r.Min, r.Max, r.Typical, r.Avg, r.Stdev, r.P99, r.P999)
	}
	b.WriteString(ResultLine)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteReport writes a whole run's text as the tool prints it: the
// test information, both sides' addresses, then the table.
func WriteReport(w io.Writer, in TestInfo, local, remote Dest, bw []BWRow, lat []LatRow) error {
	if err := WriteTestInfo(w, in); err != nil {
		return err
	}
	if err := WriteDest(w, "local", local); err != nil {
		return err
	}
	if err := WriteDest(w, "remote", remote); err != nil {
		return err
	}
	if in.Latency {
		return WriteLatTable(w, lat)
	}
	return WriteBWTable(w, false, bw)
}
