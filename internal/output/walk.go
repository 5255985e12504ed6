package output

import "github.com/ibwire/ibwire/decode"

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
	stack []*decode.Field
	v     decode.Value
	// tree makes the walk the -V tree's: fields that head a subtree open
	// one, the tree-only items are visited, and a table's entries are
	// visited entry by entry.
	tree bool
	// occ is the occurrence the field being visited shows.
	occ int
}

func (w *walker) walk(p *decode.Packet, vis fieldVisitor) {
	w.stack = w.stack[:0]
	all, ends := decode.FieldsInWireOrder(), decode.SubtreeEnds()
	for i := 0; i < len(all); i++ {
		f := all[i]
		flags := f.TreeFlags()
		if flags&decode.TreeOnlyItem != 0 && !w.tree {
			continue
		}
		if !f.Get(p, &w.v) {
			if !f.SubtreeWithout(p) {
				i = ends[i] - 1 // a header the packet lacks: none of its fields can be there
			}
			continue
		}
		for len(w.stack) > 0 && !f.InTreeOf(w.stack[len(w.stack)-1]) {
			top := w.stack[len(w.stack)-1]
			w.stack = w.stack[:len(w.stack)-1]
			vis.close(top, len(w.stack))
		}
		depth := len(w.stack)
		if f.Type == decode.FTProtocol || w.tree && flags&decode.OpensSubtree != 0 {
			vis.open(f, depth, &w.v)
			w.stack = append(w.stack, f)
			continue
		}
		if w.tree && flags&decode.TableRow != 0 {
			i = w.tableRows(p, vis, all, i, depth) - 1
			continue
		}
		vis.field(f, depth, &w.v, false)
		if f.GetSecond(p, &w.v) {
			vis.field(f, depth, &w.v, true)
		}
	}
	for len(w.stack) > 0 {
		top := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		vis.close(top, len(w.stack))
	}
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
		for _, f := range all[i:end] {
			if f.GetOccurrence(p, w.occ, &w.v) {
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
