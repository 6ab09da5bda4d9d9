package flakeid

// #include "flakeid.h"
import "C"

import "fmt"

// Kind is what went wrong, without the details: the engine's error kind, with the
// C library's stable status number (bindings/c/README.md). Each Kind is an error
// itself, so errors.Is(err, flakeid.ErrConfig) matches every configuration error.
type Kind uint32

// One Kind per engine error kind (ErrorKind in crates/flakeid-core/src/error.rs),
// plus ErrInternal for the C layer's own failures, which mean a bug in flakeid.
// TestKindsAreExhaustive fails when the library knows a status not listed here.
const (
	ErrConfig         Kind = C.FLAKEID_ERR_CONFIG          // a layout, node id or option is out of range
	ErrClockBackwards Kind = C.FLAKEID_ERR_CLOCK_BACKWARDS // the clock is behind IDs already issued
	ErrTimeExhausted  Kind = C.FLAKEID_ERR_TIME_EXHAUSTED  // time before the epoch or past the layout's end
	ErrParse          Kind = C.FLAKEID_ERR_PARSE           // text that does not decode; an ID wider than its layout
	ErrFork           Kind = C.FLAKEID_ERR_FORK            // a generator used in a child after fork()
	ErrLease          Kind = C.FLAKEID_ERR_LEASE           // a node-id lease failed or was lost
	ErrInterrupted    Kind = C.FLAKEID_ERR_INTERRUPTED     // a wait for the clock was ended by a wait hook
	ErrInternal       Kind = C.FLAKEID_ERR_PANIC           // "panic": a bug inside flakeid, caught; the process is unharmed
)

// Kinds lists every Kind, in status order.
func Kinds() []Kind {
	return []Kind{ErrConfig, ErrClockBackwards, ErrTimeExhausted, ErrParse, ErrFork, ErrLease,
		ErrInterrupted, ErrInternal}
}

// String is the kind's stable lowercase name ("config", "clock_backwards", ...),
// the name the shared test vectors, Python and the C library use.
func (k Kind) String() string { return cStatusName(uint32(k)) }

func (k Kind) Error() string { return "flakeid: " + k.String() + " error" }

// Error is every failure the library reports. Its message names the field, the
// allowed range and the value given.
type Error struct {
	Kind    Kind
	Message string
	// Field names the option or layout field, for ErrConfig.
	Field string
	// ByMs is how far the clock went back, for ErrClockBackwards.
	ByMs uint64
	// Position is the 0-based offending character, for ErrParse.
	Position int
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Kind.Error()
	}
	return "flakeid: " + e.Message
}

// Unwrap gives the Kind: errors.Is(err, flakeid.ErrConfig) is true for every
// error of that kind, and errors.As(err, &kind) finds it. The C layer's other
// failures (a NULL argument, a buffer too small: bugs in this package, not in the
// caller's input) unwrap to ErrInternal.
func (e *Error) Unwrap() error {
	if e.Kind >= C.FLAKEID_ERR_NULL {
		return ErrInternal
	}
	return e.Kind
}

// GoString keeps the details visible in %#v.
func (e *Error) GoString() string {
	return fmt.Sprintf("&flakeid.Error{Kind: %s, Field: %q, ByMs: %d, Position: %d, Message: %q}",
		e.Kind, e.Field, e.ByMs, e.Position, e.Message)
}
