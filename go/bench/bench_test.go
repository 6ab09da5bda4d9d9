package bench

// Cases (the names of `cargo bench -p flakeid-bench` and `make bench-c` where they
// match):
//   BelowCap   a layout whose sequence never runs out in a tick (22 sequence bits,
//              1 ms): what one call costs.
//   StrictCap  Snowflake's split (41 time, 10 node, 12 sequence, 1 ms): bounded by
//              4,096,000 IDs/s (244 ns); peers configured to the same split.
//   Sonyflake  Sonyflake's own split (39 time, 8 sequence, 16 machine, 10 ms):
//              bounded by 25,600 IDs/s (39 us).
//   Borrow     flakeid's throughput mode on the Snowflake split (no peer has one).
//   *-local-*  the same generator through per-goroutine handles (Generator.Local),
//              one per goroutine (`local/...` in Rust, make bench-c).
//   UUID7      one UUIDv7 per call, beside google/uuid NewV7 (pinned in go.mod).
//   Cost       a cgo call that does nothing, and Go's clocks (why Next does not
//              hide a buffer: see go/README.md).

import (
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	"github.com/google/uuid"
	"github.com/sony/sonyflake/v2"

	"github.com/flakeid/flakeid-go"
)

var sink uint64

func gen(b *testing.B, o flakeid.Options) *flakeid.Generator {
	g, err := flakeid.New(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	return g
}

func wide(b *testing.B) flakeid.Layout {
	l, err := flakeid.NewLayout(flakeid.LayoutSpec{TimeBits: 41, SequenceBits: 22, TickMs: 1, EpochMs: 1288834974657})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func next(b *testing.B, g *flakeid.Generator) {
	for b.Loop() {
		id, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		sink += uint64(id)
	}
}

// local is next through a handle of the benchmark's goroutine.
func local(b *testing.B, g *flakeid.Generator) {
	l, err := g.Local()
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		id, err := l.Next()
		if err != nil {
			b.Fatal(err)
		}
		sink += uint64(id)
	}
}

// parallel is 8 goroutines (4 x GOMAXPROCS, 2 here) issuing from g, each through
// a handle of its own with handles set.
func parallel(b *testing.B, g *flakeid.Generator, handles bool) {
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		next := g.Next
		if handles {
			l, err := g.Local()
			if err != nil {
				b.Error(err)
				return
			}
			defer l.Close()
			next = l.Next
		}
		for pb.Next() {
			if _, err := next(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// fill reports ns per ID of Fill calls of 1024 IDs.
func fill(b *testing.B, g *flakeid.Generator) {
	ids := make([]flakeid.ID, 1024)
	for b.Loop() {
		if err := g.Fill(ids); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/ID")
}

// bwmarrin's bit split is a package global, read when a node is made.
func bwmarrinNode(b *testing.B, nodeBits, stepBits uint8) *snowflake.Node {
	saveNode, saveStep := snowflake.NodeBits, snowflake.StepBits
	snowflake.NodeBits, snowflake.StepBits = nodeBits, stepBits
	defer func() { snowflake.NodeBits, snowflake.StepBits = saveNode, saveStep }()
	n, err := snowflake.NewNode(0)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func bwmarrin(b *testing.B, n *snowflake.Node) {
	for b.Loop() {
		sink += uint64(n.Generate())
	}
}

func sony(b *testing.B, st sonyflake.Settings) {
	st.MachineID = func() (int, error) { return 1, nil }
	sf, err := sonyflake.New(st)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		id, err := sf.NextID()
		if err != nil {
			b.Fatal(err)
		}
		sink += uint64(id)
	}
}

func BenchmarkBelowCap(b *testing.B) {
	b.Run("flakeid-next", func(b *testing.B) { next(b, gen(b, flakeid.Options{Layout: wide(b)})) })
	b.Run("flakeid-local-next", func(b *testing.B) { local(b, gen(b, flakeid.Options{Layout: wide(b)})) })
	b.Run("flakeid-fill1024", func(b *testing.B) { fill(b, gen(b, flakeid.Options{Layout: wide(b)})) })
	b.Run("bwmarrin", func(b *testing.B) { bwmarrin(b, bwmarrinNode(b, 0, 22)) })
	b.Run("sonyflake", func(b *testing.B) {
		sony(b, sonyflake.Settings{BitsSequence: 22, BitsMachineID: 1, TimeUnit: time.Millisecond})
	})
}

func BenchmarkStrictCap(b *testing.B) {
	b.Run("flakeid-next", func(b *testing.B) { next(b, gen(b, flakeid.Options{Node: 1})) })
	b.Run("flakeid-fill1024", func(b *testing.B) { fill(b, gen(b, flakeid.Options{Node: 1})) })
	b.Run("bwmarrin", func(b *testing.B) { bwmarrin(b, bwmarrinNode(b, 10, 12)) })
	b.Run("sonyflake", func(b *testing.B) {
		sony(b, sonyflake.Settings{BitsSequence: 12, BitsMachineID: 10, TimeUnit: time.Millisecond})
	})
}

func BenchmarkSonyflake(b *testing.B) {
	b.Run("flakeid-next", func(b *testing.B) { next(b, gen(b, flakeid.Options{Layout: flakeid.Sonyflake, Node: 1})) })
	b.Run("sonyflake", func(b *testing.B) { sony(b, sonyflake.Settings{}) })
}

func BenchmarkBorrow(b *testing.B) {
	o := flakeid.Options{Node: 1, Overflow: flakeid.OverflowBorrow, MaxBorrow: 24 * time.Hour}
	b.Run("flakeid-next", func(b *testing.B) { next(b, gen(b, o)) })
	b.Run("flakeid-fill1024", func(b *testing.B) { fill(b, gen(b, o)) })
	b.Run("flakeid-local-next", func(b *testing.B) { local(b, gen(b, o)) })
	b.Run("flakeid-next-8goroutines", func(b *testing.B) { parallel(b, gen(b, o), false) })
	b.Run("flakeid-local-next-8goroutines", func(b *testing.B) { parallel(b, gen(b, o), true) })
}

func BenchmarkCost(b *testing.B) {
	b.Run("cgo-noop-call", func(b *testing.B) {
		for b.Loop() {
			Noop()
		}
	})
	b.Run("go-time-now", func(b *testing.B) {
		for b.Loop() {
			sink += uint64(time.Now().UnixMilli())
		}
	})
	b.Run("go-monotonic-clock", func(b *testing.B) {
		t0 := time.Now()
		for b.Loop() {
			sink += uint64(time.Since(t0))
		}
	})
}

// Sealing (docs/sealing.md): one call into the library per ID, FF1 with AES-128.
func BenchmarkSeal(b *testing.B) {
	s, err := flakeid.NewSealer([]byte("0123456789abcdef"), flakeid.SealerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	b.Run("flakeid-seal", func(b *testing.B) {
		id := flakeid.ID(1)
		for b.Loop() {
			sealed, err := s.Seal(id)
			if err != nil {
				b.Fatal(err)
			}
			id = sealed
		}
		sink += uint64(id)
	})
	b.Run("flakeid-unseal", func(b *testing.B) {
		id := flakeid.ID(1)
		for b.Loop() {
			back, err := s.Unseal(id)
			if err != nil {
				b.Fatal(err)
			}
			id = back
		}
		sink += uint64(id)
	})
}

// The 128-bit family: one UUIDv7 per call beside github.com/google/uuid's NewV7
// (a process-wide monotonic UUIDv7 behind a mutex; its random bits from crypto/rand).
func BenchmarkUUID7(b *testing.B) {
	g, err := flakeid.NewUUIDGenerator(flakeid.UUIDOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	b.Run("flakeid-next", func(b *testing.B) {
		for b.Loop() {
			u, err := g.Next()
			if err != nil {
				b.Fatal(err)
			}
			sink += uint64(u[15])
		}
	})
	b.Run("flakeid-next-string", func(b *testing.B) {
		for b.Loop() {
			s, err := g.NextString()
			if err != nil {
				b.Fatal(err)
			}
			sink += uint64(len(s))
		}
	})
	b.Run("google-uuid-newv7", func(b *testing.B) {
		for b.Loop() {
			u, err := uuid.NewV7()
			if err != nil {
				b.Fatal(err)
			}
			sink += uint64(u[15])
		}
	})
	b.Run("google-uuid-newv7-string", func(b *testing.B) {
		for b.Loop() {
			u, err := uuid.NewV7()
			if err != nil {
				b.Fatal(err)
			}
			sink += uint64(len(u.String()))
		}
	})
}
