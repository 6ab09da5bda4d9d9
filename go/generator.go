package flakeid

import (
	"time"
)

// Options configure a Generator. The zero value is the Snowflake layout with no
// node id, waiting when a tick's sequence is used up, failing when the clock goes
// back.
//
// Give the node id one way: Node, or Datacenter and Worker (0 for a part not
// given), or NodeSource, or Lease. A zero Node, Datacenter or Worker is "not
// given" (NodeSource "0" gives node 0). With none: in a Kubernetes pod, a Lease
// from the API server; on a host, a free node id the host guard keeps; in a
// container or with the guard off, ErrConfig naming the fixes (docs/design.md,
// "A node id across a fleet").
type Options struct {
	// A preset name or a custom layout. Default snowflake.
	Layout Layout // the zero Layout is Snowflake
	// The whole node id, or env:VAR, hostname, mac, ipv4. Within the layout's range. Unset:
	// with no node source given (nor a lease): in a Kubernetes pod, a lease from the API
	// server; on a host, a free node id the host guard keeps; in a container or with the guard
	// off, refused, naming the fixes.
	Node uint64 // datacenter << worker_bits | worker
	// The datacenter part of the node id (layouts with datacenter bits). Within the layout's
	// range. Unset: 0 when the other part is given; with no node source at all, as the node
	// option says.
	Datacenter uint64
	// The worker part of the node id. Within the layout's range. Unset: 0 when the other part
	// is given; with no node source at all, as the node option says.
	Worker uint64
	// NodeSource reads the node id: "env:VAR", "hostname" (its trailing ordinal:
	// web-3 is 3), "mac", "ipv4", or a decimal number.
	NodeSource string
	// Lease the node id from a store: file:///dir, redis://, postgres://, etcd://. Unset: no
	// lease.
	//
	// The lowest free node id is leased: "file:///dir", "redis://host:port/db",
	// "postgres://user:password@host:port/db", "etcd://host:2379/" (TLS forms and
	// ?namespace=NAME in docs/leases.md). The lease is renewed in the background and
	// released by Close; once it may have expired, Next fails with ErrLease.
	Lease string
	// When a tick's sequence is used up: wait for the next tick, or borrow from the future.
	// One of OverflowWait, OverflowBorrow; default OverflowWait.
	Overflow Overflow // zero: OverflowWait
	// When the clock reads earlier than IDs issued. One of ClockBackwardsError,
	// ClockBackwardsWait, ClockBackwardsMonotonic; default ClockBackwardsError.
	ClockBackwards ClockBackwards // zero: ClockBackwardsError
	// How far a borrowing generator may run ahead of the clock. 0 to 86400000 ms; default 2000
	// ms.
	//
	// Whole milliseconds, rounded up; zero is the default.
	MaxBorrow time.Duration
	// How long the wait and monotonic clock policies wait for the clock. 0 to 86400000 ms;
	// default 1000 ms.
	//
	// Whole milliseconds, rounded up; zero is the default.
	MaxWait time.Duration
	// A manual clock for tests. Unset: the system clock.
	Clock *ManualClock
	// The lease's time-to-live. 1000 to 3600000 ms; default 10000 ms. Needs Lease.
	//
	// Whole milliseconds, rounded up; zero is the default. Set without Lease, it is
	// ErrConfig (field lease_ttl_ms).
	LeaseTTL time.Duration
	// At most MaxSequence + 1 IDs per tick, 2^k - 1 (flake-idgen's seqMask). Unset: the
	// layout's whole sequence field.
	//
	// nil when not given.
	MaxSequence *uint64
	// A file keeping a high-water timestamp across restarts, for fixed node ids
	// (docs/state.md). Unset: no state file.
	//
	// A restart with the clock behind it meets ClockBackwards. A missing file is a fresh
	// start; a corrupt one, or one another process holds, is ErrConfig (field state). Not
	// with Lease; Close writes the last timestamp and unlocks it.
	State string
	// Refuse to start without a node source (node, worker or lease) instead of taking one from
	// Kubernetes or this host. Default false.
	//
	// For a process that runs as one replica of several across hosts.
	RequireNode bool
	// settings are Set's, by name, applied after the fields above.
	settings [][2]string
}

// Set sets the option name (the core's snake_case name or flag spelling, any
// case: "node", "lease-ttl-ms", "REQUIRE_NODE") from text, as the environment and
// a framework's settings give it: the library's rules and messages (an unknown
// name is ErrConfig listing the known ones; a malformed value ErrConfig naming
// the option). Ranges that depend on other options are checked by New. A later
// Set of the same option wins; a Set wins over the field.
func (o *Options) Set(name, text string) error {
	if err := cOptionSet(name, text); err != nil {
		return err
	}
	o.settings = append(o.settings, [2]string{name, text})
	return nil
}

// OptionNames lists the names Options.Set takes, in the core's order.
func OptionNames() []string { return cOptionNames() }

// Generator issues IDs. It is safe for any number of goroutines: no ID repeats,
// and each goroutine sees its own IDs strictly increase. Close it to release a
// lease; one that is dropped unclosed is freed by the garbage collector.
type Generator struct {
	handle[genHandle]
	// locals counts live per-thread handles (Local), which borrow the C generator:
	// while there are any it is not freed. Closed with handles live, it is closed
	// in the library (they then fail) and kept in orphan for the last one to free.
	// Both guarded by mu (written under its write lock).
	locals int
	orphan genHandle
	node   uint64
	origin string
	layout Layout
}

// New builds a generator. Out-of-range options are ErrConfig naming the option;
// a lease that cannot be had is ErrLease.
func New(o Options) (*Generator, error) {
	p, err := cGeneratorNew(&o)
	if err != nil {
		return nil, err
	}
	node, origin, layout, err := cGeneratorInfo(p)
	if err != nil {
		cGeneratorFree(p)
		return nil, err
	}
	g := &Generator{node: node, origin: origin, layout: layout}
	own(g, &g.handle, p, cGeneratorFree)
	return g, nil
}

// Next issues one ID: one call into the library (go/README.md, "Goroutines, and
// what a call costs").
func (g *Generator) Next() (ID, error) { return call(&g.handle, cNextID) }

// NextN issues n IDs, increasing, in one call into the library (runs of IDs are
// reserved at once).
func (g *Generator) NextN(n int) ([]ID, error) {
	return nextN(n, g.Fill)
}

// nextN is the one body of the NextN methods: n checked against the core's batch
// range before allocating, then a slice of n filled by fill.
func nextN[T any](n int, fill func([]T) error) ([]T, error) {
	if err := cCheckBatch(n); err != nil {
		return nil, err
	}
	out := make([]T, n)
	if err := fill(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Fill writes fresh IDs into every element of ids, increasing, in one call into
// the library. On failure ids is zeroed: it holds no ID.
func (g *Generator) Fill(ids []ID) error {
	_, err := call(&g.handle, func(p genHandle) (struct{}, error) { return struct{}{}, cNextIDs(p, ids) })
	return err
}

// Stats is what a generator has done since it was built (Generator.Stats).
type Stats struct {
	// IDsIssued counts IDs handed out. A borrowing generator shared by contending
	// threads counts the unused rest of a thread's run of slots (up to 127) as
	// issued until the thread uses or drops it.
	IDsIssued uint64
	// TickWaits counts ticks waited out because the tick's sequence (or the borrow
	// window) was used up; TickWaitTime is the time spent in those waits.
	TickWaits    uint64
	TickWaitTime time.Duration
	// Lead is how far the last ID issued is ahead of the clock: a borrowing
	// generator's lead, or a clock that went back.
	Lead time.Duration
	// ClockRollbacks counts calls that found the clock behind IDs already issued;
	// MaxRollback is the largest such rollback.
	ClockRollbacks uint64
	MaxRollback    time.Duration
	// LeaseState is "held", "unreachable", "lost" or "released", or "" without a
	// lease; LeaseRemaining is the time until the lease's window closes unless
	// renewed.
	LeaseState     string
	LeaseRemaining time.Duration
}

// Stats returns a snapshot of the generator's statistics (the core's, one call
// into the library: for monitoring, not for every ID).
func (g *Generator) Stats() (Stats, error) { return call(&g.handle, cGeneratorStats) }

// Node is the generator's node id (datacenter << worker_bits | worker).
func (g *Generator) Node() uint64 { return g.node }

// NodeOrigin says where the node id came from: "explicit", "leased",
// "coordinator", "host" or "none" (docs/design.md, "Who owns a node id").
func (g *Generator) NodeOrigin() string { return g.origin }

// Layout is the generator's layout.
func (g *Generator) Layout() Layout { return g.layout }

// Close releases the generator and its lease. It waits for calls in progress;
// later calls return ErrClosed. Closing twice is a no-op. With per-thread handles
// (Local) still open, it stops the generator in the library (the handles' calls
// then fail with the library's ErrConfig naming generator) and lets the node id
// go at once; the memory is freed when the last handle is closed.
func (g *Generator) Close() error {
	return g.close(func(p genHandle) error {
		if g.locals > 0 {
			g.orphan = p
			return cGeneratorClose(p)
		}
		g.cleanup.Stop()
		cGeneratorFree(p)
		return nil
	})
}
