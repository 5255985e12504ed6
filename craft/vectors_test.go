package craft_test

import (
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// vectorFile is the layout of testdata/vectors/scapy-rocev2.json (see its README).
type vectorFile struct {
	Common struct {
		EthSrc string `json:"eth_src"`
		EthDst string `json:"eth_dst"`
		IPSrc  string `json:"ip_src"`
		IPDst  string `json:"ip_dst"`
		IPTOS  uint8  `json:"ip_tos"`
		IPTTL  uint8  `json:"ip_ttl"`
	} `json:"common"`
	Vectors []struct {
		Index    int                        `json:"index"`
		Name     string                     `json:"name"`
		Hex      string                     `json:"hex"`
		IPID     uint16                     `json:"ip_id"`
		UDPSport uint16                     `json:"udp_sport"`
		Fields   map[string]json.RawMessage `json:"fields"`
	} `json:"vectors"`
}

// TestCraftScapyVectors crafts the 29 frames of the scapy known-answer
// vectors from their field values: every header byte and the ICRC come from
// craft; only the payload bytes are taken from the reference frame.
func TestCraftScapyVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "scapy-rocev2.json"))
	require.NoError(t, err)
	var vf vectorFile
	require.NoError(t, json.Unmarshal(raw, &vf))
	require.Len(t, vf.Vectors, 29)

	mac := func(s string) net.HardwareAddr {
		m, err := net.ParseMAC(s)
		require.NoError(t, err)
		return m
	}
	cm := vf.Common
	require.Equal(t, uint8(0x02), cm.IPTOS, "TOS 0x02 is DSCP 0 with ECT(0)")
	b, err := craft.NewBuilder(craft.Config{
		Requester: craft.Endpoint{MAC: mac(cm.EthSrc), IPv4: net.ParseIP(cm.IPSrc).To4()},
		Responder: craft.Endpoint{MAC: mac(cm.EthDst), IPv4: net.ParseIP(cm.IPDst).To4()},
		ECN:       craft.ECT0, HopLimit: cm.IPTTL,
	})
	require.NoError(t, err)

	for _, v := range vf.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			want, err := hex.DecodeString(v.Hex)
			require.NoError(t, err)
			f := func(name string) uint64 {
				raw, ok := v.Fields[name]
				if !ok {
					return 0
				}
				n, err := strconv.ParseUint(string(raw), 10, 64)
				require.NoError(t, err, name)
				return n
			}
			has := func(name string) bool { _, ok := v.Fields[name]; return ok }
			op := layers.Opcode(f("opcode"))
			bth := layers.BTH{Opcode: op, SE: f("se") == 1, MigReq: f("m") == 1, PKey: 0xFFFF,
				FECN: f("fecn") == 1, BECN: f("becn") == 1, DestQP: uint32(f("dqpn")), AckReq: craft.AckReqDefault(op),
				PSN: layers.PSN(f("psn"))}
			if has("ackreq") {
				bth.AckReq = f("ackreq") == 1
			}
			if has("pkey") {
				bth.PKey = uint16(f("pkey"))
			}
			bth.RETH = layers.RETH{VA: f("reth_va"), RKey: uint32(f("reth_rkey")), DMALength: uint32(f("reth_dmalen"))}
			bth.AtomicETH = layers.AtomicETH{VA: f("atomic_va"), RKey: uint32(f("atomic_rkey")),
				SwapAddData: f("swapdt"), CompareData: f("cmpdt")}
			bth.AETH = layers.AETH{Syndrome: layers.AETHSyndrome(f("aeth_syndrome")), MSN: uint32(f("aeth_msn"))}
			bth.AtomicAckETH.OrigRemoteData = f("orig_remote_data")
			bth.DETH = layers.DETH{QKey: uint32(f("deth_qkey")), SrcQP: uint32(f("deth_srcqp"))}
			bth.ImmDt.Value = uint32(f("immdt"))
			bth.IETH.RKey = uint32(f("ieth_rkey"))
			// The payload: the reference frame's bytes after Ethernet, IPv4,
			// UDP and the headers the opcode table lists.
			start := 14 + 20 + 8 + op.Info().HeaderLength()
			payload := want[start : start+int(f("payload_len"))]

			got, err := b.Build(craft.Packet{BTH: bth, Payload: payload, IPID: v.IPID, UDPSrcPort: v.UDPSport},
				time.Unix(1700000000, 0))
			require.NoError(t, err)
			assert.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got.Data), "vector %d", v.Index)
		})
	}
}
