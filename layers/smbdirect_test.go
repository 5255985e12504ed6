package layers_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// The messages of [MS-SMBD] §4 (its example negotiate) and a Data
// Transfer carrying an SMB2 header, as bytes.
var (
	smbdNegReq = []byte{0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0x00, 0x54, 0x05, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00}
	smbdNegRsp = []byte{0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0x00, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x10, 0x00, 0x54, 0x05, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00}
)

func smbdData(remaining uint32, data []byte) []byte {
	b := make([]byte, 24, 24+len(data))
	binary.LittleEndian.PutUint16(b[0:], 255)
	binary.LittleEndian.PutUint16(b[2:], 10)
	binary.LittleEndian.PutUint16(b[4:], layers.SMBDirectResponseRequested)
	binary.LittleEndian.PutUint32(b[8:], remaining)
	binary.LittleEndian.PutUint32(b[12:], 24)
	binary.LittleEndian.PutUint32(b[16:], uint32(len(data)))
	return append(b, data...)
}

func TestDecodeSMBDirect(t *testing.T) {
	smb2 := layers.AppendSMB2Header(nil, &layers.SMB2Header{Command: 8, MessageID: 7, Flags: layers.SMB2FlagServerToRedir, Status: 0x103})
	data := smbdData(100, smb2)
	badOffset := smbdData(0, smb2)
	binary.LittleEndian.PutUint32(badOffset[12:], 20+2)
	for _, tc := range []struct {
		name  string
		b     []byte
		kind  layers.SMBDirectKind
		want  layers.SMBDirectMsg
		field string // the failing field, "" for none
		err   error
	}{
		{"negotiate request", smbdNegReq, layers.SMBDirectNegotiateRequest, layers.SMBDirectMsg{Kind: layers.SMBDirectNegotiateRequest,
			MinVersion: 0x100, MaxVersion: 0x100, CreditsRequested: 255, PreferredSendSize: 1364, MaxReceiveSize: 8192, MaxFragmentedSize: 1 << 20}, "", nil},
		{"negotiate response", smbdNegRsp, layers.SMBDirectNegotiateResponse, layers.SMBDirectMsg{Kind: layers.SMBDirectNegotiateResponse,
			MinVersion: 0x100, MaxVersion: 0x100, NegotiatedVersion: 0x100, CreditsRequested: 255, CreditsGranted: 255,
			MaxReadWriteSize: 1 << 20, PreferredSendSize: 1364, MaxReceiveSize: 8192, MaxFragmentedSize: 1 << 20}, "", nil},
		{"data transfer", data, layers.SMBDirectDataTransfer, layers.SMBDirectMsg{Kind: layers.SMBDirectDataTransfer,
			CreditsRequested: 255, CreditsGranted: 10, Flags: 1, RemainingLength: 100, DataOffset: 24, DataLength: 64, Data: smb2}, "", nil},
		{"keep-alive", smbdData(0, nil)[:20], layers.SMBDirectDataTransfer, layers.SMBDirectMsg{Kind: layers.SMBDirectDataTransfer,
			CreditsRequested: 255, CreditsGranted: 10, Flags: 1, DataOffset: 24}, "", nil},
		{"short request", smbdNegReq[:19], layers.SMBDirectNegotiateRequest, layers.SMBDirectMsg{}, "MaxFragmentedSize", layers.ErrTruncated},
		{"short response", smbdNegRsp[:31], layers.SMBDirectNegotiateResponse, layers.SMBDirectMsg{}, "MaxFragmentedSize", layers.ErrTruncated},
		{"data past the message", data[:80], layers.SMBDirectDataTransfer, layers.SMBDirectMsg{}, "DataLength", layers.ErrTruncated},
		{"data offset not 8-aligned", badOffset, layers.SMBDirectDataTransfer, layers.SMBDirectMsg{}, "DataOffset", layers.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m layers.SMBDirectMsg
			err := layers.DecodeSMBDirect(tc.b, tc.kind, &m)
			if tc.field != "" {
				var de *layers.DecodeError
				require.True(t, errors.As(err, &de), "%v", err)
				assert.Equal(t, "SMBDirect", de.Layer)
				assert.Equal(t, tc.field, de.Field)
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if tc.want.DataLength == 0 {
				tc.want.DataOffset = m.DataOffset // a message without data may say any offset
			}
			assert.Equal(t, tc.want, m)
			if tc.kind != layers.SMBDirectDataTransfer || tc.want.DataLength > 0 {
				assert.Equal(t, tc.b, layers.AppendSMBDirect(nil, &m), "encodes back")
			}
		})
	}
	// The first packet of a message sent in several holds its headers and
	// the start of its data.
	var m layers.SMBDirectMsg
	require.NoError(t, layers.DecodeSMBDirectFirst(data[:40], layers.SMBDirectDataTransfer, &m))
	assert.Equal(t, smb2[:16], m.Data)
	assert.Equal(t, uint64(24+64), m.End())
}

func TestSMBDirectForms(t *testing.T) {
	smb2 := layers.AppendSMB2Header(nil, &layers.SMB2Header{Command: 1})
	for _, tc := range []struct {
		name string
		b    []byte
		form layers.SMBDirectKind
		smb2 bool
	}{
		{"negotiate request", smbdNegReq, layers.SMBDirectNegotiateRequest, false},
		{"negotiate response", smbdNegRsp, layers.SMBDirectNegotiateResponse, false},
		{"request one byte longer", append(append([]byte(nil), smbdNegReq...), 0), layers.SMBDirectUnknown, false},
		{"data with SMB2", smbdData(0, smb2), layers.SMBDirectUnknown, true},
		{"data with other bytes", smbdData(0, make([]byte, 64)), layers.SMBDirectUnknown, false},
		{"data with SMB2 cut", smbdData(0, smb2)[:80], layers.SMBDirectUnknown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.form, layers.SMBDirectNegotiateForm(tc.b))
			assert.Equal(t, tc.smb2, layers.SMBDirectCarriesSMB2(tc.b))
		})
	}
}

func TestDecodeSMB2Header(t *testing.T) {
	want := layers.SMB2Header{Command: 9, Status: 0xC0000022, Flags: layers.SMB2FlagServerToRedir, Credits: 3, NextCommand: 0,
		MessageID: 1 << 40, TreeID: 5, SessionID: 0x4400000000001}
	b := layers.AppendSMB2Header(nil, &want)
	var h layers.SMB2Header
	require.NoError(t, layers.DecodeSMB2Header(b, &h))
	assert.Equal(t, want, h)
	assert.True(t, h.Response())
	assert.Equal(t, "WRITE", h.Command.String())
	n, ok := layers.NTStatusName(h.Status)
	assert.True(t, ok)
	assert.Equal(t, "STATUS_ACCESS_DENIED", n)

	for _, tc := range []struct {
		name, field string
		b           []byte
	}{
		{"short", "Signature", b[:63]},
		{"not SMB2", "ProtocolId", append([]byte{0xff}, b[1:]...)},
		{"structure size", "StructureSize", append(append(append([]byte(nil), b[:4]...), 65, 0), b[6:]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var de *layers.DecodeError
			require.True(t, errors.As(layers.DecodeSMB2Header(tc.b, &h), &de))
			assert.Equal(t, "SMB2", de.Layer)
			assert.Equal(t, tc.field, de.Field)
		})
	}
}

// FuzzSMBDirect decodes arbitrary bytes as each message kind: never a
// panic, the data always inside the message, and a message that decodes
// whole encodes back to its bytes (a Data Transfer's, when its data sits
// at offset 24 after zero padding).
func FuzzSMBDirect(f *testing.F) {
	f.Add(smbdNegReq)
	f.Add(smbdNegRsp)
	f.Add(smbdData(8, layers.AppendSMB2Header(nil, &layers.SMB2Header{Command: 5, MessageID: 3})))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, k := range []layers.SMBDirectKind{layers.SMBDirectNegotiateRequest, layers.SMBDirectNegotiateResponse, layers.SMBDirectDataTransfer} {
			var m layers.SMBDirectMsg
			if layers.DecodeSMBDirectFirst(b, k, &m) == nil && len(m.Data) > 0 {
				require.LessOrEqual(t, int(m.DataOffset)+len(m.Data), len(b))
			}
			if layers.DecodeSMBDirect(b, k, &m) != nil {
				continue
			}
			n := int(m.End())
			require.LessOrEqual(t, n, len(b))
			if k != layers.SMBDirectDataTransfer || m.DataLength > 0 && m.DataOffset == 24 && binary.LittleEndian.Uint32(b[20:]) == 0 {
				enc := layers.AppendSMBDirect(nil, &m)
				want := append([]byte(nil), b[:n]...)
				if k == layers.SMBDirectNegotiateRequest {
					want[4], want[5] = 0, 0 // reserved: encoded as zero
				}
				if k == layers.SMBDirectNegotiateResponse {
					want[6], want[7] = 0, 0
				}
				if k == layers.SMBDirectDataTransfer {
					want[6], want[7] = 0, 0
				}
				require.Equal(t, want, enc)
			}
			var h layers.SMB2Header
			_ = layers.DecodeSMB2Header(m.Data, &h)
		}
	})
}
