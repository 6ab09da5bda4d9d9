package flakeid

import (
	"fmt"
	"time"
)

// Layout is how the 64 bits are split. A value: copy it freely. Only the library
// makes one (Preset, NewLayout), so every Layout is valid; the zero Layout means
// Snowflake wherever a Layout is taken.
type Layout struct {
	timeBits, datacenterBits, workerBits, sequenceBits uint32
	tickMs, epochMs                                    uint64
	order                                              Order
	limits                                             LayoutLimits
	valid                                              bool
}

// LayoutSpec describes a custom layout for NewLayout. A layout with a single node
// field (as Sonyflake's) has DatacenterBits 0 and its node bits in WorkerBits.
type LayoutSpec struct {
	TimeBits, DatacenterBits, WorkerBits, SequenceBits uint32
	TickMs                                             uint64 // milliseconds per tick: 1, 10 (Sonyflake), 1000 (Baidu)
	EpochMs                                            uint64 // Unix milliseconds
	Order                                              Order
}

// LayoutLimits are a layout's derived numbers.
type LayoutLimits struct {
	NodeBits, TotalBits                            uint32
	MaxNode, MaxDatacenter, MaxWorker, MaxSequence uint64
	MaxID                                          ID
	LastMs                                         uint64 // the last Unix ms the layout can hold
	SignedUntilMs                                  uint64 // the last Unix ms whose IDs leave bit 63 clear
}

// The presets (docs: API.md §1). Values, so no caller can change another's.
var (
	Snowflake = mustPreset("snowflake") // 41 time, 5+5 node, 12 seq, 1 ms, Twitter's epoch (the default)
	Flake     = mustPreset("flake")     // 42 time, 10 node, 12 seq, 1 ms, Unix epoch
	Discord   = mustPreset("discord")   // 42 time, 5+5 node, 12 seq, 1 ms, Discord's epoch
	Sonyflake = mustPreset("sonyflake") // 39 time, 8 seq, 16 machine, 10 ms
	Baidu     = mustPreset("baidu")     // 28 time, 22 worker, 13 seq, 1 s
	Instagram = mustPreset("instagram") // 41 time, 13 shard, 10 seq, 1 ms
	JS53      = mustPreset("js53")      // 41 time, 3 node, 9 seq, 1 ms: 53 bits, safe as a JavaScript number
)

func mustPreset(name string) Layout {
	l, err := Preset(name)
	if err != nil {
		panic(err)
	}
	return l
}

// Preset returns the preset named snowflake, flake, discord, sonyflake, baidu,
// instagram or js53 (case-insensitive).
func Preset(name string) (Layout, error) { return cPreset(name) }

// NewLayout validates a custom layout: the error (ErrConfig) names the field and
// its allowed range.
func NewLayout(s LayoutSpec) (Layout, error) { return cCustom(s) }

func (l Layout) orDefault() Layout {
	if !l.valid {
		return Snowflake
	}
	return l
}

func (l Layout) TimeBits() uint32       { return l.orDefault().timeBits }
func (l Layout) DatacenterBits() uint32 { return l.orDefault().datacenterBits }
func (l Layout) WorkerBits() uint32     { return l.orDefault().workerBits }
func (l Layout) SequenceBits() uint32   { return l.orDefault().sequenceBits }
func (l Layout) TickMs() uint64         { return l.orDefault().tickMs }
func (l Layout) EpochMs() uint64        { return l.orDefault().epochMs }
func (l Layout) Order() Order           { return l.orDefault().order }
func (l Layout) Limits() LayoutLimits   { return l.orDefault().limits }

// NodeBits is DatacenterBits + WorkerBits.
func (l Layout) NodeBits() uint32 { return l.Limits().NodeBits }

// Tick is the length of one tick.
func (l Layout) Tick() time.Duration { return time.Duration(l.TickMs()) * time.Millisecond }

// Epoch is the layout's time zero.
func (l Layout) Epoch() time.Time { return unixMs(l.EpochMs()) }

func (l Layout) String() string {
	l = l.orDefault()
	return fmt.Sprintf("flakeid.Layout{time %d, datacenter %d, worker %d, sequence %d, tick %d ms, epoch %d, %s}",
		l.timeBits, l.datacenterBits, l.workerBits, l.sequenceBits, l.tickMs, l.epochMs, l.order)
}

// Decompose takes an ID apart. An ID with bits above the layout's width is ErrParse.
func (l Layout) Decompose(id ID) (Parts, error) { return cDecompose(l, id) }

// Compose builds an ID from a time (floored to its tick), a node id and a
// sequence; out-of-range parts are ErrConfig (the time: ErrTimeExhausted), never
// a truncated ID.
func (l Layout) Compose(t time.Time, node, sequence uint64) (ID, error) {
	return cCompose(l, msOf(t), node, sequence)
}

// ComposeParts is Compose with the node given as datacenter and worker.
func (l Layout) ComposeParts(t time.Time, datacenter, worker, sequence uint64) (ID, error) {
	return cComposeParts(l, msOf(t), datacenter, worker, sequence)
}

// IDRange gives the ID bounds of a time interval: every ID made from start to end
// (inclusive, in ms) lies in [first, last], for WHERE id BETWEEN queries.
func (l Layout) IDRange(start, end time.Time) (first, last ID, err error) {
	return cIDRange(l, msOf(start), msOf(end))
}

// Decompose takes an ID apart under a layout (the zero Layout: Snowflake).
func Decompose(id ID, layout Layout) (Parts, error) { return layout.Decompose(id) }

// Parts is an ID taken apart.
type Parts struct {
	TimestampMs uint64 // Unix ms at the start of the ID's tick
	Ticks       uint64 // the raw time field: ticks since the epoch
	Node        uint64 // datacenter << worker_bits | worker
	Datacenter  uint64 // 0 for layouts with a single node field
	Worker      uint64 // equals Node for layouts with a single node field
	Sequence    uint64
}

// Time is the start of the ID's tick, in UTC.
func (p Parts) Time() time.Time { return unixMs(p.TimestampMs) }

func unixMs(ms uint64) time.Time { return time.UnixMilli(int64(ms)).UTC() }

// msOf gives Unix ms; a time before 1970 reaches the library as a number past any
// layout's end, so the error (ErrTimeExhausted) comes from the engine.
func msOf(t time.Time) uint64 { return uint64(t.UnixMilli()) }
