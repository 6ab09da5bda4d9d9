package bench

// TestPeers*: docs/migrating.md's Go tables say bit for bit which flakeid layout holds
// the IDs bwmarrin/snowflake and sony/sonyflake v2 made. Each test makes an ID with
// one library and reads it with the other, at fixed times, nodes and sequences.
// make test-go runs them (go/bench is a module of its own: the peers stay out of
// flakeid-go's go.mod).

import (
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	"github.com/sony/sonyflake/v2"

	"github.com/flakeid/flakeid-go"
)

var peerTimes = []time.Time{
	time.UnixMilli(1_700_000_000_123),
	time.UnixMilli(1_288_834_974_657 + 1),
	time.Date(2040, 2, 29, 23, 59, 59, 999_000_000, time.UTC),
}

func TestPeersBwmarrinSnowflake(t *testing.T) {
	for _, at := range peerTimes {
		for _, node := range []int64{0, 1, 31, 32, 1023} {
			n, err := snowflake.NewNode(node)
			if err != nil {
				t.Fatal(err)
			}
			theirs := n.Generate() // now: its time is checked against flakeid's reading
			p, err := flakeid.Snowflake.Decompose(flakeid.ID(theirs.Int64()))
			if err != nil {
				t.Fatal(err)
			}
			if int64(p.TimestampMs) != theirs.Time() || int64(p.Node) != theirs.Node() || int64(p.Sequence) != theirs.Step() {
				t.Fatalf("bwmarrin %d: flakeid reads %+v", theirs, p)
			}
			ours, err := flakeid.Snowflake.Compose(at, uint64(node), 4095)
			if err != nil {
				t.Fatal(err)
			}
			back := snowflake.ParseInt64(ours.Int64())
			if back.Time() != at.UnixMilli() || back.Node() != node || back.Step() != 4095 {
				t.Fatalf("flakeid %d at %v node %d: bwmarrin reads time %d node %d step %d",
					ours, at, node, back.Time(), back.Node(), back.Step())
			}
		}
	}
}

// sonyflake v2 counts from 2025-01-01 unless StartTime says otherwise; flakeid's
// `sonyflake` preset is v1's 2014-09-01. Both are checked: the preset against v2 with
// v1's start, and a layout with v2's epoch against v2's default.
func TestPeersSonyflake(t *testing.T) {
	v1Start := time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC)
	v2Epoch, err := flakeid.NewLayout(flakeid.LayoutSpec{TimeBits: 39, SequenceBits: 8, WorkerBits: 16,
		TickMs: 10, EpochMs: uint64(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()),
		Order: flakeid.Sonyflake.Order()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		start  time.Time
		layout flakeid.Layout
	}{{"v1 start, preset sonyflake", v1Start, flakeid.Sonyflake}, {"v2 default start", time.Time{}, v2Epoch}} {
		for _, machine := range []int{0, 7, 65535} {
			sf, err := sonyflake.New(sonyflake.Settings{StartTime: c.start,
				MachineID: func() (int, error) { return machine, nil }})
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range peerTimes[2:] { // after both starts
				theirs, err := sf.Compose(at, 255, machine)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := c.layout.Compose(at, uint64(machine), 255)
				if err != nil {
					t.Fatal(err)
				}
				if int64(ours) != theirs {
					t.Fatalf("%s machine %d at %v: flakeid %d, sonyflake %d", c.name, machine, at, ours, theirs)
				}
			}
			theirs, err := sf.NextID()
			if err != nil {
				t.Fatal(err)
			}
			p, err := c.layout.Decompose(flakeid.ID(theirs))
			if err != nil {
				t.Fatal(err)
			}
			d := sf.Decompose(theirs)
			if int64(p.Node) != d["machine"] || int64(p.Sequence) != d["sequence"] ||
				!p.Time().Equal(sf.ToTime(theirs)) {
				t.Fatalf("%s: sonyflake %v (%v), flakeid reads %+v", c.name, d, sf.ToTime(theirs), p)
			}
		}
	}
}
