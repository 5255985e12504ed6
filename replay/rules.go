package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Rules say what a rewrite changes. Every map is old value → new value; a
// value without an entry is left as it was. The zero value changes nothing.
type Rules struct {
	// MACs rewrites Ethernet source and destination addresses and the
	// hardware addresses of ARP messages.
	MACs map[[6]byte][6]byte
	// Addrs rewrites IPv4 and IPv6 addresses (IP headers, ARP) and GIDs
	// (GRH of RoCEv1 and routed IB). An IPv4 rule also rewrites the
	// IPv4-mapped GID ::ffff:a.b.c.d, the form RoCE gives an IPv4 address.
	Addrs map[netip.Addr]netip.Addr
	// Ports rewrites UDP (and TCP) source and destination ports.
	Ports map[uint16]uint16
	// LIDs rewrites the LRH's source and destination LIDs of native IB.
	LIDs map[uint16]uint16
	// QPNs rewrites the BTH destination QP and the DETH source QP.
	QPNs map[uint32]uint32
	// RKeys rewrites the R_Key of RETH, AtomicETH and IETH.
	RKeys map[uint32]uint32
	// VAs moves virtual addresses (RETH, AtomicETH) that fall in a range.
	VAs []VARule
	// PSNShift moves the PSNs of one request stream, keyed by the QPN that
	// receives the requests (before QPNs applies): the requests to that QP
	// and the responses that come back from it shift alike.
	PSNShift map[uint32]int
	// FixCRC recomputes every ICRC and VCRC from scratch. Without it a
	// rewrite keeps each CRC exactly as right or as wrong as it was: a good
	// CRC is recomputed, a deliberately broken one stays broken by the same
	// amount, so rewriting back gives the original bytes.
	FixCRC bool
}

// VARule moves the virtual addresses in [From, From+Len) to start at To.
type VARule struct {
	From, To, Len uint64
}

// contains reports whether va lies in the rule's source range.
func (r VARule) contains(va uint64) bool { return va >= r.From && va-r.From < r.Len }

// Empty reports whether the rules change nothing at all.
func (r *Rules) Empty() bool {
	return len(r.MACs) == 0 && len(r.Addrs) == 0 && len(r.Ports) == 0 && len(r.LIDs) == 0 &&
		len(r.QPNs) == 0 && len(r.RKeys) == 0 && len(r.VAs) == 0 && len(r.PSNShift) == 0 && !r.FixCRC
}

// Inverse returns the rules that undo r. It fails when r is not one-to-one
// (two old values mapped to one new value cannot be told apart again).
func (r *Rules) Inverse() (*Rules, error) {
	inv := &Rules{FixCRC: r.FixCRC}
	var err error
	if inv.MACs, err = invert(r.MACs, "mac", func(m [6]byte) string { return net.HardwareAddr(m[:]).String() }); err != nil {
		return nil, err
	}
	if inv.Addrs, err = invert(r.Addrs, "ip", netip.Addr.String); err != nil {
		return nil, err
	}
	if inv.Ports, err = invert(r.Ports, "port", func(p uint16) string { return strconv.Itoa(int(p)) }); err != nil {
		return nil, err
	}
	if inv.LIDs, err = invert(r.LIDs, "lid", func(l uint16) string { return strconv.Itoa(int(l)) }); err != nil {
		return nil, err
	}
	if inv.QPNs, err = invert(r.QPNs, "qpn", hex32); err != nil {
		return nil, err
	}
	if inv.RKeys, err = invert(r.RKeys, "rkey", hex32); err != nil {
		return nil, err
	}
	for _, v := range r.VAs {
		inv.VAs = append(inv.VAs, VARule{From: v.To, To: v.From, Len: v.Len})
	}
	if len(r.PSNShift) > 0 {
		inv.PSNShift = make(map[uint32]int, len(r.PSNShift))
		for q, d := range r.PSNShift {
			if nq, ok := r.QPNs[q]; ok {
				q = nq
			}
			inv.PSNShift[q] = -d
		}
	}
	return inv, inv.check()
}

func invert[K comparable](m map[K]K, kind string, str func(K) string) (map[K]K, error) {
	if len(m) == 0 {
		return nil, nil
	}
	inv := make(map[K]K, len(m))
	for k, v := range m {
		if prev, dup := inv[v]; dup {
			return nil, fmt.Errorf("%s rules %s and %s both map to %s: cannot invert", kind, str(prev), str(k), str(v))
		}
		inv[v] = k
	}
	return inv, nil
}

func hex32(v uint32) string { return fmt.Sprintf("0x%x", v) }

// check rejects rules that would make a rewrite ambiguous.
func (r *Rules) check() error {
	for i, a := range r.VAs {
		if a.Len == 0 {
			return fmt.Errorf("va rule 0x%x->0x%x: empty range", a.From, a.To)
		}
		if a.From+(a.Len-1) < a.From || a.To+(a.Len-1) < a.To {
			return fmt.Errorf("va rule 0x%x->0x%x len 0x%x: range passes 2^64", a.From, a.To, a.Len)
		}
		for _, b := range r.VAs[:i] {
			if overlap(a.From, a.Len, b.From, b.Len) {
				return fmt.Errorf("va rules 0x%x and 0x%x: source ranges overlap", b.From, a.From)
			}
			if overlap(a.To, a.Len, b.To, b.Len) {
				return fmt.Errorf("va rules ->0x%x and ->0x%x: target ranges overlap", b.To, a.To)
			}
		}
	}
	for q, d := range r.PSNShift {
		if q > 0xFFFFFF {
			return fmt.Errorf("psn-base qpn=0x%x: QPN does not fit 24 bits", q)
		}
		if d <= -1<<24 || d >= 1<<24 {
			return fmt.Errorf("psn-base qpn=0x%x %+d: shift must be within ±2^24", q, d)
		}
	}
	for q, n := range r.QPNs {
		if q > 0xFFFFFF || n > 0xFFFFFF {
			return fmt.Errorf("qpn rule 0x%x->0x%x: QPN does not fit 24 bits", q, n)
		}
		if q <= 1 || n <= 1 {
			// QP0 and QP1 are every port's management QPs (SMI, GSI): a
			// packet to them is a MAD, to any other QP it is not.
			return fmt.Errorf("qpn rule 0x%x->0x%x: QP0 and QP1 are the management QPs and keep their numbers", q, n)
		}
	}
	for a, b := range r.Addrs {
		if a.Is4() != b.Is4() {
			return fmt.Errorf("ip rule %s->%s: both sides must be IPv4 or both IPv6", a, b)
		}
	}
	return nil
}

func overlap(a, alen, b, blen uint64) bool {
	return a <= b+(blen-1) && b <= a+(alen-1)
}

// Rule kinds, as the mapping file and the flags name them.
const (
	KindMAC     = "mac"
	KindIP      = "ip"
	KindGID     = "gid"
	KindPort    = "port"
	KindLID     = "lid"
	KindQPN     = "qpn"
	KindRKey    = "rkey"
	KindVA      = "va"
	KindPSNBase = "psn-base"
)

// Add parses one rule of the given kind and adds it to r. The value is
// "FROM->TO" (or "FROM,TO", which needs no quoting on a shell command
// line, or tcprewrite's "FROM:TO" when neither side has a colon of its
// own); a va rule may add a length ("FROM->TO len N" or "FROM,TO,N");
// a psn-base rule is "qpn=Q +N" (or "Q,+N"). Numbers are decimal or 0x hex.
func (r *Rules) Add(kind, value string) error {
	if kind == KindPSNBase {
		return r.addPSNBase(value)
	}
	from, to, extra, err := splitRule(value)
	if err != nil {
		return fmt.Errorf("%s %q: %w", kind, value, err)
	}
	if extra != "" && kind != KindVA {
		return fmt.Errorf("%s %q: unexpected %q after the target", kind, value, extra)
	}
	wrap := func(err error) error { return fmt.Errorf("%s %q: %w", kind, value, err) }
	switch kind {
	case KindMAC:
		a, err := parseMAC(from)
		if err != nil {
			return wrap(err)
		}
		b, err := parseMAC(to)
		if err != nil {
			return wrap(err)
		}
		return addRule(&r.MACs, a, b, kind, value)
	case KindIP, KindGID:
		a, err := netip.ParseAddr(strings.Trim(from, "[]"))
		if err != nil {
			return wrap(err)
		}
		b, err := netip.ParseAddr(strings.Trim(to, "[]"))
		if err != nil {
			return wrap(err)
		}
		a, b = a.Unmap(), b.Unmap()
		if a.Is4() != b.Is4() {
			return wrap(errors.New("both sides must be IPv4 or both IPv6"))
		}
		return addRule(&r.Addrs, a, b, kind, value)
	case KindPort, KindLID:
		a, err := parseUint(from, 16)
		if err != nil {
			return wrap(err)
		}
		b, err := parseUint(to, 16)
		if err != nil {
			return wrap(err)
		}
		if kind == KindPort {
			return addRule(&r.Ports, uint16(a), uint16(b), kind, value)
		}
		return addRule(&r.LIDs, uint16(a), uint16(b), kind, value)
	case KindQPN, KindRKey:
		bits := 32
		if kind == KindQPN {
			bits = 24
		}
		a, err := parseUint(from, bits)
		if err != nil {
			return wrap(err)
		}
		b, err := parseUint(to, bits)
		if err != nil {
			return wrap(err)
		}
		if kind == KindQPN {
			if a <= 1 || b <= 1 {
				return wrap(errors.New("QP0 and QP1 are the management QPs and keep their numbers"))
			}
			return addRule(&r.QPNs, uint32(a), uint32(b), kind, value)
		}
		return addRule(&r.RKeys, uint32(a), uint32(b), kind, value)
	case KindVA:
		a, err := parseUint(from, 64)
		if err != nil {
			return wrap(err)
		}
		b, err := parseUint(to, 64)
		if err != nil {
			return wrap(err)
		}
		n := uint64(math.MaxUint64 - max(a, b) + 1) // to the top of the address space
		if max(a, b) == 0 {
			n = math.MaxUint64
		}
		if extra != "" {
			ls := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(extra), "len"))
			if n, err = parseUint(ls, 64); err != nil || n == 0 {
				return wrap(fmt.Errorf("length %q: want a number from 1", ls))
			}
		}
		r.VAs = append(r.VAs, VARule{From: a, To: b, Len: n})
		return r.check()
	}
	return fmt.Errorf("unknown rule kind %q: want mac, ip, gid, port, lid, qpn, rkey, va or psn-base", kind)
}

func addRule[K comparable](m *map[K]K, a, b K, kind, value string) error {
	if *m == nil {
		*m = make(map[K]K)
	}
	if prev, ok := (*m)[a]; ok && prev != b {
		return fmt.Errorf("%s %q: the source already has a rule", kind, value)
	}
	(*m)[a] = b
	return nil
}

// splitRule splits "FROM->TO[ rest]" or "FROM,TO[,rest]".
func splitRule(s string) (from, to, extra string, err error) {
	s = strings.TrimSpace(s)
	if f, t, ok := strings.Cut(s, "->"); ok {
		from, t = strings.TrimSpace(f), strings.TrimSpace(t)
		to, extra, _ = strings.Cut(t, " ")
		extra = strings.TrimSpace(extra)
	} else if f, t, ok := strings.Cut(s, ","); ok {
		from = strings.TrimSpace(f)
		to, extra, _ = strings.Cut(strings.TrimSpace(t), ",")
	} else if strings.Count(s, ":") == 1 {
		// tcprewrite's FROM:TO (--portmap 80:8080, --pnat 10.0.0.1:127.0.0.1);
		// MACs and IPv6 addresses have colons of their own and need -> or ,.
		from, to, _ = strings.Cut(s, ":")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	} else {
		return "", "", "", errors.New("want FROM->TO or FROM,TO (FROM:TO when neither has a colon)")
	}
	if from == "" || to == "" {
		return "", "", "", errors.New("want FROM->TO or FROM,TO")
	}
	return from, strings.TrimSpace(to), extra, nil
}

// addPSNBase parses "qpn=Q +N", "qpn=Q -N" or "Q,+N".
func (r *Rules) addPSNBase(value string) error {
	v := strings.TrimSpace(value)
	var qs, ds string
	if q, d, ok := strings.Cut(v, ","); ok {
		qs, ds = q, d
	} else if q, d, ok := strings.Cut(v, " "); ok {
		qs, ds = q, d
	} else {
		return fmt.Errorf("psn-base %q: want qpn=Q +N", value)
	}
	qs = strings.TrimPrefix(strings.TrimSpace(qs), "qpn=")
	ds = strings.TrimSpace(ds)
	q, err := parseUint(qs, 24)
	if err != nil {
		return fmt.Errorf("psn-base %q: qpn: %w", value, err)
	}
	if ds == "" || (ds[0] != '+' && ds[0] != '-') {
		return fmt.Errorf("psn-base %q: want a signed shift such as +1000 or -0x10", value)
	}
	mag, err := parseUint(ds[1:], 24)
	if err != nil {
		return fmt.Errorf("psn-base %q: shift: %w", value, err)
	}
	d := int(mag)
	if ds[0] == '-' {
		d = -d
	}
	if r.PSNShift == nil {
		r.PSNShift = make(map[uint32]int)
	}
	if _, dup := r.PSNShift[uint32(q)]; dup {
		return fmt.Errorf("psn-base %q: qpn 0x%x already has a shift", value, q)
	}
	r.PSNShift[uint32(q)] = d
	return nil
}

func parseUint(s string, bits int) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, bits)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q does not fit %d bits", s, bits)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

func parseMAC(s string) ([6]byte, error) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return m, fmt.Errorf("%q is not a MAC address", s)
	}
	copy(m[:], hw)
	return m, nil
}

// ParseRules reads a mapping file: one rule a line, "KIND FROM->TO", with
// blank lines and # comments ignored. KIND is mac, ip, gid, port, lid, qpn,
// rkey, va or psn-base:
//
//	# move guest a's traffic onto loopback
//	mac 52:54:00:00:00:0b -> 02:00:00:00:00:01
//	ip  192.168.77.11 -> 127.0.0.1        # also rewrites GID ::ffff:192.168.77.11
//	gid fe80::1 -> fe80::2
//	port 49152 -> 50000
//	lid 1 -> 7
//	qpn 0x11 -> 0x22
//	rkey 0x1234 -> 0x5678
//	va 0x7f0000000000 -> 0x1000 len 0x100000
//	psn-base qpn=0x11 +1000
//
// name is used in error messages, which give the line number.
func ParseRules(r io.Reader, name string, into *Rules) error {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		kind, rest, _ := strings.Cut(text, " ")
		if err := into.Add(strings.ToLower(kind), strings.TrimSpace(rest)); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := into.check(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// LoadRules reads the mapping file at path into into.
func LoadRules(path string, into *Rules) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return ParseRules(f, path, into)
}

// Format writes r as a mapping file that ParseRules reads back.
func (r *Rules) Format(w io.Writer) error {
	var lines []string
	for a, b := range r.MACs {
		lines = append(lines, fmt.Sprintf("mac %s -> %s", net.HardwareAddr(a[:]), net.HardwareAddr(b[:])))
	}
	for a, b := range r.Addrs {
		kind := KindIP
		if a.Is6() {
			kind = KindGID
		}
		lines = append(lines, fmt.Sprintf("%s %s -> %s", kind, a, b))
	}
	for a, b := range r.Ports {
		lines = append(lines, fmt.Sprintf("port %d -> %d", a, b))
	}
	for a, b := range r.LIDs {
		lines = append(lines, fmt.Sprintf("lid %d -> %d", a, b))
	}
	for a, b := range r.QPNs {
		lines = append(lines, fmt.Sprintf("qpn 0x%x -> 0x%x", a, b))
	}
	for a, b := range r.RKeys {
		lines = append(lines, fmt.Sprintf("rkey 0x%x -> 0x%x", a, b))
	}
	sort.Strings(lines)
	for _, v := range r.VAs {
		lines = append(lines, fmt.Sprintf("va 0x%x -> 0x%x len 0x%x", v.From, v.To, v.Len))
	}
	var psn []string
	for q, d := range r.PSNShift {
		psn = append(psn, fmt.Sprintf("psn-base qpn=0x%x %+d", q, d))
	}
	sort.Strings(psn)
	for _, l := range append(lines, psn...) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
