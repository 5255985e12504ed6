package output

// AppendTcpdumpHex appends data as tcpdump -x prints it: lines of 16 bytes
// in groups of two, "\t0x0000:  4502 004c ...", with the ASCII column of -X
// when ascii is set.
func AppendTcpdumpHex(buf, data []byte, ascii bool) []byte {
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		buf = append(buf, "\t0x"...)
		buf = append(buf, hexDigits[off>>12&0xF], hexDigits[off>>8&0xF], hexDigits[off>>4&0xF], hexDigits[off&0xF])
		buf = append(buf, ": "...)
		for i, b := range line {
			if i%2 == 0 {
				buf = append(buf, ' ')
			}
			buf = append(buf, hexDigits[b>>4], hexDigits[b&0xF])
		}
		if ascii {
			// Pad a short last line so the ASCII column lines up.
			for i := len(line); i < 16; i++ {
				if i%2 == 0 {
					buf = append(buf, ' ')
				}
				buf = append(buf, ' ', ' ')
			}
			buf = append(buf, "  "...)
			buf = appendPrintable(buf, line)
		}
		buf = append(buf, '\n')
	}
	return buf
}

// AppendTsharkHex appends data as tshark -x prints it:
// "0000  02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 02   ..............E.".
func AppendTsharkHex(buf, data []byte) []byte {
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		buf = append(buf, hexDigits[off>>12&0xF], hexDigits[off>>8&0xF], hexDigits[off>>4&0xF], hexDigits[off&0xF])
		buf = append(buf, ' ')
		for i := 0; i < 16; i++ {
			if i == 8 {
				buf = append(buf, ' ')
			}
			if i < len(line) {
				buf = append(buf, ' ', hexDigits[line[i]>>4], hexDigits[line[i]&0xF])
			} else {
				buf = append(buf, "   "...)
			}
		}
		buf = append(buf, "   "...)
		buf = appendPrintable(buf, line[:min(8, len(line))])
		if len(line) > 8 {
			buf = append(buf, ' ')
			buf = appendPrintable(buf, line[8:])
		}
		buf = append(buf, '\n')
	}
	return buf
}

func appendPrintable(buf, b []byte) []byte {
	for _, c := range b {
		if c >= 0x20 && c < 0x7F {
			buf = append(buf, c)
		} else {
			buf = append(buf, '.')
		}
	}
	return buf
}
