package flakeid

import (
	"encoding/binary"
	"errors"
	"strconv"
	"time"
)

// ID is a 64-bit ID. Every preset but Flake leaves bit 63 clear, so Int64 is
// lossless for them (a signed BIGINT column, a Java long).
type ID uint64

// String is the decimal form.
func (id ID) String() string { return strconv.FormatUint(uint64(id), 10) }

// Int64 is the ID as a signed integer (negative only for an ID with bit 63 set).
func (id ID) Int64() int64 { return int64(id) }

// Uint64 is the ID as an unsigned integer.
func (id ID) Uint64() uint64 { return uint64(id) }

// Encode gives the ID's text form. It panics on an Encoding value that is not one
// of the constants (as strconv.FormatInt does on a bad base).
func (id ID) Encode(enc Encoding) string { return Encode(id, enc) }

// Bytes is the ID as 8 bytes, big-endian (flake-idgen's form; sorts like the ID).
func (id ID) Bytes() [8]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	return b
}

// IDFromBytes reads 8 big-endian bytes.
func IDFromBytes(b []byte) (ID, error) {
	return cParseID(idBytes, b) // the engine's rule and message (8 bytes)
}

// Parts takes the ID apart under the Snowflake layout (use Layout.Decompose for
// another layout).
func (id ID) Parts() (Parts, error) { return Snowflake.Decompose(id) }

// Time is the start of the ID's tick under the Snowflake layout, in UTC; the zero
// time.Time for an ID that layout cannot hold (bit 63 set).
func (id ID) Time() time.Time {
	p, err := id.Parts()
	if err != nil {
		return time.Time{}
	}
	return p.Time()
}

// MarshalJSON writes the ID as a JSON string, as bwmarrin/snowflake does:
// JavaScript's numbers lose IDs above 2^53.
func (id ID) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 22)
	b = append(b, '"')
	b = strconv.AppendUint(b, uint64(id), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a decimal string ("123") or a number (123); null leaves the
// ID as it was.
func (id *ID) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := Decode(s, Decimal)
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			fe.Message += " (in JSON " + strconv.Quote(string(b)) + ")"
		}
		return err
	}
	*id = v
	return nil
}

// MarshalText and UnmarshalText use the decimal form (map keys, flags, YAML).
func (id ID) MarshalText() ([]byte, error) { return strconv.AppendUint(nil, uint64(id), 10), nil }

func (id *ID) UnmarshalText(b []byte) error {
	v, err := Decode(string(b), Decimal)
	if err == nil {
		*id = v
	}
	return err
}

// Encode gives an ID's text form; see ID.Encode.
func Encode(id ID, enc Encoding) string {
	s, err := cEncode(id, enc)
	if err != nil {
		panic(err)
	}
	return s
}

// Decode parses an ID's text form. Bad text is ErrParse, with the 0-based
// Position of the offending character.
func Decode(text string, enc Encoding) (ID, error) { return cDecode(text, enc) }

// Version is the version of the flakeid library linked in ("0.1.0").
func Version() string { return cVersion() }
