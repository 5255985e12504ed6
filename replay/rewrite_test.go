package replay

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

func corpus(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"../pcaps", "../pcaps/rxe"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.pcap*"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Greater(t, len(files), 40)
	return files
}

func decodeOpts() decode.Options { return decode.Options{} }

// scrambleRules maps every address, port, LID, QPN, R_Key and VA range the
// capture uses to another value, one-to-one, and shifts every request
// stream's PSNs by 1000.
func scrambleRules(t *testing.T, c *Capture) *Rules {
	r := &Rules{}
	dec := decode.NewDecoder(decodeOpts())
	vaMin, vaMax := uint64(1<<64-1), uint64(0)
	for _, f := range c.Frames {
		p := dec.Decode(decode.Input{Number: f.Number, LinkType: f.LinkType, Data: f.Data})
		h := p.Headers
		addIP := func(b []byte) {
			a, ok := netip.AddrFromSlice(b)
			if !ok {
				return
			}
			a = a.Unmap()
			v := a.AsSlice()
			v[len(v)-1] ^= 0x5A
			v[len(v)-2] ^= 0x3C
			n, _ := netip.AddrFromSlice(v)
			require.NoError(t, addRule(&r.Addrs, a, n, "ip", ""))
		}
		for _, lt := range h.Decoded {
			switch lt {
			case gplayers.LayerTypeEthernet:
				for _, m := range [][]byte{h.Ethernet.SrcMAC, h.Ethernet.DstMAC} {
					n := [6]byte(m)
					n[5] ^= 0x77
					require.NoError(t, addRule(&r.MACs, [6]byte(m), n, "mac", ""))
				}
			case gplayers.LayerTypeIPv4:
				addIP(h.IPv4.SrcIP.To4())
				addIP(h.IPv4.DstIP.To4())
			case gplayers.LayerTypeIPv6:
				addIP(h.IPv6.SrcIP)
				addIP(h.IPv6.DstIP)
			case gplayers.LayerTypeUDP:
				if p := uint16(h.UDP.SrcPort); p != uint16(layers.UDPPortRoCEv2) {
					require.NoError(t, addRule(&r.Ports, p, p^0x0F0F, "port", ""))
				}
			case layers.LayerTypeGRH:
				addIP(h.GRH.SGID)
				addIP(h.GRH.DGID)
			case layers.LayerTypeLRH:
				for _, l := range []uint16{h.LRH.SLID, h.LRH.DLID} {
					require.NoError(t, addRule(&r.LIDs, l, l^0x0300, "lid", ""))
				}
			case layers.LayerTypeBTH:
				b := &h.BTH
				// QP0 and QP1 keep their numbers; XOR with a mask whose low
				// bits are 0 keeps every other QPN above 1.
				if b.DestQP > 1 {
					require.NoError(t, addRule(&r.QPNs, b.DestQP, b.DestQP^0x5A5A58, "qpn", ""))
				}
				if b.Opcode.Info().Has(layers.HdrDETH) && b.DETH.SrcQP > 1 {
					require.NoError(t, addRule(&r.QPNs, b.DETH.SrcQP, b.DETH.SrcQP^0x5A5A58, "qpn", ""))
				}
				if b.Opcode.Info().IsRequest() {
					if r.PSNShift == nil {
						r.PSNShift = map[uint32]int{}
					}
					r.PSNShift[b.DestQP] = 1000
				}
				for _, k := range []layers.HeaderKind{layers.HdrRETH, layers.HdrAtomicETH, layers.HdrIETH} {
					if !b.Opcode.Info().Has(k) {
						continue
					}
					ec := b.ETH(k).LayerContents()
					if k == layers.HdrIETH {
						key := binary.BigEndian.Uint32(ec)
						require.NoError(t, addRule(&r.RKeys, key, key^0xA5A5A5A5, "rkey", ""))
						continue
					}
					key := binary.BigEndian.Uint32(ec[8:])
					require.NoError(t, addRule(&r.RKeys, key, key^0xA5A5A5A5, "rkey", ""))
					va := binary.BigEndian.Uint64(ec)
					vaMin, vaMax = min(vaMin, va), max(vaMax, va)
				}
			}
		}
	}
	if vaMin <= vaMax {
		r.VAs = []VARule{{From: vaMin, To: vaMin ^ 0x0000_4000_0000_0000, Len: vaMax - vaMin + 1}}
	}
	require.NoError(t, r.check())
	return r
}

// icrcOK reports, for each IB frame, whether its ICRC verifies.
func icrcOK(t *testing.T, c *Capture) map[int]bool {
	ok := map[int]bool{}
	dec := decode.NewDecoder(decodeOpts())
	for _, f := range c.Frames {
		p := dec.Decode(decode.Input{Number: f.Number, LinkType: f.LinkType, Data: f.Data})
		span, enc, has := p.Headers.ICRCSpan()
		if p.Err != nil || !has {
			continue
		}
		got, want, err := layers.VerifyICRC(enc, span)
		if err == nil {
			ok[f.Number] = got == want
		}
	}
	return ok
}

// vcrcs returns each native IB frame's VCRC status.
func vcrcs(c *Capture) map[int]layers.CRCStatus {
	st := map[int]layers.CRCStatus{}
	dec := decode.NewDecoder(decodeOpts())
	for _, f := range c.Frames {
		p := dec.Decode(decode.Input{Number: f.Number, LinkType: f.LinkType, Data: f.Data})
		if p.VCRC == layers.CRCGood || p.VCRC == layers.CRCBad {
			st[f.Number] = p.VCRC
		}
	}
	return st
}

// nativeIB are the corpus captures of native InfiniBand frames (LRH …
// ICRC, VCRC): their rewrite must bring every good VCRC up to date.
var nativeIB = map[string]bool{"conv_ib.pcap": true, "opcodes_ib_grh.pcap": true, "conv_erf.pcap": true}

func writeTemp(t *testing.T, c *Capture, name string) string {
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, c.WriteFile(path, c.Format))
	return path
}

// TestRewriteRoundTrip rewrites every capture of the corpus with rules that
// touch every address, QPN, PSN base, R_Key and VA it has, checks every
// ICRC that was good stays good (and every bad one bad), rewrites back and
// compares the result with the original file.
func TestRewriteRoundTrip(t *testing.T) {
	for _, path := range corpus(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			orig, err := Load(path, LoadOptions{Decode: decodeOpts()})
			require.NoError(t, err)
			// The original file itself is the reference: capture's writer
			// gives back every corpus file byte for byte.
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			before := icrcOK(t, orig)
			vBefore := vcrcs(orig)
			if nativeIB[filepath.Base(path)] {
				require.NotEmpty(t, vBefore, "a native IB capture has VCRCs")
			}

			rules := scrambleRules(t, orig)
			if rules.Empty() {
				t.Skip("nothing to rewrite")
			}
			fwd, err := Load(path, LoadOptions{Decode: decodeOpts()})
			require.NoError(t, err)
			st, err := fwd.Rewrite(rules, decodeOpts())
			require.NoError(t, err)
			assert.NotZero(t, st.Changed)
			mid, err := Load(writeTemp(t, fwd, "fwd"), LoadOptions{Decode: decodeOpts()})
			require.NoError(t, err)
			changed := 0
			after := icrcOK(t, mid)
			for i, f := range mid.Frames {
				if !bytes.Equal(f.Data, orig.Frames[i].Data) {
					changed++
				}
				if before[f.Number] {
					assert.True(t, after[f.Number], "frame %d: ICRC no longer verifies after the rewrite", f.Number)
				}
				if ok, known := before[f.Number]; known && !ok {
					assert.False(t, after[f.Number], "frame %d: a bad ICRC became good", f.Number)
				}
			}
			assert.Equal(t, st.Changed, changed)
			// Every good VCRC is good after the rewrite (the LRH's LIDs and
			// everything after it changed under it), every bad one bad.
			vAfter := vcrcs(mid)
			assert.Len(t, vAfter, len(vBefore))
			for n, v := range vBefore {
				assert.Equal(t, v, vAfter[n], "frame %d: VCRC %v before the rewrite, %v after", n, v, vAfter[n])
			}
			if nativeIB[filepath.Base(path)] {
				assert.NotZero(t, st.VCRCs, "VCRCs recomputed")
				good := 0
				for _, v := range vAfter {
					if v == layers.CRCGood {
						good++
					}
				}
				assert.NotZero(t, good, "good VCRCs after the rewrite")
			}

			inv, err := rules.Inverse()
			require.NoError(t, err)
			_, err = mid.Rewrite(inv, decodeOpts())
			require.NoError(t, err)
			got, err := os.ReadFile(writeTemp(t, mid, "back"))
			require.NoError(t, err)
			if !assert.True(t, bytes.Equal(want, got), "rewriting back does not give the original bytes") {
				for i, f := range mid.Frames {
					if !bytes.Equal(f.Data, orig.Frames[i].Data) {
						t.Logf("first different frame: %d\n% x\n% x", f.Number, orig.Frames[i].Data, f.Data)
						break
					}
				}
			}
		})
	}
}
