package flakeid

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// Every status the library names is a Kind here (and every Kind is one the library
// names): the error table is kept once, in the engine, and mapped exhaustively.
func TestKindsAreExhaustive(t *testing.T) {
	listed := map[Kind]bool{}
	for _, k := range Kinds() {
		listed[k] = true
		if k.String() == "unknown" {
			t.Errorf("Kind %d is not a status the library knows", uint32(k))
		}
	}
	for s := uint32(1); s < 1000; s++ {
		name := cStatusName(s)
		if name == "unknown" {
			continue
		}
		k := Kind(s)
		err := error(&Error{Kind: k, Message: "x"})
		switch {
		case s < 100 && !listed[k]:
			t.Errorf("status %d (%q) has no Kind: add it to errors.go", s, name)
		case s >= 100 && !errors.Is(err, ErrInternal):
			t.Errorf("status %d (%q) does not unwrap to ErrInternal", s, name)
		}
		if k.String() != name {
			t.Errorf("Kind(%d).String() = %q, want %q", s, k.String(), name)
		}
	}
	want := []string{"config", "clock_backwards", "time_exhausted", "parse", "fork", "lease", "interrupted", "panic"}
	for i, k := range Kinds() {
		if k.String() != want[i] {
			t.Errorf("Kinds()[%d] = %q, want %q", i, k, want[i])
		}
	}
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := New(Options{Worker: 32})
	var fe *Error
	if !errors.Is(err, ErrConfig) || errors.Is(err, ErrParse) || !errors.As(err, &fe) {
		t.Fatalf("%#v", err)
	}
	if fe.Field != "worker" || err.Error() != "flakeid: invalid configuration: worker must be in 0..=31, got 32" {
		t.Fatalf("%q, field %q", err, fe.Field)
	}
	// Both ways of giving the node id: the engine refuses, naming a field.
	if _, err := New(Options{Node: 1, Worker: 2}); !errors.Is(err, ErrConfig) {
		t.Fatalf("node + worker: %v", err)
	}
	// A negative duration reaches the engine as out of range.
	_, err = New(Options{MaxWait: -time.Millisecond})
	if !errors.As(err, &fe) || fe.Field != "max_wait_ms" {
		t.Fatalf("negative MaxWait: %v", err)
	}
	if _, err := Decode("12x", Decimal); !errors.As(err, &fe) || fe.Position != 2 || !errors.Is(err, ErrParse) {
		t.Fatalf("%#v", err)
	}
}

// The details of a failure are copied in the same C call (they are per OS thread):
// many goroutines failing at once each see their own message.
func TestErrorDetailsAreThePerCallOnes(t *testing.T) {
	done := make(chan error)
	for w := 0; w < 8; w++ {
		go func() {
			for i := 0; i < 2000; i++ {
				text := strings.Repeat("0", w%4) + "!"
				_, err := Decode(text, Decimal)
				var fe *Error
				if !errors.As(err, &fe) || fe.Position != w%4 {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for w := 0; w < 8; w++ {
		if err := <-done; err != nil {
			t.Fatalf("another call's error: %#v", err)
		}
	}
}

func TestGenerator(t *testing.T) {
	g, err := New(Options{Datacenter: 1, Worker: 2})
	if err != nil {
		t.Fatal(err)
	}
	if g.Node() != 1<<5|2 || g.Layout() != Snowflake {
		t.Fatalf("node %d, layout %v", g.Node(), g.Layout())
	}
	// The engine stamps from a cached millisecond that may lag the true time by the
	// cache thread's wake-up latency (docs/design.md, "The clock"): a few ms on a
	// loaded machine, so "now-ish" is checked with a second's slack.
	before := time.Now().Add(-time.Second)
	id, err := g.Next()
	if err != nil {
		t.Fatal(err)
	}
	p, err := id.Parts()
	if err != nil || p.Datacenter != 1 || p.Worker != 2 || id.Time().Before(before) || id.Time().After(time.Now()) {
		t.Fatalf("%d: %+v %v, time %v", id, p, err, id.Time())
	}
	ids, err := g.NextN(1000)
	if err != nil || len(ids) != 1000 || ids[0] <= id {
		t.Fatal(err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids[%d] = %d after %d", i, ids[i], ids[i-1])
		}
	}
	if ids, err := g.NextN(0); err != nil || len(ids) != 0 {
		t.Fatal(ids, err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := g.NextN(3); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatal("a second Close:", err)
	}
}

func TestLayoutsAndOptions(t *testing.T) {
	if (Layout{}).TimeBits() != 41 || (Layout{}).Limits() != Snowflake.Limits() {
		t.Fatal("the zero Layout is not Snowflake")
	}
	g := newGen(t, Options{Layout: Sonyflake, Node: 0x1234})
	id, _ := g.Next()
	p, err := Sonyflake.Decompose(id)
	if err != nil || p.Node != 0x1234 || p.Datacenter != 0 || p.Worker != 0x1234 {
		t.Fatalf("%+v %v", p, err)
	}
	// Seed 001's vector.
	seed, err := Snowflake.ComposeParts(time.UnixMilli(1505914988849), 17, 25, 0)
	if err != nil || seed != 910499571847892992 {
		t.Fatal(seed, err)
	}
	if _, err := Preset("nope"); !errors.Is(err, ErrConfig) {
		t.Fatal(err)
	}
	t.Setenv("FLAKEID_GO_TEST_NODE", "7")
	g2, err := New(Options{NodeSource: "env:FLAKEID_GO_TEST_NODE"})
	if err != nil || g2.Node() != 7 {
		t.Fatal(err)
	}
	g2.Close()
}

func TestJSON(t *testing.T) {
	type row struct {
		ID  ID  `json:"id"`
		Ref *ID `json:"ref"`
	}
	out, _ := json.Marshal(row{ID: 910499571847892992})
	if string(out) != `{"id":"910499571847892992","ref":null}` {
		t.Fatal(string(out))
	}
	var r row
	if err := json.Unmarshal([]byte(`{"id":18446744073709551615,"ref":"1"}`), &r); err != nil || r.ID != ID(^uint64(0)) || *r.Ref != 1 {
		t.Fatal(r, err)
	}
	for _, bad := range []string{`{"id":-1}`, `{"id":"1e3"}`, `{"id":18446744073709551616}`, `{"id":""}`, `{"id":true}`} {
		if err := json.Unmarshal([]byte(bad), &r); !errors.Is(err, ErrParse) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if text, _ := ID(42).MarshalText(); string(text) != "42" {
		t.Fatal(string(text))
	}
}

func TestManualClock(t *testing.T) {
	c, err := NewManualClock(time.UnixMilli(1_700_000_000_000), 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{Clock: c, Node: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c.Close() // the generator keeps the clock's time
	id, err := g.Next()
	if err != nil || !id.Time().Equal(time.UnixMilli(1_700_000_000_000)) {
		t.Fatal(id.Time(), err)
	}
}

func TestVersion(t *testing.T) {
	if v := Version(); v == "" || strings.Count(v, ".") != 2 {
		t.Fatalf("Version() = %q", v)
	}
}

func TestStats(t *testing.T) {
	c, err := NewManualClock(time.UnixMilli(1_700_000_000_000), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g, err := New(Options{Clock: c, Node: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.NextN(7); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(time.UnixMilli(1_700_000_000_000 - 25)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(); !errors.Is(err, ErrClockBackwards) {
		t.Fatal(err)
	}
	s, err := g.Stats()
	// The clock is still 25 ms behind the last ID: that is the lead.
	want := Stats{IDsIssued: 7, Lead: 25 * time.Millisecond, ClockRollbacks: 1, MaxRollback: 25 * time.Millisecond}
	if err != nil || s != want {
		t.Fatalf("%+v, %v; want %+v", s, err, want)
	}
	g.Close()
	if _, err := g.Stats(); err != ErrClosed {
		t.Fatal(err)
	}
}

// TestBatchSizeIsTheCores: NextN asks the library before allocating: a huge or
// negative n is the core's ErrConfig naming n, with no slice made.
func TestBatchSizeIsTheCores(t *testing.T) {
	g := newGen(t, Options{Node: 901, Clock: mustClock(t)})
	for _, n := range []int{-1, 1<<27 + 1, 1 << 40} {
		ids, err := g.NextN(n)
		var fe *Error
		if ids != nil || !errors.As(err, &fe) || fe.Kind != ErrConfig || fe.Field != "n" ||
			!strings.Contains(fe.Message, "n must be in 0..=134217728") {
			t.Fatalf("NextN(%d): %v, %v", n, len(ids), err)
		}
	}
}

// TestSetByName: Options.Set takes the core's names and text, refusing as it does.
func TestSetByName(t *testing.T) {
	var o Options
	for _, kv := range [][2]string{{"layout", "sonyflake"}, {"NODE", "7"}, {"overflow", "borrow"}, {"require-node", "true"}} {
		if err := o.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	o.Clock = mustClock(t)
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if g.Node() != 7 || g.Layout().TimeBits() != 39 {
		t.Fatalf("node %d, %d time bits (sonyflake: 39)", g.Node(), g.Layout().TimeBits())
	}
	g.Close()
	var fe *Error
	if err := o.Set("workerId", "3"); !errors.As(err, &fe) || fe.Field != "settings" ||
		!strings.Contains(fe.Message, `did you mean "worker"`) {
		t.Fatalf("%v", err)
	}
	if err := o.Set("worker", "three"); !errors.As(err, &fe) || fe.Field != "worker" {
		t.Fatalf("%v", err)
	}
	if _, err := New(Options{RequireNode: true, Clock: mustClock(t)}); !errors.As(err, &fe) || fe.Field != "node" {
		t.Fatalf("RequireNode without a node source: %v", err)
	}
}

func mustClock(t *testing.T) *ManualClock {
	t.Helper()
	c, err := NewManualClock(time.UnixMilli(1_700_000_000_000), 0)
	return closedAtEnd(t, c, err)
}

// newGen is a new generator of o, closed when the test ends.
func newGen(t *testing.T, o Options) *Generator {
	t.Helper()
	g, err := New(o)
	return closedAtEnd(t, g, err)
}

// closedAtEnd is v, made with err: the test fails on err, else v is closed when
// the test ends.
func closedAtEnd[T interface{ Close() error }](t *testing.T, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// TestIDRefusalsAreTheCores: the ID refusals of IDFromBytes and Scan are the
// engine's parser's (its words, kind and position), none written here.
func TestIDRefusalsAreTheCores(t *testing.T) {
	var fe *Error
	if _, err := IDFromBytes([]byte{1, 2}); !errors.As(err, &fe) || fe.Kind != ErrParse || fe.Position != 2 ||
		fe.Message != "parse error: an ID is 8 bytes, got 2" {
		t.Fatalf("IDFromBytes: %#v", err)
	}
	var id ID
	if err := id.Scan(nil); !errors.As(err, &fe) || fe.Kind != ErrParse ||
		!strings.Contains(fe.Message, "an ID is an integer, decimal text or 8 bytes, got NULL") {
		t.Fatalf("Scan(nil): %v", err)
	}
	if err := id.Scan(1.5); !errors.As(err, &fe) || !strings.Contains(fe.Message, "got a float64") {
		t.Fatalf("Scan(1.5): %v", err)
	}
	if err := id.Scan("-x"); !errors.As(err, &fe) || !strings.Contains(fe.Message, `an ID is decimal digits, got "-x"`) {
		t.Fatalf("Scan(-x): %v", err)
	}
}

// TestRequireNodeFromTheEnvironment: FLAKEID_REQUIRE_NODE=true is the engine's to
// read, so a plain New honours it as the CLI and the adapters do.
func TestRequireNodeFromTheEnvironment(t *testing.T) {
	t.Setenv("FLAKEID_REQUIRE_NODE", "true")
	var fe *Error
	if _, err := New(Options{}); !errors.As(err, &fe) || fe.Field != "node" ||
		!strings.Contains(fe.Message, "require_node") || !strings.Contains(fe.Message, "FLAKEID_NODE") {
		t.Fatalf("New without a node id under FLAKEID_REQUIRE_NODE=true: %v", err)
	}
	g, err := New(Options{Node: 3})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
}

// TestNodeOriginIsTheEngines: where the node id came from, as the engine decided
// it: a node id given, then none (a free one on this host, in a guard directory
// named explicitly: the one line a container needs).
func TestNodeOriginIsTheEngines(t *testing.T) {
	t.Setenv("FLAKEID_HOST_GUARD", t.TempDir())
	g := newGen(t, Options{Node: 3})
	if g.NodeOrigin() != "explicit" {
		t.Fatalf("a node id given: %q", g.NodeOrigin())
	}
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.NodeOrigin() != "host" {
		t.Fatalf("no node id: %q", h.NodeOrigin())
	}
}
