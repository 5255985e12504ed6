// Package dfilter implements Wireshark's display-filter language, the -Y of
// ibdump and the filter bar of ibtui, over decode's field registry.
//
// Compile parses a filter and type-checks it against the registry once: an
// unknown field, a value that does not fit its field, or an operator the
// field's type does not have is a *SyntaxError that names the column, with
// tshark 4.0's wording. Literals are parsed into decode.Value form and
// regular expressions compiled at that point, so Match only reads fields and
// compares: it allocates nothing.
//
//	f, err := dfilter.Compile("bth.opcode == RC_RDMA_WRITE_ONLY && ip.src == 192.168.77.0/24")
//	if err != nil {
//		var se *dfilter.SyntaxError
//		if errors.As(err, &se) {
//			fmt.Fprintln(os.Stderr, se.Caret(expr))
//		}
//	}
//	if f.Match(p) { … }
//
// # Grammar
//
//	filter     = [ or ] .
//	or         = and { ( "||" | "or" ) and } .
//	and        = unary { ( "&&" | "and" ) unary } .
//	unary      = ( "!" | "not" ) unary | "(" or ")" | test .
//	test       = field [ mask ] [ relation ] .
//	mask       = ( "&" | "bitwise_and" ) number .
//	relation   = compare value
//	           | "contains" value
//	           | ( "matches" | "~" ) value
//	           | "in" "{" member { [ "," ] member } "}" .
//	member     = value [ ".." value ] .
//	compare    = "==" | "eq" | "any_eq" | "!=" | "ne" | "all_ne" | "!=="
//	           | "===" | "all_eq" | "~=" | "any_ne"
//	           | "<" | "lt" | "<=" | "le" | ">" | "gt" | ">=" | "ge" .
//	value      = word | string .
//	string     = `"` { char | escape } `"` | `r"` { char } `"` .
//	escape     = `\` ( `a` | `b` | `f` | `n` | `r` | `t` | `v` | `\` | `"` | `'` )
//	           | `\x` hex hex | `\` octal [ octal [ octal ] ] | `\u` 4*hex | `\U` 8*hex .
//	word       = a run of letters, digits and _ - . : / + that stops before "..".
//
// "not" binds tightest, then "and", then "or", as in tshark 4.0. Keywords
// are reserved: a value name spelled like one must be quoted.
//
// # Fields
//
// A field is a name from decode's registry; the "infiniband." prefix may be
// left out (bth.psn is infiniband.bth.psn). A field alone tests presence, and
// "field & mask" alone tests that the masked value is not zero. A field
// that occurs twice in a packet (decode.Field.GetSecond) matches a
// comparison when any occurrence does, except that "!=" requires every
// occurrence to differ, as tshark 4.0 defines it ("a != b" is "!(a == b)"
// for a present field); "~=" is the older "some occurrence differs", "==="
// "every occurrence equals". A field that is absent fails every comparison.
//
// # Values
//
// What a value may be depends on the field's type:
//
//   - integers: decimal, 0x hex, 0o or leading-0 octal (017, as tshark),
//     0b binary; or a value name (bth.opcode == RC_RDMA_WRITE_ONLY, or
//     Wireshark's "Reliable Connection (RC) - RDMA WRITE Only";
//     aeth.syndrome.error_code == psn_seq_err), found through the field's
//     ByName and Names, exactly and then ignoring case. A quoted value is
//     always a name. Values above the type's maximum are errors.
//   - booleans: true, false, or a number (non-zero is true).
//   - IPv4 and IPv6 addresses, with an optional /bits that makes the
//     comparison a prefix match (ip.src == 192.168.77.0/24). An IPv4
//     address given for an IPv6 field such as a GID stands for its
//     IPv4-mapped form (grh.sgid == 192.168.77.11).
//   - MAC addresses: aa:bb:cc:dd:ee:ff, aa-bb-…, aabb.ccdd.eeff.
//   - byte strings: aa:bb:cc, aa-bb-cc, aabbcc, or a quoted string meaning
//     its own bytes; "contains" finds a sub-sequence.
//   - strings: quoted or a bare word; "contains" finds a substring.
//   - relative times in seconds (frame.time_relative > 1.5); absolute times
//     as seconds since the epoch or, quoted, "Nov 14, 2023 22:13:20" or
//     "2023-11-14 22:13:20" (local time unless followed by " UTC") or RFC 3339.
//
// "matches" takes a Go regular expression (RE2 syntax) and, like tshark's,
// ignores case unless the pattern starts with (?-i). It applies to strings
// and byte strings. The field "frame" compares as the frame's bytes, so
// "frame contains c0:a8:01:02" works as in Wireshark.
//
// # Canonical form
//
// Filter.String prints full field names, symbolic operators, numbers in the
// field's display base, sets with commas and only the parentheses needed.
// The printed form compiles to itself, and tshark 4.0 accepts it whenever the
// filter uses nothing ibwire adds (value names in IBTA spelling, blank
// separated sets, 0o and 0b numbers, IPv4 addresses for GIDs).
//
// # Not supported
//
// Slices (field[0:2]), arithmetic and functions (len(), upper()), comparing
// two fields, comparing protocols other than frame as bytes, "not in",
// "xor", character constants ('a'), host names, and the "." and ":" prefixes
// that force a field or a literal. Each is a syntax error, never a silent
// mismatch.
package dfilter
