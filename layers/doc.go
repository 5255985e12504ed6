// Package layers decodes and builds InfiniBand transport packets — native IB
// (LINKTYPE_INFINIBAND, or inside ERF records), RoCE v1 (ethertype 0x8915)
// and RoCE v2 (UDP 4791) — as gopacket layers.
//
// # Model
//
// Each header is a struct whose exported fields mirror the wire with the
// IBTA's names and that decodes in place, slicing into the input: LRH, GRH,
// BTH, the extended transport headers (RDETH, DETH, XRCETH, FETH, RETH,
// AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, the RoCEv2 CNP block), the
// Trailer with pad bytes and ICRC, ERF records, and management datagrams
// (MAD with SMP, SA, PerfMgt and CM bodies). Every coded field is a named type
// with a String method.
//
// One table, indexed by Opcode, says for every opcode its service, operation,
// position in a message, the extended headers that follow the BTH, whether a
// payload follows and whether it is a response (Opcode.Info). The wire has no
// next-header field after the BTH, so the BTH decodes the extended headers
// its opcode calls for and tells each what follows it; BTH.DecodingLayers
// returns them for a gopacket.DecodingLayerParser. The MAD does the same for
// its class bodies.
//
// # Decoding
//
// Parser runs a DecodingLayerParser over an explicit stack (Ethernet, 802.1Q,
// IPv4, IPv6, UDP, TCP and the layers above) and never sends untrusted bytes
// through gopacket's other decoders. It allocates nothing per frame. A short
// or malformed frame yields a *DecodeError that names the layer, the field and
// the byte where decoding stopped. The packet API (gopacket.NewPacket) works
// too, through the registrations in register.go.
//
// # Checksums
//
// ComputeICRC implements the invariant CRC with the masking of each
// encapsulation; ComputeVCRC the native link CRC. Serializing is inside-out
// in gopacket, so the BTH is written before the headers the ICRC covers:
// serialize the layers with placeholder CRCs, then call FinishFrame (or
// Parser.Finish) to fill them in.
//
// # Sequence numbers
//
// PSN is the 24-bit packet sequence number with wrap-aware Add, Diff and
// Less; PSNWindow classifies PSNs seen in one direction as in order, ahead,
// late or duplicate. Nothing else in ibwire does PSN arithmetic.
package layers
