package flakeid

import (
	"runtime"
	"time"
)

// ManualClock is a clock that moves only when told to, for deterministic tests
// (Options.Clock). Safe for concurrent use. Generators built with it share its
// time, not the handle: Close it whenever it is no longer set or read.
type ManualClock struct {
	p       clockHandle
	cleanup runtime.Cleanup
}

// NewManualClock makes a clock reading start (in whole ms). With autoAdvance > 0
// it moves forward by that much on every turn of a generator's wait loop, so waits
// end deterministically.
func NewManualClock(start time.Time, autoAdvance time.Duration) (*ManualClock, error) {
	p, err := cClockNew(msOf(start), uint64(autoAdvance.Milliseconds()))
	if err != nil {
		return nil, err
	}
	c := &ManualClock{p: p}
	c.cleanup = runtime.AddCleanup(c, cClockFree, p)
	return c, nil
}

// Set sets the clock (it may move backwards, to test rollback policies).
func (c *ManualClock) Set(t time.Time) error {
	defer c.keepAlive()
	return cClockSet(c.handle(), msOf(t))
}

// Advance moves the clock forward.
func (c *ManualClock) Advance(d time.Duration) error {
	defer c.keepAlive()
	return cClockAdvance(c.handle(), uint64(d.Milliseconds()))
}

// Now reads the clock.
func (c *ManualClock) Now() time.Time {
	defer c.keepAlive()
	ms, err := cClockGet(c.handle())
	if err != nil {
		return time.Time{}
	}
	return unixMs(ms)
}

// Close frees the clock's handle; generators built with it keep its time.
func (c *ManualClock) Close() error {
	if c.p != nil {
		c.cleanup.Stop()
		cClockFree(c.p)
		c.p = nil
	}
	return nil
}

func (c *ManualClock) handle() clockHandle { return c.p }

func (c *ManualClock) keepAlive() { runtime.KeepAlive(c) }
