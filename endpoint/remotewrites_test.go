package endpoint_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// TestRemoteWrites: the count of WRITE messages a responder placed grows
// once per message, at its last packet, with the bytes already in memory;
// not for a duplicate, a WRITE with immediate (which completes a receive
// instead), a rejected WRITE or a message still missing its LAST; and the
// notify channel holds a value once it grew.
func TestRemoteWrites(t *testing.T) {
	mtu := make([]byte, 1024)
	for i := range mtu {
		mtu[i] = byte(i)
	}
	for _, tc := range []struct {
		name   string
		attack func(v *victim)
		want   uint64
		placed []byte // the region's first bytes when the count is read
	}{
		{name: "one WRITE ONLY", want: 1, placed: []byte("ping"), attack: func(v *victim) {
			v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("ping")})
		}},
		{name: "FIRST, MIDDLE, LAST are one message", want: 1, placed: mtu[:8], attack: func(v *victim) {
			reth := layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 3 * 1024}
			v.send(hostile{op: 0x06, psn: v.p0, reth: reth, payload: mtu})
			v.send(hostile{op: 0x07, psn: v.p0.Add(1), payload: mtu})
			v.send(hostile{op: 0x08, psn: v.p0.Add(2), ackReq: true, payload: mtu})
		}},
		{name: "FIRST without its LAST yet", want: 0, placed: mtu[:8], attack: func(v *victim) {
			v.send(hostile{op: 0x06, psn: v.p0, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 2 * 1024}, payload: mtu})
		}},
		{name: "a duplicate is not counted again", want: 2, placed: []byte("pong"), attack: func(v *victim) {
			v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("ping")})
			v.send(hostile{op: 0x0A, psn: v.p0.Add(1), ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("pong")})
			v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("ping")})
		}},
		{name: "WRITE with immediate completes a receive instead", want: 0, placed: []byte("imm!"), attack: func(v *victim) {
			require.NoError(t, v.qp.PostRecv(endpoint.RecvWR{ID: 1}))
			v.send(hostile{op: 0x0B, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("imm!")})
		}},
		{name: "bad rkey", want: 0, placed: make([]byte, 4), attack: func(v *victim) {
			v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey() ^ 1, DMALength: 4}, payload: []byte("evil")})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := newVictim(t, endpoint.RC, all)
				defer v.close(t)
				require.Zero(t, v.qp.RemoteWrites())
				tc.attack(v)
				v.responses() // everything sent has been handled
				require.Equal(t, tc.want, v.qp.RemoteWrites())
				require.Equal(t, tc.placed, v.mem[:len(tc.placed)])
				select {
				case <-v.qp.RemoteWriteNotify():
					require.NotZero(t, tc.want, "notified without a WRITE")
				default:
					require.Zero(t, tc.want, "a WRITE without a notification")
				}
			})
		})
	}
}
