// Package frameworks holds the Go suite's tests that need a database and the
// frameworks' modules: database/sql through pgx against the fixture's PostgreSQL,
// and docs/frameworks.md's GORM example. A module of its own, so pgx and GORM are
// never requirements of github.com/flakeid/flakeid-go.
package frameworks

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"

	"github.com/flakeid/flakeid-go"
	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// postgresURL is the fixture's PostgreSQL (make test-go runs this module under
// tests/env/testenv.py run --postgres).
func postgresURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("FLAKEID_TEST_POSTGRES_URL")
	if url == "" {
		t.Fatal("FLAKEID_TEST_POSTGRES_URL is unset: run through make test-go (tests/env/testenv.py run --postgres -- go test ./...)")
	}
	return url
}

func openDB(t testing.TB, table, columns string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", postgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
		db.Close()
	})
	if _, err := db.Exec("DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table + " (" + columns + ")"); err != nil {
		t.Fatal(err)
	}
	return db
}

// IDs go in as query arguments (driver.Valuer) and come out through Scan, in
// pgx's binary protocol, in its text protocol (simple protocol), from NUMERIC and
// TEXT columns, and as NULL through sql.Null.
func TestDatabaseSQLRoundTrip(t *testing.T) {
	db := openDB(t, "go_orders", "id BIGINT PRIMARY KEY, note TEXT, big NUMERIC(20), txt TEXT")
	gen, err := flakeid.New(flakeid.Options{Worker: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	ids, err := gen.NextN(100)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range ids {
		if _, err := db.ExecContext(ctx, "INSERT INTO go_orders (id, note, big, txt) VALUES ($1, 'x', $2, $3)",
			id, id.String(), id.String()); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.QueryContext(ctx, "SELECT id, big::text, txt FROM go_orders ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for ; rows.Next(); n++ {
		var id, big, txt flakeid.ID
		if err := rows.Scan(&id, &big, &txt); err != nil {
			t.Fatal(err)
		}
		if id != ids[n] || big != id || txt != id {
			t.Fatalf("row %d: %d %d %d, want %d", n, id, big, txt, ids[n])
		}
	}
	if err := rows.Err(); err != nil || n != len(ids) {
		t.Fatalf("%d rows (%v), want %d", n, err, len(ids))
	}

	// The simple protocol sends arguments and results as text.
	var back flakeid.ID
	if err := db.QueryRowContext(ctx, "SELECT id FROM go_orders WHERE id = $1", pgx.QueryExecModeSimpleProtocol, ids[7]).Scan(&back); err != nil || back != ids[7] {
		t.Fatalf("simple protocol: %d, %v; want %d", back, err, ids[7])
	}

	var null sql.Null[flakeid.ID]
	if err := db.QueryRowContext(ctx, "SELECT NULL::bigint").Scan(&null); err != nil || null.Valid {
		t.Fatalf("NULL into sql.Null[ID]: %+v, %v", null, err)
	}
	var notNull flakeid.ID
	if err := db.QueryRowContext(ctx, "SELECT NULL::bigint").Scan(&notNull); !errors.Is(err, flakeid.ErrParse) {
		t.Fatalf("NULL into ID: %v, want ErrParse", err)
	}
}

// A Flake ID with bit 63 set is stored as a negative BIGINT and read back whole.
func TestDatabaseSQLSignBit(t *testing.T) {
	db := openDB(t, "go_flake", "id BIGINT PRIMARY KEY")
	id := flakeid.ID(1<<63 | 12345)
	if _, err := db.Exec("INSERT INTO go_flake VALUES ($1)", id); err != nil {
		t.Fatal(err)
	}
	var stored int64
	var back flakeid.ID
	if err := db.QueryRow("SELECT id, id FROM go_flake").Scan(&stored, &back); err != nil {
		t.Fatal(err)
	}
	if stored >= 0 || back != id {
		t.Fatalf("stored %d, read %d; want a negative BIGINT and %d", stored, back, id)
	}
}
