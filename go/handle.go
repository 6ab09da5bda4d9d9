package flakeid

import (
	"errors"
	"runtime"
	"sync"
)

// ErrClosed is returned by the methods of a Generator, a Local, a UUIDGenerator or
// a Sealer after Close.
var ErrClosed = errors.New("flakeid: used after Close")

// handle is the lifecycle that every Go object over a library handle shares
// (Generator, UUIDGenerator, Sealer): the handle, the lock that keeps Close from
// freeing it under a call (calls hold it for reading, Close for writing), and the
// cleanup that frees it when its owner is dropped unclosed.
type handle[P comparable] struct {
	mu      sync.RWMutex
	p       P // the zero value once closed
	cleanup runtime.Cleanup
}

// own makes p owner's handle, freed by free when owner is collected unclosed.
func own[P comparable, O any](owner *O, h *handle[P], p P, free func(P)) {
	h.p = p
	h.cleanup = runtime.AddCleanup(owner, free, p)
}

// call runs f on the open handle, under the read lock; ErrClosed once closed.
func call[P comparable, T any](h *handle[P], f func(P) (T, error)) (T, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var closed P
	if h.p == closed {
		var none T
		return none, ErrClosed
	}
	return f(h.p)
}

// close runs release on the open handle, under the write lock (it waits for calls
// in progress), and marks it closed. Closing twice is a no-op.
func (h *handle[P]) close(release func(P) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var closed P
	if h.p == closed {
		return nil
	}
	err := release(h.p)
	h.p = closed
	return err
}
