package endpoint

import (
	"fmt"
	"net/netip"

	"github.com/ibwire/ibwire/layers"
)

// ConnectAttr is what Connect needs to bring a QP from RESET to RTS: the
// peer's address, QPN and first PSN as an out-of-band exchange delivers
// them (ibv_rc_pingpong's text message, perftest's pingpong_dest, a CM
// REQ/REP), plus this side's choices. Zero fields take the values
// ibv_rc_pingpong and perftest use: MTU 1024, timeout 14 (67 ms),
// retry_cnt 7, rnr_retry 7, min_rnr_timer 12 (0.64 ms), 16 outstanding
// READ/atomics each way, hop limit 64, all remote access, UD Q_Key
// 0x11111111.
type ConnectAttr struct {
	Remote    netip.Addr // the peer's GID address (RC/UC)
	RemoteQPN uint32     // RC/UC
	RemotePSN layers.PSN // the peer's first send PSN: this QP's rq_psn
	LocalPSN  layers.PSN // this QP's first send PSN (RandomPSN picks one)
	MTU       layers.PathMTU
	Access    Access // remote access this QP grants
	// NoAccess grants no remote access at all (Access zero means all).
	NoAccess        bool
	Timeout         uint8
	RetryCnt        uint8
	RNRRetry        uint8
	MinRNRTimer     layers.RNRTimerCode
	MaxRdAtomic     uint8
	MaxDestRdAtomic uint8
	HopLimit        uint8
	QKey            uint32 // UD
	// Literal zeros for the fields above whose zero means "default".
	ZeroTimeout, ZeroRetryCnt, ZeroRNRRetry, ZeroMinRNRTimer bool
}

// PingpongQKey is the Q_Key of ibv_ud_pingpong and perftest's UD tests.
const PingpongQKey = 0x11111111

func orDefault[T comparable](v T, zero bool, def T) T {
	var z T
	if v == z && !zero {
		return def
	}
	return v
}

// Connect moves a QP in RESET through INIT and RTR to RTS with Modify, as
// an application does after the out-of-band exchange.
func (qp *QP) Connect(c ConnectAttr) error {
	access := c.Access
	if access == 0 && !c.NoAccess {
		access = AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic
	}
	if c.NoAccess {
		access = 0
	}
	a := QPAttr{
		Access:          access,
		PathMTU:         orDefault(c.MTU, false, layers.MTU1024),
		DestQPN:         c.RemoteQPN,
		RQPSN:           c.RemotePSN,
		SQPSN:           c.LocalPSN,
		Timeout:         orDefault(c.Timeout, c.ZeroTimeout, 14),
		RetryCnt:        orDefault(c.RetryCnt, c.ZeroRetryCnt, 7),
		RNRRetry:        orDefault(c.RNRRetry, c.ZeroRNRRetry, 7),
		MinRNRTimer:     orDefault(c.MinRNRTimer, c.ZeroMinRNRTimer, 12),
		MaxRdAtomic:     orDefault(c.MaxRdAtomic, false, 16),
		MaxDestRdAtomic: orDefault(c.MaxDestRdAtomic, false, 16),
		QKey:            orDefault(c.QKey, false, PingpongQKey),
		Remote:          c.Remote,
		HopLimit:        orDefault(c.HopLimit, false, 64),
	}
	steps := []struct {
		state QPState
		mask  [4]AttrMask
	}{
		{StateInit, [4]AttrMask{RC: AttrAccess, UC: AttrAccess, UD: AttrQKey}},
		{StateRTR, [4]AttrMask{RC: rcPath | AttrMaxDestRdAtomic | AttrMinRNRTimer, UC: rcPath}},
		{StateRTS, [4]AttrMask{RC: AttrSQPSN | AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrMaxRdAtomic, UC: AttrSQPSN, UD: AttrSQPSN}},
	}
	for _, s := range steps {
		a.State = s.state
		if err := qp.Modify(a, AttrState|s.mask[qp.typ]); err != nil {
			return fmt.Errorf("connect QP %#x: %w", qp.qpn, err)
		}
	}
	return nil
}
