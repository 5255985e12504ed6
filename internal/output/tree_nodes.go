package output

import "github.com/ibwire/ibwire/decode"

// TreeNode is one line of the -V tree together with the field it shows and
// the frame bytes it came from, for viewers that keep the tree's structure
// (ibtui's detail pane) rather than print it.
type TreeNode struct {
	Depth int           // 0 for a protocol, 1 for what it holds, ...
	Text  string        // the line as -V prints it, without indentation
	Field *decode.Field // the protocol or field the line shows
	// Span is the frame bytes the line shows: a field's bytes as its
	// header's field table places them (a bit field: the bytes that hold
	// it), a protocol's or header's bytes and those of all it holds. Empty
	// for what the frame's bytes do not hold (the frame's metadata, values
	// the decoder computes, the analysis).
	Span Span
}

// TreeNodes returns the lines of p's -V tree in order, each with its depth,
// field and bytes: the same text Tree.Append prints. Only this structured
// tree places the bytes; the text tree does not pay for them.
func TreeNodes(p *decode.Packet) []TreeNode {
	// Room for any line (a byte field shows at most treeBytesMax bytes),
	// so the cost of a tree is its lines', whatever the frame's size.
	n := &nodeCollector{p: p, opened: make([]int, 0, 8)}
	n.t.buf = make([]byte, 0, 256)
	n.w.tree = true
	n.w.walk(p, n)
	return n.nodes
}

type nodeCollector struct {
	p      *decode.Packet
	nodes  []TreeNode
	opened []int // the open protocols' lines
	t      Tree  // formats a field's line as -V does
	w      walker
}

func (n *nodeCollector) open(f *decode.Field, depth int, v *decode.Value) {
	n.opened = append(n.opened, len(n.nodes))
	if f.Type != decode.FTProtocol { // a field heading a subtree
		n.field(f, depth, v, false)
		return
	}
	text, ok := f.AppendLabel(nil, n.p, v)
	if !ok {
		text = appendProtocolTitle(nil, f, n.p)
	}
	n.nodes = append(n.nodes, TreeNode{Depth: depth, Text: string(text), Field: f, Span: protocolSpan(n.p, f)})
}

// close widens the protocol's span to hold what it holds.
func (n *nodeCollector) close(*decode.Field, int) {
	i := n.opened[len(n.opened)-1]
	n.opened = n.opened[:len(n.opened)-1]
	for j := i + 1; j < len(n.nodes); j++ {
		n.nodes[i].Span = n.nodes[i].Span.Union(n.nodes[j].Span)
	}
}

func (n *nodeCollector) field(f *decode.Field, depth int, v *decode.Value, second bool) {
	if second {
		return
	}
	span := fieldSpanAt(n.p, f, v, n.w.occ)
	n.t.buf, n.t.p, n.t.skip, n.t.w.occ, n.t.w.at = n.t.buf[:0], n.p, -1, n.w.occ, n.w.at
	n.t.field(f, 0, v, false)
	text := n.t.buf
	if len(text) > 0 && text[len(text)-1] == '\n' {
		text = text[:len(text)-1]
	}
	n.nodes = append(n.nodes, TreeNode{Depth: depth, Text: string(text), Field: f, Span: span})
}
