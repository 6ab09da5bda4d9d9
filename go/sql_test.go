package flakeid

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"
)

var (
	_ sql.Scanner   = (*ID)(nil)
	_ driver.Valuer = ID(0)
)

// Value and Scan round-trip every form a driver hands back, the sign bit included.
func TestSQLValueScan(t *testing.T) {
	for _, id := range []ID{0, 1, 910499571847892992, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		v, err := id.Value()
		if err != nil {
			t.Fatal(err)
		}
		i64, ok := v.(int64)
		if !ok {
			t.Fatalf("Value(%d) is a %T, want int64", id, v)
		}
		for _, src := range []any{i64, uint64(id), id.String(), []byte(id.String()), []byte(ID(i64).String())} {
			var got ID
			if err := got.Scan(src); err != nil || got != id {
				t.Errorf("Scan(%#v) = %d, %v; want %d", src, got, err, id)
			}
		}
		var neg ID // a BIGINT as text, as a driver in text mode sends it
		if err := neg.Scan([]byte(itoa(i64))); err != nil || neg != id {
			t.Errorf("Scan(%q) = %d, %v; want %d", itoa(i64), neg, err, id)
		}
	}
}

func TestSQLScanRefuses(t *testing.T) {
	for _, src := range []any{nil, 1.5, true, "12x", []byte(""), "-9223372036854775809"} {
		id := ID(7)
		err := id.Scan(src)
		if !errors.Is(err, ErrParse) || id != 7 {
			t.Errorf("Scan(%#v): %v, id %d; want ErrParse and the ID untouched", src, err, id)
		}
	}
}

func itoa(v int64) string {
	id := ID(v)
	if v < 0 {
		return "-" + ID(-uint64(id)).String()
	}
	return id.String()
}
