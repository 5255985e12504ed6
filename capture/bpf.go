package capture

import (
	"fmt"

	"golang.org/x/net/bpf"

	"github.com/ibwire/ibwire/layers"
)

// asm assembles a classic BPF program whose jumps name labels, because
// hand-counted skip offsets break silently when an instruction is added.
type asm struct {
	ins    []bpf.Instruction
	labels map[string]int
	jumps  map[int][2]string // JumpIf index → true and false labels ("" falls through)
}

func (a *asm) op(i bpf.Instruction)      { a.ins = append(a.ins, i) }
func (a *asm) label(name string)         { a.labels[name] = len(a.ins) }
func (a *asm) jeq(v uint32, t, f string) { a.jump(bpf.JumpIf{Cond: bpf.JumpEqual, Val: v}, t, f) }

func (a *asm) jump(j bpf.JumpIf, t, f string) {
	a.jumps[len(a.ins)] = [2]string{t, f}
	a.op(j)
}

func (a *asm) assemble() []bpf.RawInstruction {
	for at, to := range a.jumps {
		j := a.ins[at].(bpf.JumpIf)
		if to[0] != "" {
			j.SkipTrue = uint8(a.labels[to[0]] - at - 1)
		}
		if to[1] != "" {
			j.SkipFalse = uint8(a.labels[to[1]] - at - 1)
		}
		a.ins[at] = j
	}
	raw, err := bpf.Assemble(a.ins)
	if err != nil {
		panic("capture: built-in BPF program does not assemble: " + err.Error())
	}
	return raw
}

// roceProgram is assembled once; the kernel and the VM run the same bytes.
var roceProgram = func() []bpf.RawInstruction {
	a := &asm{labels: map[string]int{}, jumps: map[int][2]string{}}
	a.op(bpf.LoadAbsolute{Off: 12, Size: 2}) // ethertype
	a.jeq(uint32(layers.EthernetTypeRoCEv1), "accept", "")
	a.jeq(0x0800, "ip4-0", "")
	a.jeq(0x86dd, "ip6-0", "")
	a.jeq(0x8100, "", "reject")
	a.op(bpf.LoadAbsolute{Off: 16, Size: 2}) // ethertype after one 802.1Q tag
	a.jeq(uint32(layers.EthernetTypeRoCEv1), "accept", "")
	a.jeq(0x0800, "ip4-4", "")
	a.jeq(0x86dd, "ip6-4", "reject")
	for _, vlan := range []uint32{0, 4} {
		l := 14 + vlan // start of the network header
		a.label(fmt.Sprintf("ip4-%d", vlan))
		a.op(bpf.LoadAbsolute{Off: l + 9, Size: 1}) // protocol
		a.jeq(17, "", "reject")
		a.op(bpf.LoadAbsolute{Off: l + 6, Size: 2}) // a later fragment has no UDP header
		a.jump(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1fff}, "reject", "")
		a.op(bpf.LoadMemShift{Off: l}) // X = IHL*4
		a.op(bpf.LoadIndirect{Off: l, Size: 2})
		a.jeq(layers.RoCEv2Port, "accept", "")
		a.op(bpf.LoadIndirect{Off: l + 2, Size: 2})
		a.jeq(layers.RoCEv2Port, "accept", "reject")
		a.label(fmt.Sprintf("ip6-%d", vlan))
		a.op(bpf.LoadAbsolute{Off: l + 6, Size: 1}) // next header; extension headers are not walked
		a.jeq(17, "", "reject")
		a.op(bpf.LoadAbsolute{Off: l + 40, Size: 2})
		a.jeq(layers.RoCEv2Port, "accept", "")
		a.op(bpf.LoadAbsolute{Off: l + 42, Size: 2})
		a.jeq(layers.RoCEv2Port, "accept", "reject")
	}
	a.label("accept")
	a.op(bpf.RetConstant{Val: MaxCaplen})
	a.label("reject")
	a.op(bpf.RetConstant{Val: 0})
	return a.assemble()
}()

// RoCEFilter returns the built-in capture filter for Ethernet frames: RoCEv2
// (UDP source or destination port 4791 over IPv4 or IPv6) and RoCEv1
// (ethertype 0x8915), untagged or under one 802.1Q tag. It keeps whole
// frames (up to MaxCaplen). On a live socket the kernel has usually
// stripped the VLAN tag before the filter runs, and the untagged branch
// matches; files keep the tag, and the tagged branch matches. The result
// is a fresh copy.
func RoCEFilter() []bpf.RawInstruction {
	return append([]bpf.RawInstruction(nil), roceProgram...)
}

// Filter runs a classic BPF program over frames in user space.
type Filter struct{ vm *bpf.VM }

// NewFilter prepares prog to run in x/net/bpf's VM, which rejects programs
// the kernel would also reject (bad jumps, no final return).
func NewFilter(prog []bpf.RawInstruction) (*Filter, error) {
	ins, ok := bpf.Disassemble(prog)
	if !ok {
		return nil, fmt.Errorf("capture: bpf program has instructions the VM cannot run")
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	return &Filter{vm: vm}, nil
}

// Match reports whether the program keeps frame (returns non-zero). It
// is safe for concurrent use.
func (f *Filter) Match(frame []byte) bool {
	n, err := f.vm.Run(frame)
	return err == nil && n > 0
}

var roceFilter = func() *Filter {
	f, err := NewFilter(roceProgram)
	if err != nil {
		panic("capture: built-in BPF program rejected by the VM: " + err.Error())
	}
	return f
}()

// MatchRoCE runs RoCEFilter over an Ethernet frame, so -r applies exactly
// the filter a live capture attaches. Other link types need their own
// offsets; it answers false for frames too short to hold the headers.
func MatchRoCE(frame []byte) bool { return roceFilter.Match(frame) }
