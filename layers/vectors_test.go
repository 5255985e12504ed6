package layers_test

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// vectorsDir holds known answers built by scapy and decoded by tshark 4.0.17
// (copied from the project's shared/vectors).
const vectorsDir = "../testdata/vectors"

type vectorFile struct {
	Vectors []struct {
		Index  int            `json:"index"`
		Name   string         `json:"name"`
		Hex    string         `json:"hex"`
		ICRC   string         `json:"icrc_wire_hex"`
		Fields map[string]any `json:"fields"`
	} `json:"vectors"`
}

// frame is one packet read from a capture.
type frame struct {
	data     []byte
	linkType layers.LinkType
}

// readPcap reads every frame of a classic pcap file.
func readPcap(t testing.TB, path string) []frame {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(t, err)
	var out []frame
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, path)
		out = append(out, frame{data: data, linkType: layers.LinkType(r.LinkType())})
	}
}

var firstLayerEthernet = gplayers.LayerTypeEthernet

// userDLTInfiniBand is the user link type 147 that tshark is told to read
// as InfiniBand in some vectors.
const userDLTInfiniBand = 147

func firstLayer(lt layers.LinkType) gopacket.LayerType {
	if lt == userDLTInfiniBand {
		lt = layers.LinkTypeInfiniBand
	}
	first, _ := layers.FirstLayer(lt, nil) // every vector is Ethernet, IB or ERF
	return first
}

// jsonFieldsOf maps the vector JSON field names to what ibwire decoded.
func jsonFieldsOf(p *layers.Parser) map[string]uint64 {
	b := &p.BTH
	bit := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	m := map[string]uint64{
		"opcode": uint64(b.Opcode), "dqpn": uint64(b.DestQP), "psn": uint64(b.PSN), "pkey": uint64(b.PKey),
		"se": bit(b.SE), "m": bit(b.MigReq), "padcnt": uint64(b.PadCount), "ackreq": bit(b.AckReq),
		"fecn": bit(b.FECN), "becn": bit(b.BECN), "payload_len": uint64(len(b.PacketPayload())),
	}
	info := b.Info()
	if info.Has(layers.HdrRETH) {
		m["reth_va"], m["reth_rkey"], m["reth_dmalen"] = b.RETH.VA, uint64(b.RETH.RKey), uint64(b.RETH.DMALength)
	}
	if info.Has(layers.HdrAtomicETH) {
		a := b.AtomicETH
		m["atomic_va"], m["atomic_rkey"], m["swapdt"], m["cmpdt"] = a.VA, uint64(a.RKey), a.SwapAddData, a.CompareData
	}
	if info.Has(layers.HdrAETH) {
		s := b.AETH.Syndrome
		m["aeth_syndrome"], m["aeth_msn"] = uint64(s), uint64(b.AETH.MSN)
		switch s.Type() {
		case layers.AETHAck:
			m["credit_code"] = uint64(s.CreditCode())
		case layers.AETHNak:
			m["nak_code"] = uint64(s.NAKCode())
		case layers.AETHRNRNak:
			m["rnr_timer_code"] = uint64(s.Value())
			m["rnr_timer_us"] = uint64(s.RNRTimer().Microseconds())
		}
	}
	if info.Has(layers.HdrAtomicAckETH) {
		m["orig_remote_data"] = b.AtomicAckETH.OrigRemoteData
	}
	if info.Has(layers.HdrDETH) {
		m["deth_qkey"], m["deth_srcqp"] = uint64(b.DETH.QKey), uint64(b.DETH.SrcQP)
	}
	if info.Has(layers.HdrImmDt) {
		m["immdt"] = uint64(b.ImmDt.Value)
	}
	if info.Has(layers.HdrIETH) {
		m["ieth_rkey"] = uint64(b.IETH.RKey)
	}
	if info.Has(layers.HdrCNP) {
		m["reserved_bytes"] = uint64(len(b.CNP.Contents))
	}
	return m
}

var aethTypeNames = map[string]layers.AETHType{"ACK": layers.AETHAck, "NAK": layers.AETHNak, "RNR_NAK": layers.AETHRNRNak}

func TestVectorsDecodeToTheirJSONFields(t *testing.T) {
	for _, name := range []string{"scapy-rocev2.json", "scapy-rocev2-ipv6.json"} {
		var vf vectorFile
		raw, err := os.ReadFile(filepath.Join(vectorsDir, name))
		require.NoError(t, err)
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&vf))
		require.NotEmpty(t, vf.Vectors)
		for _, v := range vf.Vectors {
			t.Run(fmt.Sprintf("%s/%d_%s", name, v.Index, v.Name), func(t *testing.T) {
				data, err := hex.DecodeString(v.Hex)
				require.NoError(t, err)
				p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
				require.NoError(t, p.Decode(data))
				got := jsonFieldsOf(p)
				for k, want := range v.Fields {
					if k == "aeth_type" {
						assert.Equal(t, aethTypeNames[want.(string)], p.BTH.AETH.Syndrome.Type(), k)
						continue
					}
					g, ok := got[k]
					require.True(t, ok, "field %s not decoded", k)
					assert.Equal(t, mustUint(t, want), g, "field %s", k)
				}
				wire, _ := hex.DecodeString(v.ICRC)
				assert.Equal(t, binary.BigEndian.Uint32(wire), p.BTH.Trailer.ICRCWire(), "ICRC as tshark shows it")
				st, want := p.CheckICRC()
				assert.Equal(t, layers.CRCGood, st, "ICRC computed %08x, carried %08x", want, p.BTH.Trailer.ICRC)
			})
		}
	}
}

// TestVectorsICRC checks every frame of every vector capture: all ICRCs (and
// native VCRCs) verify except the one vector broken on purpose.
func TestVectorsICRC(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.pcap"))
	require.NoError(t, err)
	require.Len(t, files, 7)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			bad := strings.Contains(path, "bad-icrc")
			for i, f := range readPcap(t, path) {
				p := layers.NewParser(firstLayer(f.linkType), layers.ParserOptions{})
				require.NoError(t, p.Decode(f.data), "frame %d", i+1)
				st, _ := p.CheckICRC()
				if p.Encapsulation() == layers.EncapNone {
					// IPoIB and raw frames of the native capture carry no BTH;
					// their VCRC still verifies.
					assert.Equal(t, layers.CRCAbsent, st)
				} else if bad {
					assert.Equal(t, layers.CRCBad, st, "frame %d must fail", i+1)
				} else {
					assert.Equal(t, layers.CRCGood, st, "frame %d", i+1)
				}
				if p.Has(layers.LayerTypeLRH) {
					vst, _ := p.CheckVCRC()
					assert.Equal(t, layers.CRCGood, vst, "frame %d VCRC", i+1)
				}
			}
		})
	}
}

// TestNativeVectorsMatchTshark compares the native-IB frames with tshark's
// decoding of the same frames (read through a user DLT).
func TestNativeVectorsMatchTshark(t *testing.T) {
	frames := readPcap(t, filepath.Join(vectorsDir, "derived-ib-native-linktype247.pcap"))
	raw, err := os.ReadFile(filepath.Join(vectorsDir, "derived-ib-native-linktype147-userdlt.tshark-fields.tsv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	head := strings.Split(lines[0], "\t")
	require.Len(t, lines[1:], len(frames))
	for i, line := range lines[1:] {
		cols := strings.Split(line, "\t")
		row := map[string]string{}
		for j, h := range head {
			row[h] = cols[j]
		}
		p := layers.NewParser(layers.LayerTypeLRH, layers.ParserOptions{})
		require.NoError(t, p.Decode(frames[i].data), "frame %d", i+1)
		num := func(k string) uint64 {
			v, err := strconv.ParseUint(row[k], 0, 64)
			require.NoError(t, err, "frame %d %s=%q", i+1, k, row[k])
			return v
		}
		l := &p.LRH
		assert.Equal(t, num("infiniband.lrh.vl"), uint64(l.VL), "frame %d", i+1)
		assert.Equal(t, num("infiniband.lrh.lver"), uint64(l.LVer))
		assert.Equal(t, num("infiniband.lrh.sl"), uint64(l.SL))
		assert.Equal(t, num("infiniband.lrh.lnh"), uint64(l.LNH))
		assert.Equal(t, num("infiniband.lrh.dlid"), uint64(l.DLID))
		assert.Equal(t, num("infiniband.lrh.pktlen"), uint64(l.PktLen))
		assert.Equal(t, num("infiniband.lrh.slid"), uint64(l.SLID))
		assert.Equal(t, num("infiniband.variant.crc"), uint64(binary.BigEndian.Uint16(binary.LittleEndian.AppendUint16(nil, l.VCRC))), "frame %d VCRC", i+1)
		if row["infiniband.grh.sgid"] != "" {
			assert.Equal(t, net.ParseIP(row["infiniband.grh.sgid"]), p.GRH.SGID, "frame %d", i+1)
			assert.Equal(t, net.ParseIP(row["infiniband.grh.dgid"]), p.GRH.DGID, "frame %d", i+1)
		}
		if row["infiniband.bth.opcode"] == "" {
			assert.False(t, p.Has(layers.LayerTypeBTH), "frame %d", i+1)
			continue
		}
		b := &p.BTH
		assert.Equal(t, num("infiniband.bth.opcode"), uint64(b.Opcode), "frame %d", i+1)
		assert.Equal(t, num("infiniband.bth.destqp"), uint64(b.DestQP))
		assert.Equal(t, num("infiniband.bth.psn"), uint64(b.PSN))
		assert.Equal(t, num("infiniband.invariant.crc"), uint64(b.Trailer.ICRCWire()), "frame %d ICRC", i+1)
		if row["infiniband.deth.q_key"] != "" {
			assert.Equal(t, num("infiniband.deth.q_key"), uint64(b.DETH.QKey))
			assert.Equal(t, num("infiniband.deth.srcqp"), uint64(b.DETH.SrcQP))
		}
	}
}

func mustUint(t *testing.T, v any) uint64 {
	n, err := strconv.ParseUint(string(v.(json.Number)), 10, 64)
	require.NoError(t, err)
	return n
}
