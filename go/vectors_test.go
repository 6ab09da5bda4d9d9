package flakeid

// Every case of every file in tests/vectors through the Go API: the proof that Go
// issues and reads exactly the IDs every other language does. An unknown file or
// section fails the test (the vectors are the cross-language contract: nothing in
// them is skipped silently).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The sections each file must have, and the function that runs a case of each.
var vectorFiles = map[string]map[string]func(t *testing.T, c obj){
	"layouts.json": {
		"presets":            presetCase,
		"invalid_layouts":    invalidLayoutCase,
		"invalid_generators": invalidGeneratorCase,
	},
	"compose.json": {
		"cases":            composeCase,
		"compose_errors":   composeErrorCase,
		"decompose_errors": decomposeErrorCase,
		"ranges":           rangeCase,
	},
	"encodings.json": {
		"cases":          encodingCase,
		"decode_aliases": aliasCase,
		"bad":            badTextCase,
	},
	"timelines.json": {"timelines": timelineCase},
	"options.json": {
		"options": optionEntryCase, "cases": optionCase,
		"env_cases": optionEnvCase, "settings_cases": optionSettingsCase,
	},
	"seal.json": {"groups": sealGroupCase, "invalid": sealInvalidCase},
	"uuid.json": {
		"uuid7": uuid7Case, "compose_errors": uuidComposeErrorCase, "conversions": uuidConversionCase,
		"text_aliases": uuidAliasCase, "bad": uuidBadCase, "typeid_valid": typeIDValidCase,
		"typeid_invalid": typeIDInvalidCase, "prefix_errors": typeIDPrefixErrorCase, "ranges": uuidRangeCase,
	},
	"wide.json": {"functions": wideFunctionCase, "explicit_times": explicitTimeCase, "shifts": shiftCase},
}

// Files the C ABI cannot run yet, with the reason: the test fails if one appears
// that is in neither list.
var vectorFilesNotInCABI = map[string]string{
	// Run by the core, the CLI and the service only: the C ABI has no auto-detecting decode.
	"decode_auto.json": "decode_auto: core, CLI and service only",
}

func vectorDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("FLAKEID_VECTORS"); d != "" {
		return d
	}
	d := filepath.Join("..", "tests", "vectors")
	if _, err := os.Stat(d); err != nil {
		t.Skip("tests/vectors not found (outside the repository): set FLAKEID_VECTORS")
	}
	return d
}

type obj = map[string]any

func load(t *testing.T, path string) obj {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root obj
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return root
}

func TestVectors(t *testing.T) {
	dir := vectorDir(t)
	entries, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no vector files in %s (%v)", dir, err)
	}
	sort.Strings(entries)
	total := 0
	for _, path := range entries {
		name := filepath.Base(path)
		if why, ok := vectorFilesNotInCABI[name]; ok {
			t.Logf("%s: not run: %s", name, why)
			continue
		}
		sections, ok := vectorFiles[name]
		if !ok {
			t.Errorf("tests/vectors/%s is not run by the Go tests: add it to vectorFiles in go/vectors_test.go", name)
			continue
		}
		root := load(t, path)
		for key := range root {
			if _, known := sections[key]; !known && key != "_comment" {
				t.Errorf("%s: unknown section %q: teach go/vectors_test.go to run it", name, key)
			}
		}
		for section, run := range sections {
			cases, ok := root[section].([]any)
			if !ok || len(cases) == 0 {
				t.Errorf("%s: section %q missing or empty", name, section)
				continue
			}
			for i, c := range cases {
				t.Run(fmt.Sprintf("%s/%s/%d", name, section, i), func(t *testing.T) { run(t, c.(obj)) })
			}
			total += len(cases)
		}
	}
	t.Logf("%d vector cases", total)
}

// --- reading cases ---

func num(t *testing.T, c obj, key string) uint64 {
	t.Helper()
	n, ok := c[key].(json.Number)
	if !ok {
		t.Fatalf("member %q missing or not a number in %v", key, c)
	}
	v, err := strconv.ParseUint(n.String(), 10, 64)
	if err != nil {
		t.Fatalf("member %q: %v", key, err)
	}
	return v
}

func str(t *testing.T, c obj, key string) string {
	t.Helper()
	s, ok := c[key].(string)
	if !ok {
		t.Fatalf("member %q missing or not a string in %v", key, c)
	}
	return s
}

// IDs are decimal strings; parsed here independently of Decode.
func idAt(t *testing.T, c obj, key string) ID {
	t.Helper()
	return idOf(t, str(t, c, key))
}

func idOf(t *testing.T, s string) ID {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return ID(v)
}

func orderOf(t *testing.T, s string) Order {
	switch s {
	case "time|node|seq":
		return TimeNodeSeq
	case "time|seq|node":
		return TimeSeqNode
	}
	t.Fatalf("unknown order %q", s)
	return 0
}

// A layout spec: a preset name or an object with every field.
func layoutOf(t *testing.T, spec any) (Layout, error) {
	t.Helper()
	switch s := spec.(type) {
	case string:
		return Preset(s)
	case obj:
		return NewLayout(LayoutSpec{
			TimeBits:       uint32(num(t, s, "time_bits")),
			DatacenterBits: uint32(num(t, s, "datacenter_bits")),
			WorkerBits:     uint32(num(t, s, "worker_bits")),
			SequenceBits:   uint32(num(t, s, "sequence_bits")),
			TickMs:         num(t, s, "tick_ms"),
			EpochMs:        num(t, s, "epoch_ms"),
			Order:          orderOf(t, str(t, s, "order")),
		})
	}
	t.Fatalf("layout spec is neither a name nor an object: %v", spec)
	return Layout{}, nil
}

func layoutOK(t *testing.T, c obj) Layout {
	t.Helper()
	l, err := layoutOf(t, c["layout"])
	if err != nil {
		t.Fatalf("layout %v: %v", c["layout"], err)
	}
	return l
}

func ms(v uint64) time.Time { return time.UnixMilli(int64(v)) }

// The call failed as the case says: kind, and field / by_ms / position when pinned.
func expectError(t *testing.T, err error, c obj) {
	t.Helper()
	want := str(t, c, "error")
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a %s error", err, want)
	}
	if fe.Kind.String() != want {
		t.Fatalf("got %s (%v), want %s", fe.Kind, err, want)
	}
	var kind Kind
	if !errors.As(err, &kind) || !errors.Is(err, kind) || kind != fe.Kind {
		t.Fatalf("%v: errors.Is/As do not find its Kind", err)
	}
	if fe.Message == "" {
		t.Fatal("an error needs a message")
	}
	if _, ok := c["field"]; ok && fe.Field != str(t, c, "field") {
		t.Fatalf("field %q, want %q (%v)", fe.Field, str(t, c, "field"), err)
	}
	if _, ok := c["by_ms"]; ok && fe.ByMs != num(t, c, "by_ms") {
		t.Fatalf("by_ms %d, want %d", fe.ByMs, num(t, c, "by_ms"))
	}
	if _, ok := c["position"]; ok && uint64(fe.Position) != num(t, c, "position") {
		t.Fatalf("position %d, want %d", fe.Position, num(t, c, "position"))
	}
}

// --- layouts.json ---

func presetCase(t *testing.T, c obj) {
	name := str(t, c, "name")
	l, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	if up, err := Preset(strings.ToUpper(name)); err != nil || up != l {
		t.Fatalf("Preset(%q) differs: %v", strings.ToUpper(name), err)
	}
	if l.TimeBits() != uint32(num(t, c, "time_bits")) || l.DatacenterBits() != uint32(num(t, c, "datacenter_bits")) ||
		l.WorkerBits() != uint32(num(t, c, "worker_bits")) || l.SequenceBits() != uint32(num(t, c, "sequence_bits")) ||
		l.NodeBits() != uint32(num(t, c, "node_bits")) || l.TickMs() != num(t, c, "tick_ms") ||
		l.EpochMs() != num(t, c, "epoch_ms") || l.Order() != orderOf(t, str(t, c, "order")) {
		t.Fatalf("preset %s: %v", name, l)
	}
	if l.Limits().LastMs != num(t, c, "last_timestamp_ms") || l.Limits().MaxID != idAt(t, c, "max_id") {
		t.Fatalf("preset %s limits: %+v", name, l.Limits())
	}
	vars := map[string]Layout{"snowflake": Snowflake, "flake": Flake, "discord": Discord,
		"sonyflake": Sonyflake, "baidu": Baidu, "instagram": Instagram, "js53": JS53}
	if vars[name] != l {
		t.Fatalf("the package variable for %s differs from Preset(%q)", name, name)
	}
}

func invalidLayoutCase(t *testing.T, c obj) {
	_, err := layoutOf(t, c["layout"])
	expectError(t, err, c)
}

func invalidGeneratorCase(t *testing.T, c obj) {
	o, err := optionsOf(t, c, nonZero)
	if err != nil {
		t.Fatalf("an invalid generator's option refused at Set: %v", err)
	}
	g, err := New(o)
	if g != nil {
		t.Fatal("New returned a generator with an error")
	}
	expectError(t, err, c)
}

// optionFields: each option of the core's table and the Options field that holds it.
var optionFields = map[string]string{
	"datacenter": "Datacenter", "worker": "Worker", "node": "Node or NodeSource", "layout": "Layout",
	"overflow": "Overflow", "clock_backwards": "ClockBackwards", "max_borrow_ms": "MaxBorrow",
	"max_wait_ms": "MaxWait", "lease": "Lease", "lease_ttl_ms": "LeaseTTL", "max_sequence": "MaxSequence",
	"clock": "Clock", "state": "State", "require_node": "RequireNode",
}

// optionEnvCase: the options the environment gives (name -> text), through
// Options.Set, built with RequireNode on a manual clock: fine, or the vector's
// error (at Set for a malformed number, else at New).
func optionEnvCase(t *testing.T, c obj) {
	clock, err := NewManualClock(time.UnixMilli(1_700_000_000_000), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer clock.Close()
	// The table's order, as every binding applies them.
	setAndBuild(t, Options{RequireNode: true, Clock: clock}, c, OptionNames())
}

// setAndBuild sets the case's options named in names through Options.Set, as text,
// and builds: fine, or the case's error (at Set for a malformed value, else at New).
func setAndBuild(t *testing.T, o Options, c obj, names []string) {
	t.Helper()
	given := c["options"].(obj)
	var err error
	for _, name := range names {
		if v, ok := given[name]; ok {
			if err = o.Set(name, fmt.Sprint(v)); err != nil {
				break
			}
		}
	}
	if err == nil {
		var g *Generator
		if g, err = New(o); err == nil {
			g.Close()
		}
	}
	if _, bad := c["error"]; !bad {
		if err != nil {
			t.Fatalf("%v", err)
		}
		return
	}
	expectError(t, err, c)
}

// optionSettingsCase: a settings key Set refuses names it, as every binding does;
// the names Set takes are the table's settings.
func optionSettingsCase(t *testing.T, c obj) {
	names := map[string]bool{}
	for _, n := range OptionNames() {
		names[n] = true
	}
	listed, _ := c["names"].([]any)
	for _, n := range listed {
		if !names[n.(string)] {
			t.Fatalf("OptionNames() lacks %v", n)
		}
	}
	if _, bad := c["error"]; !bad {
		return
	}
	var o Options
	var err error
	for _, key := range c["keys"].([]any) {
		if err = o.Set(key.(string), "1"); err != nil && strings.Contains(err.Error(), "unknown setting") {
			break
		}
	}
	expectError(t, err, c)
	if fe := err.(*Error); !strings.HasPrefix(fe.Message, str(t, c, "message_starts")) {
		t.Fatalf("%q does not start with %q", fe.Message, str(t, c, "message_starts"))
	}
}

// TestSetEveryOptionByName: every setting of the core's table (tests/vectors/options.json)
// goes through Options.Set, at its default, into one generator that builds: a new
// option needs no Go field (the C library keeps one with no field of its own in
// flakeid_options' by-name slots), and one Set refuses fails here.
func TestSetEveryOptionByName(t *testing.T) {
	clock, err := NewManualClock(time.UnixMilli(1_700_000_000_000), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer clock.Close()
	o := Options{Clock: clock}
	set := 0
	for _, row := range load(t, filepath.Join(vectorDir(t), "options.json"))["options"].([]any) {
		r := row.(obj)
		if r["setting"] != true || r["default"] == "" || r["requires"] != nil {
			continue // not from outside a program, no default text (node, lease, state), or needs another
		}
		if err := o.Set(r["name"].(string), r["default"].(string)); err != nil {
			t.Fatalf("Set(%v, %v): %v", r["name"], r["default"], err)
		}
		set++
	}
	g, err := New(o)
	if err != nil {
		t.Fatalf("%d options set by name: %v", set, err)
	}
	defer g.Close()
	if set < 8 || g.Node() != 0 {
		t.Fatalf("%d options set by name, node %d", set, g.Node())
	}
}

// optionEntryCase: each option of the core's table is a field of Options or, with
// no field of its own (every option added after require_node), a name Options.Set
// takes (the C library keeps it in flakeid_options' by-name slots).
func optionEntryCase(t *testing.T, c obj) {
	fields, ok := optionFields[str(t, c, "name")]
	if !ok {
		if !slices.Contains(OptionNames(), str(t, c, "name")) {
			t.Fatalf("option %q of the core's table is neither in Options nor a name Set takes", str(t, c, "name"))
		}
		return
	}
	for _, f := range strings.Split(fields, " or ") {
		if _, ok := reflect.TypeOf(Options{}).FieldByName(f); !ok {
			t.Fatalf("option %q: Options has no field %s", str(t, c, "name"), f)
		}
	}
}

// TestOptionsHoldsOnlyTheTable: every field of Options is an option of the core's
// table (optionFields, which optionEntryCase holds to tests/vectors/options.json),
// so the typed struct can neither miss an option nor grow one the engine lacks.
func TestOptionsHoldsOnlyTheTable(t *testing.T) {
	claimed := map[string]bool{}
	for _, fields := range optionFields {
		for _, f := range strings.Split(fields, " or ") {
			claimed[f] = true
		}
	}
	ty := reflect.TypeOf(Options{})
	for i := 0; i < ty.NumField(); i++ {
		if ty.Field(i).IsExported() && !claimed[ty.Field(i).Name] {
			t.Errorf("Options.%s is no option of the core's table", ty.Field(i).Name)
		}
	}
}

// optionCase builds Options from a case. A 0 is "not given" in Options (the
// library's default): only the cases that build fine give 0, and the default
// builds fine too.
func optionCase(t *testing.T, c obj) {
	optionCaseByName(t, c)
	o, err := optionsOf(t, c, num)
	if err != nil {
		expectError(t, err, c)
		return
	}
	g, err := New(o)
	if _, bad := c["error"]; !bad {
		if err != nil {
			t.Fatalf("%v", err)
		}
		g.Close()
		return
	}
	if g != nil {
		t.Fatal("New returned a generator with an error")
	}
	expectError(t, err, c)
}

// optionCaseByName: the case again with every option through Options.Set, as text,
// on a manual clock: the path of an option with no field of its own (the C library's
// by-name slots), so a slot the library dropped fails the case's error here.
func optionCaseByName(t *testing.T, c obj) {
	clock, err := NewManualClock(time.UnixMilli(1_700_000_000_000), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer clock.Close()
	setAndBuild(t, Options{Layout: layoutOK(t, c), Clock: clock}, c, OptionNames())
}

// Options read 0 as "not given" (the library's default): a vector that gives 0
// cannot be expressed, so it fails here rather than test something else.
// optionsOf builds Options from a case's layout and options, reading numbers with
// numOf (num, or nonZero where a 0 would be taken for "not given"). An option with
// no field of its own goes through Options.Set, as its text: its error is returned.
func optionsOf(t *testing.T, c obj, numOf func(*testing.T, obj, string) uint64) (Options, error) {
	t.Helper()
	o := Options{Layout: layoutOK(t, c)}
	ms := func(opts obj, k string) time.Duration { return time.Duration(numOf(t, opts, k)) * time.Millisecond }
	for k, v := range c["options"].(obj) {
		opts := obj{k: v}
		switch k {
		case "node":
			if s, ok := v.(string); ok {
				o.NodeSource = s
			} else {
				o.Node = numOf(t, opts, k)
			}
		case "datacenter":
			o.Datacenter = numOf(t, opts, k)
		case "worker":
			o.Worker = numOf(t, opts, k)
		case "overflow":
			o.Overflow = overflowOf(str(t, opts, k))
		case "clock_backwards":
			o.ClockBackwards = clockBackwardsOf(str(t, opts, k))
		case "max_borrow_ms":
			o.MaxBorrow = ms(opts, k)
		case "max_wait_ms":
			o.MaxWait = ms(opts, k)
		case "lease":
			o.Lease = str(t, opts, k)
		case "lease_ttl_ms":
			o.LeaseTTL = ms(opts, k)
		case "max_sequence":
			n := numOf(t, opts, k)
			o.MaxSequence = &n
		case "state":
			o.State = str(t, opts, k)
		case "require_node":
			o.RequireNode = v.(bool)
		default: // an option with no field of its own: by name, as its text
			if err := o.Set(k, fmt.Sprint(v)); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

func nonZero(t *testing.T, c obj, key string) uint64 {
	t.Helper()
	v := num(t, c, key)
	if v == 0 {
		t.Fatalf("%s: 0 means \"not given\" in Options: this vector needs another way in", key)
	}
	return v
}

func overflowOf(s string) Overflow {
	switch s {
	case "wait":
		return OverflowWait
	case "borrow":
		return OverflowBorrow
	}
	return Overflow(^uint32(0)) // outside the enum: the library must refuse it
}

func clockBackwardsOf(s string) ClockBackwards {
	switch s {
	case "error":
		return ClockBackwardsError
	case "wait":
		return ClockBackwardsWait
	case "monotonic":
		return ClockBackwardsMonotonic
	}
	return ClockBackwards(^uint32(0))
}

// --- compose.json ---

func composeCase(t *testing.T, c obj) {
	l := layoutOK(t, c)
	want := idAt(t, c, "id")
	ts := ms(num(t, c, "timestamp_ms"))
	if id, err := l.Compose(ts, num(t, c, "node"), num(t, c, "sequence")); err != nil || id != want {
		t.Fatalf("Compose: %d, %v; want %d", id, err, want)
	}
	if id, err := l.ComposeParts(ts, num(t, c, "datacenter"), num(t, c, "worker"), num(t, c, "sequence")); err != nil || id != want {
		t.Fatalf("ComposeParts: %d, %v; want %d", id, err, want)
	}
	p, err := Decompose(want, l)
	if err != nil {
		t.Fatal(err)
	}
	wantParts := Parts{TimestampMs: num(t, c, "timestamp_ms"), Ticks: num(t, c, "ticks"), Node: num(t, c, "node"),
		Datacenter: num(t, c, "datacenter"), Worker: num(t, c, "worker"), Sequence: num(t, c, "sequence")}
	if p != wantParts {
		t.Fatalf("Decompose: %+v, want %+v", p, wantParts)
	}
	if !p.Time().Equal(ts) {
		t.Fatalf("Parts.Time %v, want %v", p.Time(), ts)
	}
	if c["layout"] == "snowflake" {
		if p2, err := want.Parts(); err != nil || p2 != p {
			t.Fatalf("ID.Parts: %+v, %v", p2, err)
		}
		if !want.Time().Equal(ts) {
			t.Fatalf("ID.Time %v, want %v", want.Time(), ts)
		}
	}
}

func composeErrorCase(t *testing.T, c obj) {
	l := layoutOK(t, c)
	_, err := l.Compose(ms(num(t, c, "timestamp_ms")), num(t, c, "node"), num(t, c, "sequence"))
	expectError(t, err, c)
}

func decomposeErrorCase(t *testing.T, c obj) {
	_, err := Decompose(idAt(t, c, "id"), layoutOK(t, c))
	expectError(t, err, c)
}

func rangeCase(t *testing.T, c obj) {
	first, last, err := layoutOK(t, c).IDRange(ms(num(t, c, "start_ms")), ms(num(t, c, "end_ms")))
	if err != nil || first != idAt(t, c, "first") || last != idAt(t, c, "last") {
		t.Fatalf("IDRange: [%d, %d], %v", first, last, err)
	}
}

// --- encodings.json ---

func encodingCase(t *testing.T, c obj) {
	id := idAt(t, c, "id")
	for _, enc := range Encodings() {
		want := str(t, c, enc.String())
		if got := Encode(id, enc); got != want {
			t.Fatalf("%s: %q, want %q", enc, got, want)
		}
		if got := id.Encode(enc); got != want {
			t.Fatalf("ID.Encode(%s): %q", enc, got)
		}
		if back, err := Decode(want, enc); err != nil || back != id {
			t.Fatalf("%s: %q decodes to %d, %v", enc, want, back, err)
		}
	}
	b := id.Bytes()
	if got := fmt.Sprintf("%x", b[:]); got != str(t, c, "bytes") {
		t.Fatalf("bytes %s, want %s", got, str(t, c, "bytes"))
	}
	if back, err := IDFromBytes(b[:]); err != nil || back != id {
		t.Fatalf("IDFromBytes: %d, %v", back, err)
	}
	// JSON: a string out; a string or a number in.
	js, _ := json.Marshal(id)
	if string(js) != `"`+str(t, c, "decimal")+`"` {
		t.Fatalf("MarshalJSON: %s", js)
	}
	for _, in := range []string{string(js), str(t, c, "decimal")} {
		var back ID
		if err := json.Unmarshal([]byte(in), &back); err != nil || back != id {
			t.Fatalf("UnmarshalJSON(%s): %d, %v", in, back, err)
		}
	}
}

func aliasCase(t *testing.T, c obj) {
	enc := encodingOf(t, str(t, c, "encoding"))
	if id, err := Decode(str(t, c, "text"), enc); err != nil || id != idAt(t, c, "id") {
		t.Fatalf("Decode(%q): %d, %v", str(t, c, "text"), id, err)
	}
}

func badTextCase(t *testing.T, c obj) {
	_, err := Decode(str(t, c, "text"), encodingOf(t, str(t, c, "encoding")))
	expectError(t, err, c)
}

func encodingOf(t *testing.T, name string) Encoding {
	for _, e := range Encodings() {
		if e.String() == name {
			return e
		}
	}
	t.Fatalf("unknown encoding %q", name)
	return 0
}

// --- timelines.json ---

func timelineCase(t *testing.T, tl obj) {
	clock, err := NewManualClock(ms(num(t, tl, "start_ms")), time.Duration(num(t, tl, "auto_advance_ms"))*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer clock.Close()
	o := Options{
		Layout:         layoutOK(t, tl),
		NodeSource:     fmt.Sprint(num(t, tl, "node")), // as text: a zero Node is "not given"
		Overflow:       overflowOf(str(t, tl, "overflow")),
		ClockBackwards: clockBackwardsOf(str(t, tl, "clock_backwards")),
		MaxWait:        time.Duration(nonZero(t, tl, "max_wait_ms")) * time.Millisecond,
		Clock:          clock,
	}
	if o.Overflow == OverflowBorrow {
		o.MaxBorrow = time.Duration(nonZero(t, tl, "max_borrow_ms")) * time.Millisecond
	}
	g, err := New(o)
	if err != nil {
		t.Fatalf("%s: %v", str(t, tl, "name"), err)
	}
	defer g.Close()
	if g.Node() != num(t, tl, "node") {
		t.Fatalf("node %d", g.Node())
	}
	for i, s := range tl["steps"].([]any) {
		step := s.(obj)
		where := fmt.Sprintf("%s, step %d %v", str(t, tl, "name"), i, step)
		switch op := str(t, step, "op"); op {
		case "set":
			if err := clock.Set(ms(num(t, step, "ms"))); err != nil {
				t.Fatal(err)
			}
			continue
		case "next":
			id, err := g.Next()
			if _, fails := step["error"]; fails {
				if id != 0 {
					t.Fatalf("%s: an ID with an error", where)
				}
				expectError(t, err, step)
			} else if err != nil || id != idAt(t, step, "id") {
				t.Fatalf("%s: got %d, %v", where, id, err)
			}
		case "next_ids":
			ids, err := g.NextN(int(num(t, step, "n")))
			if _, fails := step["error"]; fails {
				expectError(t, err, step)
				break
			}
			want := step["ids"].([]any)
			if err != nil || len(ids) != len(want) {
				t.Fatalf("%s: %v, %v", where, ids, err)
			}
			for k := range want {
				if ids[k] != idOf(t, want[k].(string)) {
					t.Fatalf("%s: ids[%d] = %d", where, k, ids[k])
				}
			}
		default:
			t.Fatalf("%s: unknown op %q", where, op)
		}
		if _, ok := step["clock_ms"]; ok && !clock.Now().Equal(ms(num(t, step, "clock_ms"))) {
			t.Fatalf("%s: clock %v", where, clock.Now())
		}
	}
}
