package flakeid

import (
	"database/sql/driver"
	"fmt"
	"strconv"
)

// Value stores the ID as an int64, the type every database/sql driver takes for a
// BIGINT column. Every preset but Flake leaves bit 63 clear, so the column holds
// the ID itself; a Flake ID with bit 63 set is stored as its negative
// two's-complement twin and Scan reads it back unchanged.
func (id ID) Value() (driver.Value, error) { return int64(id), nil }

// Scan reads a BIGINT (int64), an unsigned column (uint64) or decimal text
// (string, []byte: NUMERIC, TEXT, a driver that sends text). NULL is an ErrParse
// error: scan a nullable column into sql.Null[flakeid.ID] or *flakeid.ID.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*id = ID(v)
		return nil
	case uint64:
		*id = ID(v)
		return nil
	case []byte:
		return id.scanText(string(v))
	case string:
		return id.scanText(v)
	case nil:
		return refused("NULL (scan a nullable column into sql.Null[flakeid.ID])")
	default:
		return refused(fmt.Sprintf("a %T (scan wants int64, uint64, string or []byte)", src))
	}
}

// refused is the engine's refusal of a value of another type (what).
func refused(what string) error {
	_, err := cParseID(idOther, []byte(what))
	return err
}

// scanText takes the decimal form, and a negative BIGINT in text form (a Flake ID
// with bit 63 set, as Value stored it).
func (id *ID) scanText(s string) error {
	if len(s) > 0 && s[0] == '-' {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			_, err = cParseID(idText, []byte(s)) // the engine's words for text that is no ID
			return err
		}
		*id = ID(v)
		return nil
	}
	v, err := Decode(s, Decimal)
	if err == nil {
		*id = v
	}
	return err
}

// DatabaseLease is the Lease for the lease setting lease: lease itself, or for
// "database" the postgres:// URL of the app's own PostgreSQL, made by the engine
// from the connection string the app already opens its database with (dsn: a
// postgres:// URL or pgx's key=value form, as GORM's postgres.Open and
// database/sql's "pgx" driver take it) and the driver's name (vendor: GORM's
// db.Dialector.Name(), or "" when dsn says it). No URL or password is written
// twice:
//
//	db, err := gorm.Open(postgres.Open(dsn))
//	lease, err := flakeid.DatabaseLease("database", db.Dialector.Name(), dsn)
//	gen, err := flakeid.New(flakeid.Options{Lease: lease})
//
// A database other than PostgreSQL is ErrConfig on field "lease", naming what is
// supported (docs/leases.md, "The app's own database").
func DatabaseLease(lease, vendor, dsn string) (string, error) {
	var parts [][2]string
	if vendor != "" {
		parts = append(parts, [2]string{"vendor", vendor})
	}
	if dsn != "" {
		parts = append(parts, [2]string{"url", dsn})
	}
	return cDatabaseLease(lease, parts)
}
