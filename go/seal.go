package flakeid

import (
	"strconv"
)

// SealerOptions configure a Sealer.
type SealerOptions struct {
	// Layout is the layout of the IDs sealed (zero: Snowflake). A sealed ID has
	// the layout's total bits, like the ID: 63 for Snowflake, so it stays a
	// non-negative int64. Layouts of fewer than 20 bits are refused.
	Layout Layout
	// Tweak seals the same IDs differently under one key (for example one tweak
	// per table). Empty by default.
	Tweak []byte
}

// Sealer maps IDs to sealed IDs and back with a key: FF1 (NIST SP 800-38G) with
// AES over the layout's bits, the same construction in every binding
// (docs/sealing.md). A sealed ID hides when, where and how busily its ID was made;
// it is deterministic, unordered and not authenticated.
//
// A Sealer is safe for any number of goroutines. Close wipes its copy of the key;
// one that is dropped unclosed is freed (and wiped) by the garbage collector. The
// key never appears in an error or in String.
type Sealer struct {
	handle[sealHandle]
	bits uint32
}

// NewSealer makes a sealer from a key of 16, 24 or 32 bytes (AES-128, -192 or
// -256). The library keeps its own copy: the caller may wipe key afterwards. A key
// of another length is ErrConfig naming "key"; a layout under 20 bits, naming
// "layout".
func NewSealer(key []byte, o SealerOptions) (*Sealer, error) {
	p, err := cSealerNew(key, o.Layout, o.Tweak)
	if err != nil {
		return nil, err
	}
	s := &Sealer{bits: o.Layout.orDefault().limits.TotalBits}
	own(s, &s.handle, p, cSealerFree)
	return s, nil
}

// Seal maps id (in [0, 2^Bits)) to its sealed ID, in the same range. An id out of
// range is ErrConfig naming "id".
func (s *Sealer) Seal(id ID) (ID, error) { return s.call(cSeal, id) }

// Unseal is Seal's inverse. Every number in range unseals to some ID: sealing
// does not authenticate.
func (s *Sealer) Unseal(id ID) (ID, error) { return s.call(cUnseal, id) }

// call runs f under the read lock that keeps Close from freeing the sealer.
func (s *Sealer) call(f func(sealHandle, ID) (ID, error), id ID) (ID, error) {
	return call(&s.handle, func(p sealHandle) (ID, error) { return f(p, id) })
}

// Bits is the width of the IDs sealed: the layout's total bits.
func (s *Sealer) Bits() uint32 { return s.bits }

// String describes the sealer without its key.
func (s *Sealer) String() string {
	return "flakeid.Sealer{bits: " + strconv.FormatUint(uint64(s.bits), 10) + "}"
}

// Close wipes and frees the sealer's key. It waits for calls in progress; later
// calls return ErrClosed. Closing twice is a no-op.
func (s *Sealer) Close() error {
	return s.close(func(p sealHandle) error {
		s.cleanup.Stop()
		cSealerFree(p)
		return nil
	})
}
