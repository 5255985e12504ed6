package layers

// Placeholder class bodies so the package builds while the real ones are
// written in smp.go, sa.go, perfmgt.go and cm.go. This file is deleted then.

import "github.com/google/gopacket"

type madStub struct {
	Contents []byte
	mad      *MAD
}

func (s *madStub) LayerContents() []byte             { return s.Contents }
func (s *madStub) LayerPayload() []byte              { return nil }
func (s *madStub) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }
func (s *madStub) setHeader(h *MAD)                  { s.mad = h }
func (s *madStub) DecodeFromBytes(d []byte, df gopacket.DecodeFeedback) error {
	s.Contents = d
	return nil
}

type SMP struct{ madStub }
type SMPDirected struct{ madStub }
type SA struct{ madStub }
type PerfMgt struct{ madStub }
type CM struct{ madStub }

func (*SMP) LayerType() gopacket.LayerType          { return LayerTypeSMP }
func (*SMP) CanDecode() gopacket.LayerClass         { return LayerTypeSMP }
func (*SMPDirected) LayerType() gopacket.LayerType  { return LayerTypeSMPDirected }
func (*SMPDirected) CanDecode() gopacket.LayerClass { return LayerTypeSMPDirected }
func (*SA) LayerType() gopacket.LayerType           { return LayerTypeSA }
func (*SA) CanDecode() gopacket.LayerClass          { return LayerTypeSA }
func (*PerfMgt) LayerType() gopacket.LayerType      { return LayerTypePerfMgt }
func (*PerfMgt) CanDecode() gopacket.LayerClass     { return LayerTypePerfMgt }
func (*CM) LayerType() gopacket.LayerType           { return LayerTypeCM }
func (*CM) CanDecode() gopacket.LayerClass          { return LayerTypeCM }
