package layers

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/google/gopacket"
)

// NewSlowParser returns a parser without the RoCEv2 fast path, so tests can
// check the fast path against the general one.
func NewSlowParser(first gopacket.LayerType, opts ParserOptions) *Parser {
	p := NewParser(first, opts)
	p.noFastPath = true
	return p
}

// DecodeBTHByList is the reference BTH decoder: a walk over the opcode's
// header list, each extended header decoded through its interface. Tests hold the straight-line decoder to
// it: same fields, same slices, same error, same truncation flag.
func DecodeBTHByList(b *BTH, data []byte, df gopacket.DecodeFeedback) error {
	b.eths, b.Contents = 0, nil
	if len(data) < BTHLength {
		df.SetTruncated()
		return checkLength("BTH", bthFields, len(data))
	}
	b.Opcode = Opcode(data[0])
	b.SE = data[1]&0x80 != 0
	b.MigReq = data[1]&0x40 != 0
	b.PadCount = data[1] >> 4 & 3
	b.TVer = data[1] & 0x0F
	b.PKey = binary.BigEndian.Uint16(data[2:4])
	b.FECN = data[4]&0x80 != 0
	b.BECN = data[4]&0x40 != 0
	b.Resv6 = data[4] & 0x3F
	b.DestQP = binary.BigEndian.Uint32(data[4:8]) & 0xFFFFFF
	b.AckReq = data[8]&0x80 != 0
	b.Resv7 = data[8] & 0x7F
	b.PSN = PSN(binary.BigEndian.Uint32(data[8:12]) & PSNMask)

	hdr := BTHLength
	b.DCExtension = nil
	if b.DecodeDC && b.Opcode >= 0x40 && b.Opcode <= 0x5F {
		if len(data) < BTHLength+DCExtensionLength {
			df.SetTruncated()
			return &DecodeError{Layer: "BTH", Field: "DCExtension", Offset: BTHLength, Need: DCExtensionLength, Have: len(data) - BTHLength, Err: ErrTruncated}
		}
		b.DCExtension = data[BTHLength : BTHLength+DCExtensionLength]
		hdr += DCExtensionLength
	}

	info := b.Opcode.Info()
	end := len(data) - ICRCLength
	ethEnd := hdr
	for _, k := range info.HeaderList() {
		if ethEnd+k.Size() > end {
			df.SetTruncated()
			err := b.ETH(k).DecodeFromBytes(data[ethEnd:max(end, ethEnd)], df)
			if de, ok := err.(*DecodeError); ok {
				de.Offset += ethEnd
				de.Detail = "before the 4-byte ICRC"
				err = de
			}
			b.decodeCut(data, hdr)
			return err
		}
		ethEnd += k.Size()
	}
	if end < ethEnd {
		b.decodeCut(data, hdr)
		df.SetTruncated()
		return &DecodeError{Layer: "ICRC", Field: "ICRC", Offset: ethEnd, Need: ICRCLength, Have: len(data) - ethEnd, Err: ErrTruncated}
	}
	payloadEnd := end - int(b.PadCount)
	var padErr error
	if payloadEnd < ethEnd {
		padErr = malformed("BTH", "PadCnt", 1, "pad count %d exceeds the %d bytes of payload", b.PadCount, end-ethEnd)
		payloadEnd = ethEnd
	}

	b.payloadType = gopacket.LayerTypePayload
	if info.Has(HdrDETH) && info.Service == ServiceUD {
		srcQP := binary.BigEndian.Uint32(data[hdr+4:hdr+8]) & 0xFFFFFF
		if b.DestQP <= 1 || srcQP <= 1 {
			b.payloadType = LayerTypeMAD
		}
	}

	next := b.payloadType
	off := ethEnd
	hs := info.HeaderList()
	for i := len(hs) - 1; i >= 0; i-- {
		off -= hs[i].Size()
		e := b.ETH(hs[i])
		e.setNext(next)
		if err := e.DecodeFromBytes(data[off:payloadEnd], df); err != nil {
			return err
		}
		next = hs[i].LayerType()
	}
	b.first = next
	for _, k := range hs {
		b.eths |= 1 << k
	}

	b.Contents = data[:hdr]
	b.Payload = data[hdr:payloadEnd]
	b.payload = data[ethEnd:payloadEnd]
	if err := b.Trailer.DecodeFromBytes(data[payloadEnd:], df); err != nil {
		return err
	}
	return padErr
}

// SameBTH describes the first difference between two decoded BTHs, every
// field compared, unexported ones too, and byte slices by identity (where
// they start, their length and capacity), not only by content; "" when
// there is none.
func SameBTH(a, b *BTH) string {
	return sameValue("BTH", reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem())
}

func sameValue(path string, a, b reflect.Value) string {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if d := sameValue(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
	case reflect.Array:
		for i := range a.Len() {
			if d := sameValue(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() || a.Cap() != b.Cap() || (a.Len() > 0 && a.Pointer() != b.Pointer()) {
			return fmt.Sprintf("%s: nil %v len %d cap %d at %#x, want nil %v len %d cap %d at %#x", path,
				a.IsNil(), a.Len(), a.Cap(), a.Pointer(), b.IsNil(), b.Len(), b.Cap(), b.Pointer())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Sprintf("%s: %v, want %v", path, a.Bool(), b.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d, want %d", path, a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d, want %d", path, a.Uint(), b.Uint())
		}
	default:
		return fmt.Sprintf("%s: cannot compare a %s", path, a.Kind())
	}
	return ""
}
