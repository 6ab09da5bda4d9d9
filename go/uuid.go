package flakeid

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// UUID is a 128-bit ID, 16 bytes big-endian as RFC 9562 writes them: a UUIDv7
// from a UUIDGenerator, or any UUID, ULID or TypeID read by ParseUUID, ParseULID
// and ParseTypeID (a ULID and a UUID are the same 128 bits). Its zero value is the
// nil UUID. It is comparable, and UUIDv7s of one generator compare (as byte
// arrays, bytes.Compare) in the order they were issued.
type UUID [16]byte

// String is the lowercase 8-4-4-4-12 text.
func (u UUID) String() string { return cUUIDFormat(textUUID, u) }

// ULID is the same 128 bits as a ULID: 26 upper-case Crockford base32 characters.
func (u UUID) ULID() string { return cUUIDFormat(textULID, u) }

// TypeID is prefix, "_" and the lowercase ULID text (the text alone for an empty
// prefix); a bad prefix is ErrConfig naming prefix.
func (u UUID) TypeID(prefix string) (string, error) { return cTypeIDFormat(prefix, u) }

// Version is the version field (7 for a UUIDv7).
func (u UUID) Version() int { return cUUIDVersion(u) }

// TimestampMs is the Unix millisecond a UUIDv7 carries; a UUID of another version
// is ErrParse.
func (u UUID) TimestampMs() (uint64, error) { return cUUID7TimestampMs(u) }

// ULIDTimestampMs is the Unix millisecond in the first 48 bits, a ULID's time
// whatever the other bits (a UUIDv7's too; TimestampMs refuses other versions).
func (u UUID) ULIDTimestampMs() uint64 { return cULIDTimestampMs(u) }

// Time is TimestampMs as a time.Time (UTC).
func (u UUID) Time() (time.Time, error) {
	ms, err := u.TimestampMs()
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(ms)).UTC(), nil
}

// Decompose gives the parts ComposeUUID7 takes; a value that is not a version-7,
// variant-10 UUID is ErrParse.
func (u UUID) Decompose() (ms uint64, randA uint16, randB uint64, err error) {
	return cUUID7Decompose(u)
}

// MarshalText writes the 8-4-4-4-12 text (JSON, map keys, YAML).
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads UUID text (ParseUUID); on failure u is unchanged.
func (u *UUID) UnmarshalText(b []byte) error {
	v, err := ParseUUID(string(b))
	if err == nil {
		*u = v
	}
	return err
}

// Value stores the UUID as its 8-4-4-4-12 text, which every database/sql driver
// sends for a PostgreSQL uuid column (and a text column holds as written).
func (u UUID) Value() (driver.Value, error) { return u.String(), nil }

// Scan reads a uuid column: text (string, or []byte of text, as pgx and lib/pq
// send it) or 16 raw bytes (a BINARY(16) column). Bad text is ErrParse naming
// the position; NULL and other types are ErrParse too: scan a nullable column
// into sql.Null[flakeid.UUID] or *flakeid.UUID. On failure u is unchanged.
func (u *UUID) Scan(src any) error {
	var v UUID
	var err error
	switch s := src.(type) {
	case string:
		v, err = ParseUUID(s)
	case []byte:
		if len(s) == len(v) {
			copy(v[:], s)
		} else {
			v, err = ParseUUID(string(s))
		}
	case nil:
		return &Error{Kind: ErrParse, Message: "a UUID column's NULL (scan a nullable column into sql.Null[flakeid.UUID])"}
	default:
		return &Error{Kind: ErrParse, Message: fmt.Sprintf("a %T is no UUID (scan wants string or []byte)", src)}
	}
	if err == nil {
		*u = v
	}
	return err
}

// ParseUUID reads 8-4-4-4-12 text or its 32 hex digits, in any case; bad text is
// ErrParse naming the 0-based position.
func ParseUUID(s string) (UUID, error) { return cUUIDParse(textUUID, s) }

// ParseULID reads 26 Crockford base32 characters, in any case (I and L are 1, O
// is 0; U is refused; at most 7ZZZZZZZZZZZZZZZZZZZZZZZZZ): the same 128 bits as
// a UUID. Bad text is ErrParse naming the position.
func ParseULID(s string) (UUID, error) { return cUUIDParse(textULID, s) }

// ParseTypeID splits a TypeID (spec v0.3) at its last "_" into its prefix and its
// 128 bits; bad text is ErrParse naming the position.
func ParseTypeID(s string) (prefix string, u UUID, err error) { return cTypeIDParse(s) }

// ComposeUUID7 is the UUIDv7 of Unix millisecond ms with randA (12 bits) and
// randB (62 bits), RFC 9562 §5.7; a part wider than its field is ErrConfig
// naming it.
func ComposeUUID7(ms uint64, randA uint16, randB uint64) (UUID, error) {
	return cUUID7Compose(ms, uint32(randA), randB)
}

// UUID7Range is the first and last 128-bit value whose time is within
// startMs..=endMs (Unix ms), for WHERE id BETWEEN first AND last.
func UUID7Range(startMs, endMs uint64) (first, last UUID, err error) {
	return cUUID7Range(startMs, endMs)
}

// UUIDOptions configure a UUIDGenerator: the core's clock options, by name (Set),
// and a manual clock. The zero value is the defaults: borrow when a
// millisecond's 65,536 are used, fail when the clock goes back.
type UUIDOptions struct {
	// Clock is a manual clock for deterministic tests; nil is the system clock.
	Clock *ManualClock
	// settings are Set's, by name.
	settings [][2]string
}

// Set sets the option name ("overflow", "clock_backwards", "max_borrow_ms",
// "max_wait_ms": UUIDOptionNames) from text, by the library's rules and messages:
// a node, layout or lease option, an unknown name or a malformed value is
// ErrConfig naming it. Ranges are checked by NewUUIDGenerator.
func (o *UUIDOptions) Set(name, text string) error {
	if err := cUUIDOptionSet(name, text); err != nil {
		return err
	}
	o.settings = append(o.settings, [2]string{name, text})
	return nil
}

// UUIDOptionNames lists the names UUIDOptions.Set takes, in the core's order.
func UUIDOptionNames() []string { return cUUIDOptionNames() }

// UUIDGenerator makes UUIDv7s, and ULIDs and TypeIDs of the same bits (RFC 9562
// §6.2 method 1, a 16-bit counter: docs/design.md). Safe for any number of
// goroutines: every ID it returns is greater than every ID it returned before.
// Close it when done; one dropped unclosed is freed by the garbage collector.
type UUIDGenerator struct {
	handle[uuidHandle]
}

// NewUUIDGenerator builds a 128-bit generator; an out-of-range option is
// ErrConfig naming it.
func NewUUIDGenerator(o UUIDOptions) (*UUIDGenerator, error) {
	p, err := cUUIDGeneratorNew(&o)
	if err != nil {
		return nil, err
	}
	g := &UUIDGenerator{}
	own(g, &g.handle, p, cUUIDGeneratorFree)
	return g, nil
}

// Next issues one UUIDv7: one call into the library.
func (g *UUIDGenerator) Next() (UUID, error) { return call(&g.handle, cUUIDNext) }

// NextN issues n UUIDv7s, increasing and in call order with the generator's other
// IDs, in one call into the library; n past the batch limit is ErrConfig naming
// n, as for Generator.NextN.
func (g *UUIDGenerator) NextN(n int) ([]UUID, error) {
	return nextN(n, g.Fill)
}

// Fill writes fresh UUIDv7s into every element of us, increasing, in one call
// into the library. On failure us is zeroed: it holds no ID.
func (g *UUIDGenerator) Fill(us []UUID) error {
	_, err := call(&g.handle, func(p uuidHandle) (struct{}, error) { return struct{}{}, cUUIDNextMany(p, us) })
	return err
}

// At makes a UUIDv7 of t's Unix millisecond (floored) and 74 random bits: an
// explicit time, outside the generator's sequence (not ordered after its earlier
// UUIDs, nor among others of that millisecond). A time before 1970 or past the
// 48-bit field is ErrConfig naming unix_ms.
func (g *UUIDGenerator) At(t time.Time) (UUID, error) {
	ms := t.UnixMilli()
	if t.Before(time.UnixMilli(ms)) {
		ms-- // UnixMilli truncates toward zero; a time before 1970 floors below it
	}
	return call(&g.handle, func(p uuidHandle) (UUID, error) { return cUUIDAt(p, ms) })
}

// Shifted makes a UUIDv7 of the generator's clock now shifted by d (negative: the
// past; whole milliseconds, floored), as PostgreSQL 18's uuidv7(shift): outside
// the sequence, as At. A shifted time outside the 48-bit field is ErrConfig
// naming shift_ms.
func (g *UUIDGenerator) Shifted(d time.Duration) (UUID, error) {
	ms := d.Milliseconds()
	if d < 0 && d%time.Millisecond != 0 {
		ms--
	}
	return call(&g.handle, func(p uuidHandle) (UUID, error) { return cUUIDShifted(p, ms) })
}

func (g *UUIDGenerator) text(form int, prefix string) (string, error) {
	return call(&g.handle, func(p uuidHandle) (string, error) { return cUUIDText(p, form, prefix) })
}

// NextString issues one UUIDv7 as its 8-4-4-4-12 text.
func (g *UUIDGenerator) NextString() (string, error) { return g.text(textUUID, "") }

// NextULID issues one ID as a ULID (the same bits as Next's).
func (g *UUIDGenerator) NextULID() (string, error) { return g.text(textULID, "") }

// NextTypeID issues one ID as a TypeID with prefix (checked first: a bad prefix,
// ErrConfig naming prefix, costs no ID).
func (g *UUIDGenerator) NextTypeID(prefix string) (string, error) { return g.text(textTypeID, prefix) }

// UUIDStats is what a UUIDGenerator has done since it was built.
type UUIDStats struct {
	// IDsIssued counts IDs handed out; TickWaits the milliseconds waited out
	// because one's 65,536 (or the borrow window) were used up.
	IDsIssued, TickWaits uint64
	// Lead is how far the last ID's time is ahead of the clock (borrowing, or a
	// clock that went back): the drift of the embedded time.
	Lead time.Duration
	// ClockRollbacks counts calls that found the clock behind IDs already issued;
	// MaxRollback is the largest such rollback.
	ClockRollbacks uint64
	MaxRollback    time.Duration
	// Reseeds counts forked children that went on with reseeded random bits
	// (a Go program does not fork; a C host of the library may).
	Reseeds uint64
}

// Stats returns a snapshot of the generator's statistics.
func (g *UUIDGenerator) Stats() (UUIDStats, error) { return call(&g.handle, cUUIDStats) }

// Close releases the generator. It waits for calls in progress; later calls
// return ErrClosed. Closing twice is a no-op.
func (g *UUIDGenerator) Close() error {
	return g.close(func(p uuidHandle) error {
		g.cleanup.Stop()
		err := cUUIDClose(p)
		cUUIDGeneratorFree(p)
		return err
	})
}
