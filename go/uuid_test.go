package flakeid

// The 128-bit family from Go: tests/vectors/uuid.json's cases (run by TestVectors),
// the generator (monotonic within a millisecond and across goroutines, options by
// name), and UUID's text, JSON and database/sql forms.

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// --- uuid.json ---

func mustUUID(t *testing.T, s string) UUID {
	t.Helper()
	u, err := ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func u64Of(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func uuid7Case(t *testing.T, c obj) {
	ms, randA, randB := num(t, c, "ms"), num(t, c, "rand_a"), u64Of(t, str(t, c, "rand_b"))
	u, err := ComposeUUID7(ms, uint16(randA), randB)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(u[:]) != str(t, c, "bytes") || u.String() != str(t, c, "uuid") {
		t.Fatalf("compose: %s", u)
	}
	if u.ULID() != str(t, c, "ulid") || u.Version() != 7 {
		t.Fatalf("ulid %s, version %d", u.ULID(), u.Version())
	}
	if tid, err := u.TypeID("user"); err != nil || tid != str(t, c, "typeid") {
		t.Fatalf("typeid %s %v", tid, err)
	}
	if v, err := ParseULID(str(t, c, "ulid")); err != nil || v != u {
		t.Fatalf("ParseULID: %s %v", v, err)
	}
	if p, v, err := ParseTypeID(str(t, c, "typeid")); err != nil || p != "user" || v != u {
		t.Fatalf("ParseTypeID: %q %s %v", p, v, err)
	}
	gotMs, a, b, err := u.Decompose()
	if err != nil || gotMs != ms || uint64(a) != randA || b != randB {
		t.Fatalf("decompose: %d %d %d %v", gotMs, a, b, err)
	}
	if u.ULIDTimestampMs() != ms {
		t.Fatalf("ULIDTimestampMs: %d", u.ULIDTimestampMs())
	}
	if ts, err := u.TimestampMs(); err != nil || ts != ms {
		t.Fatalf("timestamp %d %v", ts, err)
	}
}

func uuidComposeErrorCase(t *testing.T, c obj) {
	randA := num(t, c, "rand_a")
	if randA > 0xffff {
		t.Fatalf("rand_a %d does not fit ComposeUUID7's uint16", randA)
	}
	_, err := ComposeUUID7(num(t, c, "ms"), uint16(randA), u64Of(t, str(t, c, "rand_b")))
	expectError(t, err, c)
}

func uuidConversionCase(t *testing.T, c obj) {
	u := mustUUID(t, str(t, c, "uuid"))
	if l, err := ParseULID(str(t, c, "ulid")); err != nil || l != u || u.ULID() != str(t, c, "ulid") {
		t.Fatalf("%s %s %v", l, u.ULID(), err)
	}
}

func uuidAliasCase(t *testing.T, c obj) {
	var got UUID
	var err error
	switch str(t, c, "kind") {
	case "uuid":
		got, err = ParseUUID(str(t, c, "text"))
	case "ulid":
		got, err = ParseULID(str(t, c, "text"))
	default:
		t.Fatalf("unknown kind")
	}
	if err != nil || got.String() != str(t, c, "uuid") {
		t.Fatalf("%s %v", got, err)
	}
}

func uuidBadCase(t *testing.T, c obj) {
	var err error
	switch str(t, c, "kind") {
	case "uuid":
		_, err = ParseUUID(str(t, c, "text"))
		// The same refusal through database/sql's Scan and encoding's UnmarshalText.
		var u UUID
		expectError(t, u.Scan(str(t, c, "text")), c)
		expectError(t, u.UnmarshalText([]byte(str(t, c, "text"))), c)
	case "ulid":
		_, err = ParseULID(str(t, c, "text"))
	default:
		t.Fatalf("unknown kind")
	}
	expectError(t, err, c)
}

func typeIDValidCase(t *testing.T, c obj) {
	p, u, err := ParseTypeID(str(t, c, "typeid"))
	if err != nil || p != str(t, c, "prefix") || u.String() != str(t, c, "uuid") {
		t.Fatalf("%q %s %v", p, u, err)
	}
	if back, err := u.TypeID(p); err != nil || back != str(t, c, "typeid") {
		t.Fatalf("%s %v", back, err)
	}
}

func typeIDInvalidCase(t *testing.T, c obj) {
	_, _, err := ParseTypeID(str(t, c, "typeid"))
	expectError(t, err, c)
}

func typeIDPrefixErrorCase(t *testing.T, c obj) {
	g := newUUIDGen(t, UUIDOptions{})
	_, err := g.NextTypeID(str(t, c, "prefix"))
	expectError(t, err, c)
	if s, _ := g.Stats(); s.IDsIssued != 0 {
		t.Fatalf("a bad prefix cost %d IDs", s.IDsIssued)
	}
}

func uuidRangeCase(t *testing.T, c obj) {
	first, last, err := UUID7Range(num(t, c, "start_ms"), num(t, c, "end_ms"))
	if err != nil || first.String() != str(t, c, "first") || last.String() != str(t, c, "last") {
		t.Fatalf("%s %s %v", first, last, err)
	}
}

// --- wide.json ---

// The package's exported functions and UUID's methods, read from its source once.
var goExports = sync.OnceValues(func() (map[string]bool, error) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, f := range pkgs["flakeid"].Files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.IsExported() && fn.Recv == nil {
				names[fn.Name.Name] = true
			}
		}
	}
	for prefix, typ := range map[string]reflect.Type{
		"UUID.": reflect.TypeOf(UUID{}), "UUIDGenerator.": reflect.TypeOf(&UUIDGenerator{}),
	} {
		for i := 0; i < typ.NumMethod(); i++ {
			names[prefix+typ.Method(i).Name] = true
		}
	}
	return names, nil
})

// The core's table of the 128-bit family's functions: the go column names an
// exported function of this package, or a method of UUID or UUIDGenerator (nil:
// the note says what does it here).
func wideFunctionCase(t *testing.T, c obj) {
	name, ok := c["go"].(string)
	if !ok {
		if c["go"] != nil || str(t, c, "note") == "" {
			t.Fatalf("%v: no Go name and no note", c)
		}
		return
	}
	names, err := goExports()
	if err != nil {
		t.Fatal(err)
	}
	if !names[name] {
		t.Fatalf("%s (%s) is not exported", name, str(t, c, "what"))
	}
}

// An explicit time (UUIDGenerator.At): the UUID's first 12 hex digits, version 7
// and RFC 9562's variant, no slot of the sequence taken; or the refusal.
func explicitTimeCase(t *testing.T, c obj) {
	g := newUUIDGen(t, UUIDOptions{})
	ms := num(t, c, "unix_ms")
	if ms > math.MaxInt64 {
		return // past a time.Time's milliseconds
	}
	u, err := g.At(time.UnixMilli(int64(ms)))
	if _, ok := c["error"]; ok {
		expectError(t, err, c)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(u[:6]); got != str(t, c, "time_hex") || u.Version() != 7 || u[8]>>6 != 2 {
		t.Fatalf("At(%d) = %v", ms, u)
	}
	if s, _ := g.Stats(); s.IDsIssued != 0 {
		t.Fatalf("an explicit time took %d slots of the sequence", s.IDsIssued)
	}
}

// A shifted now (UUIDGenerator.Shifted): within [clock before, clock after] + the
// shift; or the refusal.
func shiftCase(t *testing.T, c obj) {
	g := newUUIDGen(t, UUIDOptions{})
	shift, err := strconv.ParseInt(c["shift_ms"].(json.Number).String(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	u, err := g.Shifted(time.Duration(shift) * time.Millisecond)
	after := time.Now().UnixMilli()
	if shift > math.MaxInt64/int64(time.Millisecond) || shift < math.MinInt64/int64(time.Millisecond) {
		return // past a time.Duration's range: Go cannot ask for it
	}
	if _, ok := c["error"]; ok {
		expectError(t, err, c)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(u.ULIDTimestampMs())
	if ms < before+shift || ms > after+shift {
		t.Fatalf("Shifted(%d ms) = %d ms, not within [%d, %d] + shift", shift, ms, before, after)
	}
}

func TestAnExplicitTimeStaysOutsideTheSequence(t *testing.T) {
	const t0 = 1_764_000_000_000
	clock, err := NewManualClock(time.UnixMilli(t0), 0)
	if err != nil {
		t.Fatal(err)
	}
	g := newUUIDGen(t, UUIDOptions{Clock: clock})
	first, _ := g.Next()
	past, err := g.At(time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, time.UTC))
	if err != nil || past.ULIDTimestampMs() != 946_684_799_999 {
		t.Fatalf("At(1999-12-31T23:59:59.999999999Z) = %d, %v", past.ULIDTimestampMs(), err)
	}
	day, err := g.Shifted(-24 * time.Hour)
	if err != nil || day.ULIDTimestampMs() != t0-86_400_000 {
		t.Fatalf("Shifted(-24h) = %d, %v", day.ULIDTimestampMs(), err)
	}
	second, _ := g.Next()
	if bytes.Compare(first[:], second[:]) >= 0 {
		t.Fatal("an explicit time moved the sequence back")
	}
	for _, bad := range []time.Time{time.UnixMilli(-1), time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC)} {
		_, err := g.At(bad)
		var fe *Error
		if !errors.As(err, &fe) || fe.Kind != ErrConfig || fe.Field != "unix_ms" {
			t.Fatalf("At(%v) = %v, want ErrConfig naming unix_ms", bad, err)
		}
	}
	g.Close()
	if _, err := g.At(time.Now()); !errors.Is(err, ErrClosed) {
		t.Fatalf("At after Close = %v, want ErrClosed", err)
	}
}

// --- the generator ---

func newUUIDGen(t *testing.T, o UUIDOptions) *UUIDGenerator {
	t.Helper()
	g, err := NewUUIDGenerator(o)
	return closedAtEnd(t, g, err)
}

// borrowingUUIDGen is a generator, and its manual clock at Unix ms ms, that may run
// 10 ms ahead of it (max_borrow_ms by name, as users set options).
func borrowingUUIDGen(t *testing.T, ms int64) (*UUIDGenerator, *ManualClock) {
	t.Helper()
	clock, err := NewManualClock(time.UnixMilli(ms), 0)
	closedAtEnd(t, clock, err)
	o := UUIDOptions{Clock: clock}
	if err := o.Set("max_borrow_ms", "10"); err != nil {
		t.Fatal(err)
	}
	return newUUIDGen(t, o), clock
}

func TestUUIDGeneratorInOneMillisecond(t *testing.T) {
	const t0 = 1_764_000_000_000
	g, clock := borrowingUUIDGen(t, t0)
	var err error
	ids := make([]UUID, 70_000)
	for i := range ids {
		if ids[i], err = g.Next(); err != nil {
			t.Fatal(err)
		}
		if i > 0 && bytes.Compare(ids[i-1][:], ids[i][:]) >= 0 {
			t.Fatalf("%d: %s after %s", i, ids[i], ids[i-1])
		}
	}
	first, _ := ids[0].TimestampMs()
	last, _ := ids[len(ids)-1].TimestampMs()
	if first != t0 || last != t0+1 {
		t.Fatalf("65,536 in a millisecond, then the next: %d %d", first, last)
	}
	s, err := g.Stats()
	if err != nil || s.IDsIssued != 70_000 || s.Lead != time.Millisecond || s.Reseeds != 0 {
		t.Fatalf("%+v %v", s, err)
	}
	if str, err := g.NextString(); err != nil || len(str) != 36 || str[14] != '7' {
		t.Fatalf("%q %v", str, err)
	}
	if l, err := g.NextULID(); err != nil || len(l) != 26 {
		t.Fatalf("%q %v", l, err)
	}
	if tid, err := g.NextTypeID("order"); err != nil || len(tid) != 32 || tid[:6] != "order_" {
		t.Fatalf("%q %v", tid, err)
	}
	// The clock going back: the default policy refuses, with the distance.
	if err := clock.Set(time.UnixMilli(t0 - 5000)); err != nil {
		t.Fatal(err)
	}
	var fe *Error
	if _, err := g.Next(); !errors.Is(err, ErrClockBackwards) || !errors.As(err, &fe) || fe.ByMs == 0 {
		t.Fatalf("%v", err)
	}
	g.Close()
	if _, err := g.Next(); err != ErrClosed {
		t.Fatalf("after Close: %v", err)
	}
}

func TestUUIDOptionsAreTheCores(t *testing.T) {
	if names := UUIDOptionNames(); len(names) != 4 || names[0] != "overflow" {
		t.Fatalf("%v", names)
	}
	var o UUIDOptions
	for _, c := range [][3]string{
		{"node", "3", "node"}, {"layout", "sonyflake", "layout"}, {"overflow", "sometimes", "overflow"},
		{"max_wait_ms", "soon", "max_wait_ms"}, {"workerId", "1", "options"},
	} {
		var fe *Error
		if err := o.Set(c[0], c[1]); !errors.Is(err, ErrConfig) || !errors.As(err, &fe) || fe.Field != c[2] {
			t.Fatalf("%s=%s: %v (field %q)", c[0], c[1], err, fe.Field)
		}
	}
	if len(o.settings) != 0 {
		t.Fatal("a refused setting was kept")
	}
	if err := o.Set("max_borrow_ms", "1000000000000"); err != nil {
		t.Fatal(err)
	}
	var fe *Error
	if _, err := NewUUIDGenerator(o); !errors.As(err, &fe) || fe.Field != "max_borrow_ms" {
		t.Fatalf("%v", err)
	}
}

func TestUUIDGoroutinesNeverRepeat(t *testing.T) {
	g := newUUIDGen(t, UUIDOptions{})
	const workers, per = 8, 10_000
	out := make([][]UUID, workers)
	var wg sync.WaitGroup
	for k := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				u, err := g.Next()
				if err != nil {
					t.Error(err)
					return
				}
				if n := len(out[k]); n > 0 && bytes.Compare(out[k][n-1][:], u[:]) >= 0 {
					t.Errorf("goroutine %d: %s after %s", k, u, out[k][n-1])
					return
				}
				out[k] = append(out[k], u)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return // a goroutine stopped early: its count says nothing of repeats
	}
	seen := make(map[UUID]struct{}, workers*per)
	for _, ids := range out {
		for _, u := range ids {
			seen[u] = struct{}{}
		}
	}
	if len(seen) != workers*per {
		t.Fatalf("%d distinct of %d", len(seen), workers*per)
	}
}

// --- text, JSON and database/sql forms ---

const rfcUUID = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"

func TestUUIDForms(t *testing.T) {
	u := mustUUID(t, rfcUUID)
	b, err := json.Marshal(map[string]UUID{"id": u})
	if err != nil || string(b) != `{"id":"`+rfcUUID+`"}` {
		t.Fatalf("%s %v", b, err)
	}
	var back map[string]UUID
	if err := json.Unmarshal(b, &back); err != nil || back["id"] != u {
		t.Fatalf("%v %v", back, err)
	}
	if v, err := u.Value(); err != nil || v != rfcUUID {
		t.Fatalf("Value: %v %v", v, err)
	}
	when, err := u.Time()
	if err != nil || !when.Equal(time.UnixMilli(1645557742000)) {
		t.Fatalf("%v %v", when, err)
	}
	for _, src := range []any{rfcUUID, []byte(rfcUUID), u[:], "017F22E279B07CC398C4DC0C0C07398F"} {
		var got UUID
		if err := got.Scan(src); err != nil || got != u {
			t.Fatalf("Scan(%v): %s %v", src, got, err)
		}
	}
	// Refusals leave the value as it was: NULL, other types, a short byte value.
	for _, src := range []any{nil, int64(7), u[:15], []byte{}, "017f22e2-79b0-7cc3-98c4"} {
		got := u
		if err := got.Scan(src); !errors.Is(err, ErrParse) || got != u {
			t.Fatalf("Scan(%#v): %v, %s", src, err, got)
		}
	}
	var fe *Error
	if _, err := ParseUUID("017f22e2-79b0-7cc3-98c4-dc0c0c07398g"); !errors.As(err, &fe) || fe.Position != 35 {
		t.Fatalf("%v", err)
	}
	var n sql.Null[UUID]
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Fatalf("sql.Null: %v", err)
	}
	if _, err := (UUID{}).TimestampMs(); !errors.Is(err, ErrParse) {
		t.Fatalf("the nil UUID has no time: %v", err)
	}
	if _, err := u.TypeID("User"); !errors.Is(err, ErrConfig) {
		t.Fatalf("%v", err)
	}
	ids := []UUID{mustUUID(t, "00000000-0000-7000-8000-000000000001"), u}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 }) {
		t.Fatal("order")
	}
}

func TestUUIDBatchFollowsTheCallsAroundIt(t *testing.T) {
	g, _ := borrowingUUIDGen(t, 1_764_000_000_000)
	before, _ := g.Next()
	batch, err := g.NextN(70_000)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := g.Next()
	prev := before
	for i, u := range append(batch, after) {
		if bytes.Compare(prev[:], u[:]) >= 0 {
			t.Fatalf("ID %d (%s) is not above %s", i, u, prev)
		}
		prev = u
	}
	if _, err := g.NextN(1 << 40); !errors.Is(err, ErrConfig) {
		t.Fatalf("an oversized batch: %v", err)
	}
	if s, _ := g.Stats(); s.IDsIssued != 70_002 {
		t.Fatalf("issued %d", s.IDsIssued)
	}
}
