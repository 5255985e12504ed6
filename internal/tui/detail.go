package tui

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
	"github.com/ibwire/ibwire/internal/output"
)

// detail is the selected packet: the frame, and its tree lines, each with
// the bytes its field was decoded from.
type detail struct {
	frame int
	in    decode.Input // the frame, its bytes copied
	nodes []output.TreeNode
	tree  []*tview.TreeNode
}

// filterValue is how the selected field goes into a filter: field ==
// value when that compiles, else the field alone (a presence test).
func filterValue(f *decode.Field, p *decode.Packet) string {
	var v decode.Value
	if f.Type == decode.FTProtocol || !f.Get(p, &v) {
		return ""
	}
	s := f.String(&v)
	if f.Type == decode.FTBool {
		s = "0"
		if v.U != 0 {
			s = "1"
		}
	}
	for _, lit := range []string{s, fmt.Sprintf("%q", s)} {
		if _, err := dfilter.Compile(f.Name + " == " + lit); err == nil {
			return lit
		}
	}
	return ""
}

// newDetail builds the detail of packet p, numbered frame, and its tree
// under root: the lines and their bytes as output places them.
func newDetail(frame int, p *decode.Packet) (d *detail, root *tview.TreeNode) {
	d = &detail{frame: frame, in: p.Input, nodes: output.TreeNodes(p)}
	d.in.Data = append([]byte(nil), p.Data...)
	root = tview.NewTreeNode(fmt.Sprintf("Frame %d", frame))
	stack := []*tview.TreeNode{root}
	d.tree = make([]*tview.TreeNode, len(d.nodes))
	for i, n := range d.nodes {
		tn := tview.NewTreeNode(n.Text).SetReference(i).SetSelectable(true)
		for len(stack) > n.Depth+1 {
			stack = stack[:len(stack)-1]
		}
		stack[len(stack)-1].AddChild(tn)
		stack = append(stack, tn)
		d.tree[i] = tn
	}
	return d, root
}

// showPacket decodes frame and fills the tree and the hex pane.
func (u *UI) showPacket(frame int) {
	p, err := u.rd.packet(frame)
	if err != nil {
		u.note(fmt.Sprintf("frame %d: %v", frame, err))
		return
	}
	d, root := newDetail(frame, p)
	// The layers open as Wireshark users expect: the InfiniBand part
	// (and its analysis) open, the lower layers closed; without one, the
	// top layer open. A protocol the user opened or closed stays so.
	top := -1
	for i, n := range d.nodes {
		if n.Depth == 0 && n.Field.Name == "infiniband" {
			top = i
			break
		}
		if n.Depth == 0 && n.Field.Name != "ibwire" {
			top = i
		}
	}
	for i, n := range d.nodes {
		if n.Depth != 0 {
			continue
		}
		open, chosen := u.treeOpen[n.Field.Name]
		if !chosen {
			open = i == top || n.Field.Name == "ibwire"
		}
		d.tree[i].SetExpanded(open)
	}
	// Keep the field the user chose selected from packet to packet; else
	// the opened layer's line.
	u.detail = d
	u.tree.SetRoot(root).SetTopLevel(1)
	sel := max(top, 0)
	for i, n := range d.nodes {
		if u.treeKeep != nil && n.Field == u.treeKeep {
			sel = i
			break
		}
	}
	if len(d.tree) > 0 {
		u.tree.SetCurrentNode(d.tree[sel])
		u.treeStart = d.tree[sel]
		u.treeSelected(d.tree[sel])
	}
	u.hex.setData(d.in.Data)
}

// currentNode is the index of the selected tree line, -1 when none.
func (u *UI) currentNode() int {
	n := u.tree.GetCurrentNode()
	if n == nil {
		return -1
	}
	i, ok := n.GetReference().(int)
	if !ok || u.detail == nil || i >= len(u.detail.nodes) {
		return -1
	}
	return i
}

// treeSelected highlights the selected field's bytes in the hex pane.
func (u *UI) treeSelected(n *tview.TreeNode) {
	i := u.currentNode()
	if i < 0 {
		u.hex.setSpan(output.Span{})
		return
	}
	s := u.detail.nodes[i].Span
	u.hex.setSpan(s)
	if !s.Empty() && !s.Has(u.hex.cursor) {
		u.hex.cursor = s.Lo
	}
}

// selectByte selects the most specific field made of byte b: the reverse
// of the highlight. On a tie the first line wins: the header field
// before the values derived from it.
func (u *UI) selectByte(b int) {
	if u.detail == nil {
		return
	}
	best := -1
	for i, n := range u.detail.nodes {
		if n.Span.Has(b) && (best < 0 || n.Span.Len() < u.detail.nodes[best].Span.Len()) {
			best = i
		}
	}
	if best >= 0 {
		// Open the layers the field is in, as Wireshark does.
		for _, n := range u.tree.GetPath(u.detail.tree[best]) {
			n.SetExpanded(true)
		}
		u.tree.SetCurrentNode(u.detail.tree[best])
		u.hex.setSpan(u.detail.nodes[best].Span)
		u.treeKeep = u.detail.nodes[best].Field
	}
}

func (u *UI) moveTree(d int) {
	if u.detail == nil || len(u.detail.tree) == 0 {
		return
	}
	// Walk the visible lines.
	var visible []*tview.TreeNode
	u.tree.GetRoot().Walk(func(n, parent *tview.TreeNode) bool {
		if parent != nil {
			visible = append(visible, n)
		}
		return n.IsExpanded()
	})
	cur := u.tree.GetCurrentNode()
	at := 0
	for i, n := range visible {
		if n == cur {
			at = i
		}
	}
	at = min(max(at+d, 0), len(visible)-1)
	u.tree.SetCurrentNode(visible[at])
	u.treeSelected(visible[at])
	u.treeChose()
}

// treeChose remembers the field the user selected, for the next packets.
func (u *UI) treeChose() {
	if i := u.currentNode(); i >= 0 {
		u.treeKeep = u.detail.nodes[i].Field
	}
}

func (u *UI) expandTree(open bool) {
	if n := u.tree.GetCurrentNode(); n != nil {
		u.setExpanded(n, open)
	}
}

func (u *UI) toggleTree() {
	if n := u.tree.GetCurrentNode(); n != nil {
		u.setExpanded(n, !n.IsExpanded())
	}
}

// setExpanded opens or closes n; for a protocol, the next packets' trees
// open or close it too.
func (u *UI) setExpanded(n *tview.TreeNode, open bool) {
	n.SetExpanded(open)
	if i := u.currentNode(); i >= 0 && u.detail.tree[i] == n && u.detail.nodes[i].Depth == 0 {
		u.treeOpen[u.detail.nodes[i].Field.Name] = open
	}
}

// applyField makes a filter from the selected field: op "" replaces the
// filter, "&&" adds to it, "!" excludes the value.
func (u *UI) applyField(op string) {
	i := u.currentNode()
	if i < 0 {
		return
	}
	name := u.detail.nodes[i].Field.Name
	expr := name
	// The value is made when asked, from the frame shown: a filter literal
	// of a long payload costs more than the rest of the tree.
	p := decode.NewDecoder(u.m.options).Decode(u.detail.in)
	if v := filterValue(u.detail.nodes[i].Field, p); v != "" {
		expr = name + " == " + v
	}
	if op == "!" {
		expr = "!(" + expr + ")"
	}
	cur := strings.TrimSpace(u.m.Status().Filter)
	if op == "&&" && cur != "" {
		expr = "(" + cur + ") && " + expr
	}
	u.applyFilter(expr)
}

// hexView is the bytes pane: 16 bytes a line with offsets and ASCII, the
// selected field's bytes highlighted and a byte cursor that selects fields.
type hexView struct {
	*tview.Box
	u      *UI
	data   []byte
	span   output.Span
	cursor int
	top    int // first line shown
}

func newHexView(u *UI) *hexView {
	return &hexView{Box: tview.NewBox(), u: u}
}

func (h *hexView) setData(b []byte) {
	h.data, h.top = b, 0
	h.cursor = min(h.cursor, max(len(b)-1, 0))
}

func (h *hexView) setSpan(s output.Span) {
	h.span = s
	if !s.Empty() {
		h.scrollTo(s.Lo)
	}
}

func (h *hexView) scrollTo(b int) {
	_, _, _, height := h.GetInnerRect()
	line := b / 16
	if line < h.top {
		h.top = line
	} else if height > 0 && line >= h.top+height {
		h.top = line - height + 1
	}
}

func (u *UI) moveHex(d int) {
	h := u.hex
	if len(h.data) == 0 {
		return
	}
	h.cursor = min(max(h.cursor+d, 0), len(h.data)-1)
	h.scrollTo(h.cursor)
	u.selectByte(h.cursor)
}

// Draw draws the dump: "0000  45 00 ...  E...".
func (h *hexView) Draw(screen tcell.Screen) {
	h.Box.DrawForSubclass(screen, h)
	x, y, w, height := h.GetInnerRect()
	t := &h.u.theme
	focused := h.HasFocus()
	for line := 0; line < height; line++ {
		off := (h.top + line) * 16
		if off >= len(h.data) {
			break
		}
		tview.Print(screen, fmt.Sprintf("%04x", off), x, y+line, 4, tview.AlignLeft, tcell.ColorDefault)
		for i := 0; i < 16 && off+i < len(h.data); i++ {
			b := h.data[off+i]
			st := t.normal
			if h.span.Has(off + i) {
				st = t.highlight
			}
			if focused && off+i == h.cursor {
				st = t.cursor
			}
			hx := x + 6 + i*3 + i/8
			if hx+2 <= x+w {
				screen.SetContent(hx, y+line, hexDigit(b>>4), nil, st)
				screen.SetContent(hx+1, y+line, hexDigit(b&0xF), nil, st)
			}
			ax := x + 6 + 16*3 + 2 + i
			if ax < x+w {
				c := rune(b)
				if b < 0x20 || b > 0x7E {
					c = '.'
				}
				screen.SetContent(ax, y+line, c, nil, st)
			}
		}
	}
}

func hexDigit(b byte) rune { return rune("0123456789abcdef"[b&0xF]) }

// MouseHandler selects the byte clicked, and with it its field.
func (h *hexView) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (consumed bool, capture tview.Primitive) {
	return h.WrapMouseHandler(func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		mx, my := event.Position()
		if !h.InRect(mx, my) {
			return false, nil
		}
		switch action {
		case tview.MouseLeftClick:
			setFocus(h)
			h.u.pane = paneHex
			x, y, _, _ := h.GetInnerRect()
			col, line := mx-x, my-y
			i := -1
			switch {
			case col >= 6 && col < 6+16*3+1:
				c := col - 6
				if c >= 8*3+1 {
					c--
				}
				i = c / 3
			case col >= 6+16*3+2 && col < 6+16*3+2+16:
				i = col - (6 + 16*3 + 2)
			}
			if b := (h.top+line)*16 + i; i >= 0 && i < 16 && b < len(h.data) {
				h.cursor = b
				h.u.selectByte(b)
			}
			return true, nil
		case tview.MouseScrollUp:
			h.top = max(h.top-1, 0)
			return true, nil
		case tview.MouseScrollDown:
			if (h.top+1)*16 < len(h.data) {
				h.top++
			}
			return true, nil
		}
		return false, nil
	})
}
