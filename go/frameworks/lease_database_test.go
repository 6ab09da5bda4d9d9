package frameworks

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flakeid/flakeid-go"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Lease "database" with GORM: the node id leased from the app's own PostgreSQL
// (the DSN GORM opened, no URL written twice); a second holder gets another node
// id; rows get IDs of the leased node.
// A namespace's first use waits out the lock delay (TTL + margin + borrow,
// docs/leases.md): the shortest TTL keeps that wait short.
const leaseTTL = time.Second

func TestLeaseDatabaseIsGORMsPostgreSQL(t *testing.T) {
	dsn := postgresURL(t)
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := flakeid.DatabaseLease("database", db.Dialector.Name(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := flakeid.New(flakeid.Options{Lease: lease, LeaseTTL: leaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	other, err := flakeid.New(flakeid.Options{Lease: lease, LeaseTTL: leaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if gen.Node() == other.Node() {
		t.Fatalf("two holders of one database lease share node %d", gen.Node())
	}
	for _, g := range []*flakeid.Generator{gen, other} {
		s, err := g.Stats()
		if err != nil || s.LeaseState != "held" || g.NodeOrigin() != "leased" {
			t.Fatalf("not leased: %s %+v %v", g.NodeOrigin(), s, err)
		}
		id, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := id.Parts(); p.Node != g.Node() {
			t.Fatalf("id of node %d from the holder of %d", p.Node, g.Node())
		}
	}
}

// Another database is ErrConfig on lease, naming what is supported and no password;
// any other lease is kept.
func TestLeaseDatabaseRefusesOtherDatabases(t *testing.T) {
	for _, c := range [][2]string{
		{"mysql", "app:hunter2@tcp(127.0.0.1:3306)/shop"},
		{"sqlite", "file:shop.db"},
		{"", "sqlite:///shop.db"},
	} {
		_, err := flakeid.DatabaseLease("database", c[0], c[1])
		var e *flakeid.Error
		if !errors.As(err, &e) || !errors.Is(err, flakeid.ErrConfig) || e.Field != "lease" ||
			!strings.Contains(e.Message, "only PostgreSQL") || strings.Contains(e.Message, "hunter2") {
			t.Fatalf("%v: %v", c, err)
		}
	}
	if l, err := flakeid.DatabaseLease("file:///tmp/x", "sqlite", "x"); l != "file:///tmp/x" || err != nil {
		t.Fatal(l, err)
	}
}
