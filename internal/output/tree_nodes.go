package output

import "github.com/ibwire/ibwire/decode"

// TreeNode is one line of the -V tree together with the field it shows, for
// viewers that keep the tree's structure (ibtui's detail pane) rather than
// print it.
type TreeNode struct {
	Depth int           // 0 for a protocol, 1 for what it holds, ...
	Text  string        // the line as -V prints it, without indentation
	Field *decode.Field // the protocol or field the line shows
}

// TreeNodes returns the lines of p's -V tree in order, each with its depth
// and field: the same text Tree.Append prints.
func TreeNodes(p *decode.Packet) []TreeNode {
	n := nodeCollector{p: p}
	var w walker
	w.walk(p, &n)
	return n.nodes
}

type nodeCollector struct {
	p     *decode.Packet
	nodes []TreeNode
	t     Tree // formats a field's line as -V does
}

func (n *nodeCollector) open(f *decode.Field, depth int) {
	n.nodes = append(n.nodes, TreeNode{Depth: depth, Text: string(appendProtocolTitle(nil, f, n.p)), Field: f})
}

func (n *nodeCollector) close(*decode.Field, int) {}

func (n *nodeCollector) field(f *decode.Field, depth int, v *decode.Value, second bool) {
	if second {
		return
	}
	n.t.buf, n.t.p, n.t.skip = n.t.buf[:0], n.p, -1
	n.t.field(f, 0, v, false)
	text := n.t.buf
	if len(text) > 0 && text[len(text)-1] == '\n' {
		text = text[:len(text)-1]
	}
	n.nodes = append(n.nodes, TreeNode{Depth: depth, Text: string(text), Field: f})
}
