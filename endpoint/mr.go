package endpoint

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"unsafe"
)

// PD is a protection domain: memory regions and QPs of one PD only ever
// see each other.
type PD struct {
	dev *Device
}

// MR is a memory region: a Go byte slice registered for access by the
// transport. Its virtual address (Addr) is the slice's address in memory,
// as ibv_reg_mr uses the buffer pointer, so an 8-byte aligned VA is an
// 8-byte aligned word that sync/atomic can operate on.
//
// Atomics: remote CMP_SWAP and FETCH_ADD operate on the native-endian
// uint64 at the VA with sync/atomic, so they are atomic against each other
// (from any number of QPs) and against local code that uses the MR's
// CompareAndSwapUint64, AddUint64 and LoadUint64 on the same word. Plain
// reads and writes of Bytes() from local code while remote operations run
// are the application's race, as with verbs.
type MR struct {
	pd     *PD
	buf    []byte
	va     uint64
	lkey   uint32
	rkey   uint32
	access Access
	valid  atomic.Bool
}

// keyRand makes lkeys and rkeys unpredictable to a peer: a ChaCha8 stream
// seeded from crypto/rand.
type keyRand struct {
	mu  sync.Mutex
	rng *rand.ChaCha8
}

func newKeyRand() *keyRand {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		// crypto/rand never fails on supported platforms (Go 1.24+ it
		// crashes instead of returning an error); keep a fallback anyway.
		binary.LittleEndian.PutUint64(seed[:], rand.Uint64())
	}
	return &keyRand{rng: rand.NewChaCha8(seed)}
}

func (k *keyRand) next() uint32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	for {
		if v := uint32(k.rng.Uint64()); v != 0 {
			return v
		}
	}
}

// AllocPD allocates a protection domain.
func (d *Device) AllocPD() *PD { return &PD{dev: d} }

// RegMR registers buf with the access rights given. Remote write and remote
// atomic need local write, as in verbs.
func (pd *PD) RegMR(buf []byte, access Access) (*MR, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("register memory region: empty buffer: %w", ErrInvalidMR)
	}
	if access&(AccessRemoteWrite|AccessRemoteAtomic) != 0 && access&AccessLocalWrite == 0 {
		return nil, fmt.Errorf("register memory region: %s needs LOCAL_WRITE: %w", access, ErrInvalidMR)
	}
	mr := &MR{pd: pd, buf: buf, va: uint64(uintptr(unsafe.Pointer(&buf[0]))), access: access}
	d := pd.dev
	d.mrMu.Lock()
	defer d.mrMu.Unlock()
	for {
		mr.lkey = d.keys.next()
		if _, dup := d.mrByLKey[mr.lkey]; !dup {
			break
		}
	}
	for {
		mr.rkey = d.keys.next()
		if _, dup := d.mrByRKey[mr.rkey]; !dup {
			break
		}
	}
	mr.valid.Store(true)
	d.mrByLKey[mr.lkey] = mr
	d.mrByRKey[mr.rkey] = mr
	return mr, nil
}

// Dereg deregisters the region: its keys stop working at once.
func (mr *MR) Dereg() error {
	d := mr.pd.dev
	d.mrMu.Lock()
	defer d.mrMu.Unlock()
	if d.mrByLKey[mr.lkey] != mr {
		return fmt.Errorf("deregister memory region lkey %#x: %w", mr.lkey, ErrInvalidMR)
	}
	mr.valid.Store(false)
	delete(d.mrByLKey, mr.lkey)
	delete(d.mrByRKey, mr.rkey)
	return nil
}

// LKey is the local key, for SGEs.
func (mr *MR) LKey() uint32 { return mr.lkey }

// RKey is the remote key a peer puts in RETH/AtomicETH.
func (mr *MR) RKey() uint32 { return mr.rkey }

// Addr is the virtual address of the region's first byte.
func (mr *MR) Addr() uint64 { return mr.va }

// Len is the region's length in bytes.
func (mr *MR) Len() int { return len(mr.buf) }

// Bytes is the registered slice.
func (mr *MR) Bytes() []byte { return mr.buf }

// Access returns the region's access rights.
func (mr *MR) Access() Access { return mr.access }

// SGE returns the scatter/gather element for length bytes at offset off.
func (mr *MR) SGE(off, length int) SGE {
	return SGE{Addr: mr.va + uint64(off), Length: uint32(length), LKey: mr.lkey}
}

// Invalidated reports whether a SEND with invalidate revoked the rkey.
func (mr *MR) Invalidated() bool { return !mr.valid.Load() }

// slice returns the region's bytes [va, va+n) when they lie inside it.
func (mr *MR) slice(va uint64, n uint64) ([]byte, bool) {
	if va < mr.va {
		return nil, false
	}
	off := va - mr.va
	if off > uint64(len(mr.buf)) || n > uint64(len(mr.buf))-off {
		return nil, false
	}
	return mr.buf[off : off+n], true
}

// word returns the aligned 8-byte word at offset off as a *uint64 for
// sync/atomic. The caller checked the range and the alignment of the VA,
// which is the memory address.
func (mr *MR) word(off uint64) *uint64 {
	return (*uint64)(unsafe.Pointer(&mr.buf[off]))
}

func (mr *MR) localWord(off int) *uint64 {
	if off < 0 || off+8 > len(mr.buf) || (mr.va+uint64(off))%8 != 0 {
		panic(fmt.Sprintf("endpoint: MR word at offset %d is outside the region or not 8-byte aligned", off))
	}
	return mr.word(uint64(off))
}

// LoadUint64 atomically loads the native-endian word at offset off (which
// must be 8-byte aligned in memory), consistently with remote atomics.
func (mr *MR) LoadUint64(off int) uint64 { return atomic.LoadUint64(mr.localWord(off)) }

// StoreUint64 atomically stores the word at offset off.
func (mr *MR) StoreUint64(off int, v uint64) { atomic.StoreUint64(mr.localWord(off), v) }

// AddUint64 atomically adds delta to the word at offset off and returns the
// new value.
func (mr *MR) AddUint64(off int, delta uint64) uint64 {
	return atomic.AddUint64(mr.localWord(off), delta)
}

// CompareAndSwapUint64 atomically swaps the word at offset off.
func (mr *MR) CompareAndSwapUint64(off int, old, new uint64) bool {
	return atomic.CompareAndSwapUint64(mr.localWord(off), old, new)
}

// lookupLKey finds a local region by lkey.
func (d *Device) lookupLKey(lkey uint32) *MR {
	d.mrMu.RLock()
	mr := d.mrByLKey[lkey]
	d.mrMu.RUnlock()
	return mr
}

// lookupRKey finds a region by rkey, only when it belongs to pd and has not
// been invalidated.
func (d *Device) lookupRKey(pd *PD, rkey uint32) *MR {
	d.mrMu.RLock()
	mr := d.mrByRKey[rkey]
	d.mrMu.RUnlock()
	if mr == nil || mr.pd != pd || !mr.valid.Load() {
		return nil
	}
	return mr
}

// invalidateRKey revokes an rkey of pd (SEND with invalidate).
func (d *Device) invalidateRKey(pd *PD, rkey uint32) bool {
	mr := d.lookupRKey(pd, rkey)
	if mr == nil {
		return false
	}
	mr.valid.Store(false)
	return true
}

// checkSGL validates SGEs against their regions without resolving them.
func (d *Device) checkSGL(pd *PD, sges []SGE, write bool) error {
	for i, s := range sges {
		mr := d.lookupLKey(s.LKey)
		if mr == nil || mr.pd != pd {
			return fmt.Errorf("sge %d lkey %#x: %w", i, s.LKey, ErrInvalidKey)
		}
		if write && mr.access&AccessLocalWrite == 0 {
			return fmt.Errorf("sge %d lkey %#x: region lacks LOCAL_WRITE: %w", i, s.LKey, ErrInvalidKey)
		}
		if _, ok := mr.slice(s.Addr, uint64(s.Length)); !ok {
			return fmt.Errorf("sge %d [%#x, +%d) outside region lkey %#x: %w", i, s.Addr, s.Length, s.LKey, ErrInvalidKey)
		}
	}
	return nil
}

// sgl is a resolved scatter/gather list: the byte slices the SGEs name.
// resolveSGL checks every SGE against its MR (lkey, range, local write
// when the HCA writes into it).
func (d *Device) resolveSGL(pd *PD, sges []SGE, write bool, dst [][]byte) ([][]byte, uint64, error) {
	var total uint64
	for i, s := range sges {
		mr := d.lookupLKey(s.LKey)
		if mr == nil || mr.pd != pd {
			return dst, 0, fmt.Errorf("sge %d lkey %#x: %w", i, s.LKey, ErrInvalidKey)
		}
		if write && mr.access&AccessLocalWrite == 0 {
			return dst, 0, fmt.Errorf("sge %d lkey %#x: region lacks LOCAL_WRITE: %w", i, s.LKey, ErrInvalidKey)
		}
		b, ok := mr.slice(s.Addr, uint64(s.Length))
		if !ok {
			return dst, 0, fmt.Errorf("sge %d [%#x, +%d) outside region lkey %#x: %w", i, s.Addr, s.Length, s.LKey, ErrInvalidKey)
		}
		dst = append(dst, b)
		total += uint64(s.Length)
	}
	return dst, total, nil
}

// gather copies len(dst) bytes starting at offset off of the SGL into dst.
func gather(sgl [][]byte, off int, dst []byte) {
	for _, b := range sgl {
		if off >= len(b) {
			off -= len(b)
			continue
		}
		n := copy(dst, b[off:])
		dst = dst[n:]
		off = 0
		if len(dst) == 0 {
			return
		}
	}
}

// scatter copies src into the SGL starting at offset off and reports
// whether it fitted.
func scatter(sgl [][]byte, off int, src []byte) bool {
	for _, b := range sgl {
		if len(src) == 0 {
			return true
		}
		if off >= len(b) {
			off -= len(b)
			continue
		}
		n := copy(b[off:], src)
		src = src[n:]
		off = 0
	}
	return len(src) == 0
}
