package layers_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// SEND payloads of pcaps/rxe/iser_login.pcap (Linux ib_iser initiator, LIO
// ib_isert target): frame 23, an INQUIRY with its Read STag; frame 26, its
// SCSI Response (after the SEND with Invalidate's IETH); frame 80, the
// CHECK CONDITION of a MAINTENANCE IN with 96 bytes of sense data.
var (
	iserInquiry = unhex("140000000000000000000000000000000000153eff2a89ab4484db00" +
		"01c100000000000000000000000000000100000000000024000000008166da7e12000000240000000000000000000000")
	iserInquiryResp = unhex("10000000000000000000000000000000000000000000000000000000" +
		"2180000000000000000000000000000001000000000000008166da7e0000000100000040000000000000000000000000")
	iserCheckCondition = unhex("10000000000000000000000000000000000000000000000000000000" +
		"218000020000006200000000000000000a000000000000008166da870000000a000000490000000000000000000000000060" +
		"700005000000000a000000002000000000000000000000000000000000000000000000000000000000000000000000000000" +
		"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000")
	iserHello      = unhex("20aa0004" + "000000000000000000000000000000000000000000000000")
	iserHelloReply = unhex("31aa0008" + "000000000000000000000000000000000000000000000000")
)

func TestISERHeaderAndPDU(t *testing.T) {
	var h layers.ISERHeader
	var p layers.ISCSIPDU
	require.NoError(t, h.DecodeFromBytes(iserInquiry))
	assert.Equal(t, layers.ISERControl, h.Opcode)
	assert.True(t, h.RSV())
	assert.False(t, h.WSV())
	assert.Equal(t, uint32(0x153e), h.ReadSTag) // tshark: iser.read_stag 0x0000153e
	assert.Equal(t, uint64(0xff2a89ab4484db00), h.ReadVA)
	require.NoError(t, p.DecodeFromBytes(h.Body))
	assert.Equal(t, layers.ISCSISCSICommand, p.Opcode)
	assert.False(t, p.Immediate)
	assert.True(t, p.Final())
	assert.True(t, p.ReadFlag())
	assert.Equal(t, uint32(0x01000000), p.ITT)
	assert.Equal(t, uint32(36), p.EDTL())
	assert.Equal(t, uint32(0), p.CmdSN())
	assert.Equal(t, "INQUIRY", layers.SCSIOpcode(p.CDB[0]).String())
	resp, ok := p.Opcode.Response()
	assert.True(t, ok)
	assert.Equal(t, layers.ISCSISCSIResponse, resp)
	assert.True(t, layers.ISERPlausible(iserInquiry, &h, &p))

	require.NoError(t, h.DecodeFromBytes(iserInquiryResp))
	require.NoError(t, p.DecodeFromBytes(h.Body))
	assert.Equal(t, layers.ISCSISCSIResponse, p.Opcode)
	assert.Equal(t, layers.SCSIGood, p.Status())
	assert.Equal(t, uint32(0x8166da7e), p.StatSN())
	_, hasSense := p.SenseLength()
	assert.False(t, hasSense)

	require.NoError(t, h.DecodeFromBytes(iserCheckCondition))
	require.NoError(t, p.DecodeFromBytes(h.Body))
	assert.Equal(t, layers.SCSICheckCondition, p.Status())
	n, ok := p.SenseLength()
	assert.True(t, ok)
	assert.Equal(t, uint16(96), n) // tshark: iscsi.scsiresponse.senselength 96
	assert.Len(t, p.Data, 98)
	assert.Len(t, p.Pad, 2)
}

func TestISERHello(t *testing.T) {
	var h layers.ISERHeader
	require.NoError(t, h.DecodeFromBytes(iserHello))
	assert.Equal(t, layers.ISERHello, h.Opcode)
	assert.Equal(t, []uint8{10, 10}, []uint8{h.MaxVer, h.MinVer})
	assert.Equal(t, uint16(4), h.IRDORD)
	require.NoError(t, h.DecodeFromBytes(iserHelloReply))
	assert.Equal(t, layers.ISERHelloReply, h.Opcode)
	assert.True(t, h.Reject())
	assert.Equal(t, uint16(8), h.IRDORD)
	assert.Equal(t, "HelloReply Message", h.Opcode.String())
}

func TestISERErrors(t *testing.T) {
	for _, tc := range []struct {
		name, layer, field string
		data               []byte
		class              error
	}{
		{"empty", "iSER", "Flags", nil, layers.ErrTruncated},
		{"cut in the read offset", "iSER", "Read Base Offset", iserInquiry[:25], layers.ErrTruncated},
		{"unknown opcode", "iSER", "Opcode", append([]byte{0x50}, iserInquiry[1:]...), layers.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h layers.ISERHeader
			err := h.DecodeFromBytes(tc.data)
			var de *layers.DecodeError
			require.True(t, errors.As(err, &de), "%v", err)
			assert.Equal(t, tc.layer, de.Layer)
			assert.Equal(t, tc.field, de.Field)
			assert.ErrorIs(t, err, tc.class)
		})
	}
	var p layers.ISCSIPDU
	err := p.DecodeFromBytes(iserInquiry[28:70])
	var de *layers.DecodeError
	require.True(t, errors.As(err, &de))
	assert.Equal(t, "iSCSI", de.Layer)
	assert.Equal(t, "BHS", de.Field)
	// A TotalAHSLength the PDU cannot hold.
	bad := append([]byte(nil), iserInquiry[28:]...)
	bad[4] = 4
	err = p.DecodeFromBytes(bad)
	require.True(t, errors.As(err, &de))
	assert.Equal(t, "TotalAHSLength", de.Field)
}

// ISERPlausible is the content detection's first test: what is not an
// iSER control message with a request or response is refused.
func TestISERPlausible(t *testing.T) {
	var h layers.ISERHeader
	var p layers.ISCSIPDU
	mod := func(i int, v byte) []byte {
		b := append([]byte(nil), iserInquiry...)
		b[i] = v
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"INQUIRY", iserInquiry, true},
		{"response", iserInquiryResp, true},
		{"Hello", iserHello, false},
		{"reserved flag", mod(0, 0x15), false},
		{"reserved byte", mod(2, 1), false},
		{"read STag without RSV", mod(0, 0x10), false},
		{"unknown iSCSI opcode", mod(28, 0x3a), false},
		{"data segment longer than the SEND", mod(33, 0x40), false},
		{"short", iserInquiry[:60], false},
	} {
		assert.Equal(t, tc.want, layers.ISERPlausible(tc.data, &h, &p), tc.name)
	}
}

func TestCDBRange(t *testing.T) {
	for _, tc := range []struct {
		cdb    string
		lba    uint64
		blocks uint32
		ok     bool
	}{
		{"28000000004000000800", 64, 8, true},                                  // READ(10): frames of iser_login.pcap
		{"2a000000080000010000", 2048, 256, true},                              // WRITE(10), 128 KiB
		{"0800001000" + "00", 16, 256, true},                                   // READ(6): length 0 is 256 blocks
		{"8a00" + "0000000000010000" + "00000010" + "0000", 1 << 16, 16, true}, // WRITE(16)
		{"a8000000000a0000002000" + "00", 10, 32, true},                        // READ(12)
		{"12000000240000", 0, 0, false},                                        // INQUIRY
		{"2800", 0, 0, false},                                                  // cut
	} {
		lba, n, ok := layers.CDBRange(unhex(tc.cdb))
		assert.Equal(t, []any{tc.lba, tc.blocks, tc.ok}, []any{lba, n, ok}, tc.cdb)
	}
}

func TestISCSINames(t *testing.T) {
	assert.Equal(t, "SCSI Command", layers.ISCSISCSICommand.String())
	assert.Equal(t, "Login Response", layers.ISCSILoginResp.String())
	assert.Equal(t, "Unknown(58)", layers.ISCSIOpcode(0x3a).String())
	assert.Equal(t, "Check Condition", layers.SCSICheckCondition.String())
	assert.Equal(t, "READ(10)", layers.SCSIRead10.String())
	assert.Equal(t, "Unknown(0xff)", layers.SCSIOpcode(0xff).String())
	_, ok := layers.ISCSIDataOut.Response()
	assert.False(t, ok)
	var p layers.ISCSIPDU
	p.Data = []byte("a=1\x00b=2\x00\x00c")
	var kvs []string
	p.KeyValues(func(kv []byte) bool { kvs = append(kvs, string(kv)); return true })
	assert.Equal(t, []string{"a=1", "b=2", "c"}, kvs)
}

func FuzzISER(f *testing.F) {
	for _, s := range [][]byte{iserInquiry, iserInquiryResp, iserCheckCondition, iserHello, iserHelloReply} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h layers.ISERHeader
		var p layers.ISCSIPDU
		if h.DecodeFromBytes(data) == nil {
			if len(h.Body) != len(data)-layers.ISERHeaderLength {
				t.Fatalf("body of %d bytes from %d", len(h.Body), len(data))
			}
			_ = h.Opcode.String()
		}
		if err := p.DecodeFromBytes(data); err == nil {
			if len(p.Data) > int(p.DataLength) || len(p.Pad) > 3 || layers.ISCSIBHSLength+len(p.AHS)+len(p.Data)+len(p.Pad) > len(data) {
				t.Fatalf("segments %d+%d+%d from %d", len(p.AHS), len(p.Data), len(p.Pad), len(data))
			}
			_ = p.Opcode.String() + p.Status().String() + layers.SCSIOpcode(p.CDB[0]).String()
			p.KeyValues(func(kv []byte) bool { return len(kv) > 0 })
			_, _, _ = layers.CDBRange(p.CDB[:])
		} else {
			var de *layers.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("not a DecodeError: %v", err)
			}
		}
		_ = layers.ISERPlausible(data, &h, &p)
	})
}

// AppendTo writes back what DecodeFromBytes read: the real capture's bytes.
func TestISERAppendRoundTrip(t *testing.T) {
	for _, msg := range [][]byte{iserInquiry, iserInquiryResp, iserCheckCondition, iserHello, iserHelloReply} {
		var h layers.ISERHeader
		var p layers.ISCSIPDU
		require.NoError(t, h.DecodeFromBytes(msg))
		out := h.AppendTo(nil)
		if h.Opcode == layers.ISERControl {
			require.NoError(t, p.DecodeFromBytes(h.Body))
			out = p.AppendTo(out)
		}
		assert.Equal(t, hex.EncodeToString(msg), hex.EncodeToString(out))
	}
}
