package output

import (
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// appendNVMe summarizes an NVMe-oF command or completion capsule:
//
//	, NVMe Read qid 1 cid 17 nsid 1 lba 2048 len 8
//	, NVMe Fabrics Property Get qid 0 cid 1 offset 0x0
//	, NVMe CQE cid 17 Success [latency 84 µs]
func appendNVMe(buf []byte, n *decode.NVMePacket) []byte {
	buf = append(buf, ", NVMe "...)
	if n.Kind == decode.NVMeCompletion {
		buf = append(buf, "CQE cid "...)
		buf = strconv.AppendUint(buf, uint64(n.CQE.CID), 10)
		buf = append(buf, ' ')
		buf = append(buf, n.CQE.Status.String()...)
		if n.HasCmd {
			buf = append(buf, " ["...)
			buf = append(buf, n.Cmd.Name()...)
			buf = append(buf, ", latency "...)
			buf = appendMicros(buf, n.Latency)
			buf = append(buf, ']')
		}
		return buf
	}
	s := &n.SQE
	buf = append(buf, n.Cmd.Name()...)
	if n.HasQID {
		buf = append(buf, " qid "...)
		buf = strconv.AppendUint(buf, uint64(n.QID), 10)
	}
	buf = append(buf, " cid "...)
	buf = strconv.AppendUint(buf, uint64(s.CID), 10)
	switch {
	case s.IsFabrics():
		switch s.FabricsType() {
		case layers.NVMeFabricsConnect:
			buf = append(buf, " queue "...)
			buf = strconv.AppendUint(buf, uint64(s.ConnectQID()), 10)
			buf = append(buf, " sqsize "...)
			buf = strconv.AppendUint(buf, uint64(s.ConnectSQSize())+1, 10)
			if n.HasConnect {
				buf = append(buf, " subnqn "...)
				buf = append(buf, n.Connect.SubNQN...)
			}
		case layers.NVMeFabricsPropertyGet, layers.NVMeFabricsPropertySet:
			buf = append(buf, " offset 0x"...)
			buf = strconv.AppendUint(buf, uint64(s.PropertyOffset()), 16)
			if s.FabricsType() == layers.NVMeFabricsPropertySet {
				buf = append(buf, " value 0x"...)
				buf = strconv.AppendUint(buf, s.PropertyValue(), 16)
			}
		}
		return buf
	case n.Cmd.Admin:
		switch s.Opcode {
		case layers.NVMeOpIdentify:
			buf = append(buf, " cns "...)
			buf = strconv.AppendUint(buf, uint64(s.CNS()), 10)
			buf = append(buf, " ("...)
			buf = append(buf, s.CNS().String()...)
			buf = append(buf, ')')
		case layers.NVMeOpGetLogPage:
			buf = append(buf, " lid 0x"...)
			buf = strconv.AppendUint(buf, uint64(s.LogPageID()), 16)
			buf = append(buf, " ("...)
			buf = append(buf, s.LogPageID().String()...)
			buf = append(buf, ')')
		case layers.NVMeOpSetFeatures, layers.NVMeOpGetFeatures:
			buf = append(buf, " fid 0x"...)
			buf = strconv.AppendUint(buf, uint64(s.FeatureID()), 16)
			buf = append(buf, " ("...)
			buf = append(buf, s.FeatureID().String()...)
			buf = append(buf, ')')
		}
	}
	if s.NSID != 0 {
		buf = append(buf, " nsid "...)
		buf = strconv.AppendUint(buf, uint64(s.NSID), 10)
	}
	if n.Cmd.Blocks != 0 {
		buf = append(buf, " lba "...)
		buf = strconv.AppendUint(buf, n.Cmd.SLBA, 10)
		buf = append(buf, " len "...)
		buf = strconv.AppendUint(buf, uint64(n.Cmd.Blocks), 10)
	}
	if n.InCapsule > 0 {
		buf = append(buf, " in-capsule "...)
		buf = strconv.AppendInt(buf, int64(n.InCapsule), 10)
	}
	return buf
}

// appendMicros prints a duration in microseconds, to the nanosecond.
func appendMicros(buf []byte, d time.Duration) []byte {
	buf = strconv.AppendFloat(buf, float64(d)/float64(time.Microsecond), 'f', -1, 64)
	return append(buf, " µs"...)
}
