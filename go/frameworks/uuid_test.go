package frameworks

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/flakeid/flakeid-go"
	"github.com/jackc/pgx/v5"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// UUIDs go into a PostgreSQL uuid column as query arguments (driver.Valuer) and
// come back through Scan, in pgx's binary and text protocols, and from a text and
// a bytea column; the range functions select by time with an index.
func TestDatabaseSQLUUID(t *testing.T) {
	db := openDB(t, "go_uuids", "id uuid PRIMARY KEY, txt TEXT, raw BYTEA")
	gen, err := flakeid.NewUUIDGenerator(flakeid.UUIDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	ctx := context.Background()
	var ids []flakeid.UUID
	for range 100 {
		u, err := gen.Next()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u)
		if _, err := db.ExecContext(ctx, "INSERT INTO go_uuids VALUES ($1, $2, $3)", u, u.String(), u[:]); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := db.QueryContext(ctx, "SELECT id, txt, raw, id::text AS s FROM go_uuids ORDER BY id", mode)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ; rows.Next(); n++ {
			var id, txt, raw, asText flakeid.UUID
			if err := rows.Scan(&id, &txt, &raw, &asText); err != nil {
				t.Fatal(err)
			}
			if id != ids[n] || txt != id || raw != id || asText != id {
				t.Fatalf("mode %v row %d: %s %s %s %s, want %s (PostgreSQL's uuid order is ours)", mode, n, id, txt,
					raw, asText, ids[n])
			}
		}
		rows.Close()
		if n != len(ids) {
			t.Fatalf("%d rows", n)
		}
	}
	// PostgreSQL reads the time we wrote (uuid_extract_timestamp is 17+: compare the
	// first 48 bits instead), and the range selects every row of its milliseconds.
	ms, _ := ids[0].TimestampMs()
	lastMs, _ := ids[len(ids)-1].TimestampMs()
	first, last, err := flakeid.UUID7Range(ms, lastMs)
	if err != nil {
		t.Fatal(err)
	}
	var count int
	var pgMs int64
	err = db.QueryRowContext(ctx, `SELECT count(*), min(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint)
		FROM go_uuids WHERE id BETWEEN $1 AND $2`, first, last).Scan(&count, &pgMs)
	if err != nil || count != len(ids) || uint64(pgMs) != ms {
		t.Fatalf("range: %d rows, ms %d (want %d, %d): %v", count, pgMs, len(ids), ms, err)
	}
	// NULL: an ErrParse error, or sql.Null.
	var u flakeid.UUID
	if err := db.QueryRowContext(ctx, "SELECT NULL::uuid").Scan(&u); !errors.Is(err, flakeid.ErrParse) {
		t.Fatalf("NULL: %v", err)
	}
	var nu sql.Null[flakeid.UUID]
	if err := db.QueryRowContext(ctx, "SELECT NULL::uuid").Scan(&nu); err != nil || nu.Valid {
		t.Fatalf("sql.Null: %v", err)
	}
	// A text column holding no UUID: the core's refusal, naming the position.
	var fe *flakeid.Error
	if err := db.QueryRowContext(ctx, "SELECT 'not-a-uuid'::text").Scan(&u); !errors.As(err, &fe) || fe.Kind != flakeid.ErrParse {
		t.Fatalf("bad text: %v", err)
	}
}

// Document is a GORM model with a UUIDv7 primary key: PostgreSQL's uuid type,
// given by a BeforeCreate hook from the process's one UUIDGenerator (as
// docs/frameworks.md's Order does with flakeid.ID).
type Document struct {
	ID    flakeid.UUID `gorm:"type:uuid;primaryKey"`
	Title string
}

var docIDs *flakeid.UUIDGenerator

func (d *Document) BeforeCreate(*gorm.DB) (err error) {
	if d.ID == (flakeid.UUID{}) {
		d.ID, err = docIDs.Next()
	}
	return err
}

func TestGORMUUID(t *testing.T) {
	var err error
	if docIDs, err = flakeid.NewUUIDGenerator(flakeid.UUIDOptions{}); err != nil {
		t.Fatal(err)
	}
	defer docIDs.Close()
	db, err := gorm.Open(postgres.Open(postgresURL(t)), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrator().DropTable(&Document{}); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&Document{}); err != nil {
		t.Fatal(err)
	}
	defer db.Migrator().DropTable(&Document{})
	var colType string
	if err := db.Raw(`SELECT data_type FROM information_schema.columns
		WHERE table_name = 'documents' AND column_name = 'id'`).Scan(&colType).Error; err != nil || colType != "uuid" {
		t.Fatalf("documents.id is %q (%v), want uuid", colType, err)
	}
	start := time.Now()
	docs := make([]Document, 50)
	for i := range docs {
		docs[i].Title = "doc"
		if err := db.Create(&docs[i]).Error; err != nil {
			t.Fatal(err)
		}
		if docs[i].ID.Version() != 7 || (i > 0 && bytes.Compare(docs[i-1].ID[:], docs[i].ID[:]) >= 0) {
			t.Fatalf("doc %d: %s", i, docs[i].ID)
		}
	}
	// A batch insert runs the hook for each row too.
	batch := []Document{{Title: "a"}, {Title: "b"}}
	if err := db.Create(&batch).Error; err != nil || batch[0].ID == (flakeid.UUID{}) || batch[1].ID == batch[0].ID {
		t.Fatalf("batch: %v %v", batch, err)
	}
	var found Document
	if err := db.First(&found, "id = ?", docs[7].ID).Error; err != nil || found.ID != docs[7].ID {
		t.Fatalf("First: %v %v", found, err)
	}
	var ordered []Document
	if err := db.Order("id").Find(&ordered).Error; err != nil || len(ordered) != len(docs)+2 {
		t.Fatalf("Find: %d %v", len(ordered), err)
	}
	for i := range docs {
		if ordered[i].ID != docs[i].ID {
			t.Fatalf("ORDER BY id: row %d is %s, want %s (creation order)", i, ordered[i].ID, docs[i].ID)
		}
	}
	// The time in the key selects rows: WHERE id BETWEEN the range's bounds.
	first, last, err := flakeid.UUID7Range(uint64(start.Add(-time.Second).UnixMilli()), uint64(time.Now().UnixMilli()))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.Model(&Document{}).Where("id BETWEEN ? AND ?", first, last).Count(&n).Error; err != nil || n != int64(len(ordered)) {
		t.Fatalf("BETWEEN: %d %v", n, err)
	}
}
