package output

import (
	"sync"

	"github.com/ibwire/ibwire/decode"
)

// walkFields calls fn for every field p has, in wire order, with its depth in
// the tree: a protocol has depth 0, a header inside it 1, and so on. open and
// close bracket each protocol or header, so renderers can nest; in a tree
// walk (walker.tree) they also bracket the fields that head a subtree
// (Field.Opens), which open gets with their value.
type fieldVisitor interface {
	open(f *decode.Field, depth int, v *decode.Value)
	close(f *decode.Field, depth int)
	field(f *decode.Field, depth int, v *decode.Value, second bool)
}

// walker keeps the open subtrees between calls so a walk allocates nothing.
type walker struct {
	stack    []*decode.Field
	v        decode.Value
	deferred [4][2]int // subtrees [from, to) walked after InfiniBand's
	// tree makes the walk the -V tree's: fields that head a subtree open
	// one, the tree-only items are visited, and a table's entries are
	// visited entry by entry.
	tree bool
	// occ is the occurrence the field being visited shows.
	occ int
	// at is the index of the field being visited in the registry's wire
	// order, where renderers keep what they found once of each field.
	at int
	// ord is walkOrderOf's, fetched on the walker's first walk (order).
	ord *walkOrder
}

// order returns what the walk needs of the registry's order.
func (w *walker) order() *walkOrder {
	if w.ord == nil {
		w.ord = walkOrderOf()
	}
	return w.ord
}

// walkOrder is what the walk needs of the registry's order.
type walkOrder struct {
	all     []*decode.Field // the registry in wire order
	ends    []int           // decode.SubtreeEnds
	carried []bool          // IP, UDP and TCP: inside a native IB packet, after its IB headers
	afterIB int             // the first field after InfiniBand's (and its MADs')
	eoib    int             // EoIB: a protocol of its own after InfiniBand, though named under it
}

// walkOrderOf finds the walkOrder once, on the first walk of the run:
// the registry is built when first asked for, and a run that walks no
// packet's fields does not build it.
var walkOrderOf = sync.OnceValue(func() *walkOrder {
	all := decode.FieldsInWireOrder()
	o := &walkOrder{all: all, ends: decode.SubtreeEnds()}
	o.carried = make([]bool, len(all))
	o.afterIB, o.eoib = len(all), -1
	for i, f := range all {
		switch f.Name {
		case "ip", "ipv6", "udp", "tcp":
			o.carried[i] = true
		case "infiniband.eoib":
			o.eoib = i
		}
		if f.Protocol() == "infiniband" {
			o.afterIB = i + 1
		}
	}
	return o
})

func (w *walker) walk(p *decode.Packet, vis fieldVisitor) {
	w.stack = w.stack[:0]
	// A native IB packet that carries IP (a raw packet) shows it after the
	// IB headers, as tshark does and as the wire has it: a loop of its own,
	// so that every other packet's loop keeps its few variables in registers.
	if p.HasLRH() && (p.HasIPv4() || p.HasIPv6()) {
		w.walkCarried(p, vis)
	} else {
		w.walkAll(p, vis)
	}
	for len(w.stack) > 0 {
		top := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		vis.close(top, len(w.stack))
	}
}

// walkAll is next over every field, written out: the loop every packet
// but a raw one takes.
func (w *walker) walkAll(p *decode.Packet, vis fieldVisitor) {
	ord := w.order()
	all, ends, eoib := ord.all, ord.ends, ord.eoib
	for i := 0; i < len(all); {
		f := all[i]
		if f.Gated() {
			if j, skip := decode.SkipAbsentGroup(p, i); skip {
				i = j
				continue
			}
		}
		flags := f.TreeFlags()
		switch {
		case flags&decode.TreeOnlyItem != 0 && !w.tree:
			i++
		case f.Get(p, &w.v):
			if flags&(decode.OpensSubtree|decode.TableRow) != 0 || f.Type == decode.FTProtocol || i == eoib {
				i = w.visit(p, vis, i, f, flags)
				break
			}
			for len(w.stack) > 0 && !f.InTreeOf(w.stack[len(w.stack)-1]) {
				top := w.stack[len(w.stack)-1]
				w.stack = w.stack[:len(w.stack)-1]
				vis.close(top, len(w.stack))
			}
			w.at = i
			vis.field(f, len(w.stack), &w.v, false)
			if flags&decode.Repeats != 0 && f.GetSecond(p, &w.v) {
				vis.field(f, len(w.stack), &w.v, true)
			}
			i++
		case f.SubtreeWithout(p):
			i++
		default:
			i = ends[i]
		}
	}
}

// walkCarried walks a raw packet's fields, the IP headers it carries after
// the IB ones.
func (w *walker) walkCarried(p *decode.Packet, vis fieldVisitor) {
	ord := w.order()
	all, ends := ord.all, ord.ends
	carried, nd := true, 0
	for i := 0; i < len(all); {
		if carried && i == ord.afterIB {
			w.walkDeferred(p, vis, nd)
			carried = false
		}
		if carried && ord.carried[i] && nd < len(w.deferred) {
			if j, skip := decode.SkipAbsentGroup(p, i); skip {
				i = j
				continue
			}
			w.deferred[nd] = [2]int{i, ends[i]}
			nd++
			i = ends[i]
			continue
		}
		i = w.next(p, vis, i)
	}
	if carried {
		w.walkDeferred(p, vis, nd)
	}
}

// next visits field i of the walk, or skips its group or its absent
// header, and returns the index of the next field to visit.
func (w *walker) next(p *decode.Packet, vis fieldVisitor, i int) int {
	ord := w.order()
	f := ord.all[i]
	if f.Gated() {
		if j, skip := decode.SkipAbsentGroup(p, i); skip {
			return j
		}
	}
	flags := f.TreeFlags()
	switch {
	case flags&decode.TreeOnlyItem != 0 && !w.tree:
		return i + 1
	case f.Get(p, &w.v):
		if flags&(decode.OpensSubtree|decode.TableRow) != 0 || f.Type == decode.FTProtocol || i == ord.eoib {
			return w.visit(p, vis, i, f, flags)
		}
		// Most fields a packet has are plain "Title: value" lines in the
		// open subtree: visit's work without its call.
		for len(w.stack) > 0 && !f.InTreeOf(w.stack[len(w.stack)-1]) {
			top := w.stack[len(w.stack)-1]
			w.stack = w.stack[:len(w.stack)-1]
			vis.close(top, len(w.stack))
		}
		w.at = i
		vis.field(f, len(w.stack), &w.v, false)
		if flags&decode.Repeats != 0 && f.GetSecond(p, &w.v) {
			vis.field(f, len(w.stack), &w.v, true)
		}
		return i + 1
	case f.SubtreeWithout(p):
		return i + 1
	}
	return ord.ends[i] // a header the packet lacks: none of its fields can be there
}

func (w *walker) walkDeferred(p *decode.Packet, vis fieldVisitor, n int) {
	for _, r := range w.deferred[:n] {
		for j := r[0]; j < r[1]; {
			j = w.step(p, vis, j)
		}
	}
}

// step visits field i and returns the index of the next field to visit.
// Most fields of most packets are absent: that case is decided here, and
// the rest in visit.
func (w *walker) step(p *decode.Packet, vis fieldVisitor, i int) int {
	ord := w.order()
	f := ord.all[i]
	flags := f.TreeFlags()
	if flags&decode.TreeOnlyItem != 0 && !w.tree {
		return i + 1
	}
	if !f.Get(p, &w.v) {
		if f.SubtreeWithout(p) {
			return i + 1
		}
		return ord.ends[i] // a header the packet lacks: none of its fields can be there
	}
	return w.visit(p, vis, i, f, flags)
}

// visit visits field i, which p has (its value in w.v), and returns the
// index of the next field to visit.
func (w *walker) visit(p *decode.Packet, vis fieldVisitor, i int, f *decode.Field, flags decode.TreeFlags) int {
	ord := w.order()
	all := ord.all
	topLevel := i == ord.eoib
	for len(w.stack) > 0 && (topLevel || !f.InTreeOf(w.stack[len(w.stack)-1])) {
		top := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		vis.close(top, len(w.stack))
	}
	depth := len(w.stack)
	w.at = i
	if f.Type == decode.FTProtocol || w.tree && flags&decode.OpensSubtree != 0 {
		vis.open(f, depth, &w.v)
		w.stack = append(w.stack, f)
		return i + 1
	}
	if w.tree && flags&decode.TableRow != 0 {
		return w.tableRows(p, vis, all, i, depth)
	}
	vis.field(f, depth, &w.v, false)
	if flags&decode.Repeats != 0 && f.GetSecond(p, &w.v) {
		vis.field(f, depth, &w.v, true)
	}
	return i + 1
}

// tableRows visits the fields of a table's entry that start at all[i] (those
// that share its Row), entry by entry, and returns the index past them.
func (w *walker) tableRows(p *decode.Packet, vis fieldVisitor, all []*decode.Field, i, depth int) int {
	end := i + 1
	for end < len(all) && all[end].Row() == all[i].Row() {
		end++
	}
	for w.occ = 0; ; w.occ++ {
		any := false
		for j, f := range all[i:end] {
			if f.GetOccurrence(p, w.occ, &w.v) {
				w.at = i + j
				vis.field(f, depth, &w.v, false)
				any = true
			}
		}
		if !any {
			break
		}
	}
	w.occ = 0
	return end
}
