package flakeid

// The C library's enum values, read from its header: numbers kept once.

// #include "flakeid.h"
import "C"

import "fmt"

// Order is where the node field sits in an ID.
type Order uint32

const (
	TimeNodeSeq Order = C.FLAKEID_ORDER_TIME_NODE_SEQ // time | node | seq: Twitter, FlakeID, Discord, Baidu, Instagram
	TimeSeqNode Order = C.FLAKEID_ORDER_TIME_SEQ_NODE // time | seq | node: Sonyflake
)

func (o Order) String() string {
	switch o {
	case TimeNodeSeq:
		return "time|node|seq"
	case TimeSeqNode:
		return "time|seq|node"
	}
	return fmt.Sprintf("Order(%d)", uint32(o))
}

// Encoding is a text form of an ID.
type Encoding uint32

const (
	Decimal Encoding = C.FLAKEID_ENCODING_DECIMAL // base 10, unpadded (up to 20 characters)
	Hex     Encoding = C.FLAKEID_ENCODING_HEX     // 16 lowercase hex digits
	Base32  Encoding = C.FLAKEID_ENCODING_BASE32  // 13 Crockford base32 characters
	Base62  Encoding = C.FLAKEID_ENCODING_BASE62  // 11 characters of 0-9A-Za-z
)

// Encodings lists every encoding.
func Encodings() []Encoding { return []Encoding{Decimal, Hex, Base32, Base62} }

func (e Encoding) String() string {
	switch e {
	case Decimal:
		return "decimal"
	case Hex:
		return "hex"
	case Base32:
		return "base32"
	case Base62:
		return "base62"
	}
	return fmt.Sprintf("Encoding(%d)", uint32(e))
}

// Overflow is what a generator does when a tick's sequence is used up.
type Overflow uint32

const (
	// OverflowWait spins on the clock until the next tick (the default).
	OverflowWait Overflow = C.FLAKEID_OVERFLOW_WAIT
	// OverflowBorrow moves to the next tick at once, at most MaxBorrow ahead of the clock.
	OverflowBorrow Overflow = C.FLAKEID_OVERFLOW_BORROW
)

// ClockBackwards is what a generator does when the clock reads earlier than IDs
// already issued.
type ClockBackwards uint32

const (
	// ClockBackwardsError fails with ErrClockBackwards (the default).
	ClockBackwardsError ClockBackwards = C.FLAKEID_CLOCK_BACKWARDS_ERROR
	// ClockBackwardsWait waits up to MaxWait for the clock to catch up, then fails.
	ClockBackwardsWait ClockBackwards = C.FLAKEID_CLOCK_BACKWARDS_WAIT
	// ClockBackwardsMonotonic keeps issuing from the last tick.
	ClockBackwardsMonotonic ClockBackwards = C.FLAKEID_CLOCK_BACKWARDS_MONOTONIC
)
