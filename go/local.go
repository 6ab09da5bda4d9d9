package flakeid

import (
	"errors"
	"runtime"
	"sync/atomic"
)

// ErrInUse is returned by a Local's call made while another goroutine's call on the
// same Local is in progress: a Local belongs to one goroutine at a time.
var ErrInUse = errors.New("flakeid: a Local used by two goroutines at once")

// A Local's state: idle, in a call, or closed.
const (
	localIdle int32 = iota
	localBusy
	localClosed
)

// Local is a per-goroutine handle on a Generator (Generator.Local): it issues the
// generator's IDs from runs of slots it reserves, with no atomic operation on the
// generator per ID, under every rule of the generator (the same layout and node id,
// the fork, close and lease checks on every call, the borrow bound, ClockBackwards,
// Stats). No ID repeats one of the generator's or of another handle's; each
// handle's IDs strictly increase.
//
// A Local belongs to one goroutine at a time (a goroutine per worker takes one);
// it may be handed to another goroutine between calls, and the goroutine may move
// between OS threads (the library's handle allows that). A call made while
// another goroutine's call on the same Local is in progress returns ErrInUse and
// issues nothing (one uncontended compare-and-swap on the Local's own state
// guards each call). Close it when done; one that is dropped unclosed is freed by
// the garbage collector.
type Local struct {
	g       *Generator
	p       localHandle
	state   atomic.Int32
	cleanup runtime.Cleanup
}

// localRef is what frees a Local's handle: not the Local itself, so that a
// dropped Local can be collected (and its generator stays reachable until then).
type localRef struct {
	g *Generator
	p localHandle
}

// Local takes a per-goroutine handle (Local) on the generator: for a goroutine
// that issues many IDs. The generator stays usable by every goroutine. After
// Close it is ErrClosed.
func (g *Generator) Local() (*Local, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.p == nil {
		return nil, ErrClosed
	}
	p, err := cLocalNew(g.p)
	if err != nil {
		return nil, err
	}
	g.locals++
	l := &Local{g: g, p: p}
	l.cleanup = runtime.AddCleanup(l, dropLocal, localRef{g, p})
	return l, nil
}

// dropLocal frees a handle, and the generator when it was closed and this was
// its last handle (the handle's free reads the generator: it goes first).
func dropLocal(r localRef) {
	g := r.g
	g.mu.Lock()
	defer g.mu.Unlock()
	cLocalFree(r.p)
	g.locals--
	if g.locals == 0 && g.orphan != nil {
		g.cleanup.Stop()
		cGeneratorFree(g.orphan)
		g.orphan = nil
	}
}

// enter claims the Local for one call, or says why not.
func (l *Local) enter() error {
	if l.state.CompareAndSwap(localIdle, localBusy) {
		return nil
	}
	if l.state.Load() == localClosed {
		return ErrClosed
	}
	return ErrInUse
}

// Next issues one ID: one call into the library, from the handle's run.
func (l *Local) Next() (ID, error) {
	if err := l.enter(); err != nil {
		return 0, err
	}
	id, err := cLocalNextID(l.p)
	l.state.Store(localIdle)
	return id, err
}

// NextN issues n IDs, increasing and above every ID the handle issued before, in
// one call into the library.
func (l *Local) NextN(n int) ([]ID, error) {
	return nextN(n, l.Fill)
}

// Fill writes fresh IDs into every element of ids, increasing and above every ID
// the handle issued before, in one call into the library. On failure ids is
// zeroed: it holds no ID.
func (l *Local) Fill(ids []ID) error {
	if err := l.enter(); err != nil {
		return err
	}
	err := cLocalNextIDs(l.p, ids)
	l.state.Store(localIdle)
	return err
}

// Generator is the generator the handle issues for.
func (l *Local) Generator() *Generator { return l.g }

// Close frees the handle (its unused slots stop counting in Stats). It waits for
// a call in progress; later calls return ErrClosed. Closing twice is a no-op.
func (l *Local) Close() error {
	for !l.state.CompareAndSwap(localIdle, localClosed) {
		if l.state.Load() == localClosed {
			return nil
		}
		runtime.Gosched() // another goroutine's call is in progress
	}
	l.cleanup.Stop()
	dropLocal(localRef{l.g, l.p})
	return nil
}
