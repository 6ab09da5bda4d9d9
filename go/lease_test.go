package flakeid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Leases against real stores: a file lease always; Redis, PostgreSQL and etcd (and
// their TLS forms) when tests/env/testenv.py started them (`make test-go` runs
// `testenv.py run --all -- go test ...`). With FLAKEID_LEASE_REQUIRE=1 (what
// testenv sets when every server started), a missing URL fails instead of skipping.

func TestLeaseFile(t *testing.T) {
	// file:///tmp/x, or on Windows file:///C:/x (RFC 8089's drive letter).
	dir := filepath.ToSlash(t.TempDir())
	if !strings.HasPrefix(dir, "/") {
		dir = "/" + dir
	}
	leaseRoundTrip(t, "file://"+dir)
}

func TestLeaseStores(t *testing.T) {
	for _, v := range []string{
		"FLAKEID_TEST_REDIS_URL", "FLAKEID_TEST_REDISS_URL",
		"FLAKEID_TEST_POSTGRES_URL", "FLAKEID_TEST_POSTGRES_TLS_URL",
		"FLAKEID_TEST_ETCD_URL", "FLAKEID_TEST_ETCDS_URL",
	} {
		t.Run(strings.TrimPrefix(v, "FLAKEID_TEST_"), func(t *testing.T) {
			url := os.Getenv(v)
			if url == "" {
				if os.Getenv("FLAKEID_LEASE_REQUIRE") == "1" {
					t.Fatalf("%s is not set (run under tests/env/testenv.py)", v)
				}
				t.Skipf("%s is not set: run under `python3 tests/env/testenv.py run --all --`", v)
			}
			// A first acquire in a new namespace waits out the lock delay (one TTL,
			// docs/leases.md point 6): the stores run side by side.
			t.Parallel()
			leaseRoundTrip(t, url)
			if strings.Contains(url, "/ca.pem") {
				bad := withNamespace(strings.Replace(url, "/ca.pem", "/other-ca.pem", 1), t.Name()+"-ca")
				_, err := New(Options{Lease: bad})
				if !errors.Is(err, ErrLease) || !strings.Contains(err.Error(), "unknown CA") {
					t.Fatalf("a server certificate from another CA: %v", err)
				}
			}
		})
	}
}

// No secret of a lease URL reaches an error, through the C library: the userinfo's
// password and a secret query parameter (a URL that does not parse is quoted).
func TestLeaseURLSecretsAreNeverShown(t *testing.T) {
	for _, url := range []string{
		"postgres://app:hunter81@127.0.0.1:70000/db?namespace=x",
		"postgres://app@127.0.0.1:70000/db?password=hunter82&sslpassword=hunter83",
	} {
		_, err := New(Options{Lease: url})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "lease URL") {
			t.Fatalf("%v", err)
		}
		if strings.Contains(err.Error(), "hunter8") {
			t.Fatalf("a password in the error: %v", err)
		}
	}
}

// The shortest TTL a lease may have (1 s is the floor) that still leaves the renewals
// room on a busy CI machine: a first acquire in a new namespace waits out a lock
// delay of about one TTL, and the default 10 s made these tests wait 40 s.
const leaseTTL = 2 * time.Second

func withNamespace(url, name string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	ns := strings.NewReplacer("/", "-", "_", "-").Replace(fmt.Sprintf("go-%d-%s", os.Getpid(), name))
	return url + sep + "namespace=" + ns
}

// Two holders get the two lowest ids, their IDs carry them, and Close gives an id
// back to the next holder.
func leaseRoundTrip(t *testing.T, base string) {
	url := withNamespace(base, t.Name())
	a, err := New(Options{Lease: url, LeaseTTL: leaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(Options{Lease: url, LeaseTTL: leaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	if a.Node() != 0 || b.Node() != 1 {
		t.Fatalf("nodes %d and %d, want 0 and 1", a.Node(), b.Node())
	}
	for _, g := range []*Generator{a, b} {
		ids, err := g.NextN(100)
		if err != nil {
			t.Fatal(err)
		}
		id, err := g.Next()
		if err != nil || id <= ids[99] {
			t.Fatal(id, err)
		}
		if p, _ := id.Parts(); p.Node != g.Node() {
			t.Fatalf("ID %d carries node %d, leased %d", id, p.Node, g.Node())
		}
		if s, err := g.Stats(); err != nil || s.IDsIssued != 101 || s.LeaseState != "held" || s.LeaseRemaining <= 0 {
			t.Fatalf("stats of a leased generator: %+v, %v", s, err)
		}
	}
	if _, err := New(Options{Lease: url, LeaseTTL: leaseTTL, Node: 3}); !errors.Is(err, ErrConfig) {
		t.Fatalf("a lease and a node id: %v", err)
	}
	a.Close()
	c, err := New(Options{Lease: url, LeaseTTL: leaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Node() != 0 {
		t.Fatalf("after Close, the next holder got %d, want 0", c.Node())
	}
	b.Close()
	if _, err := b.Next(); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}

// State files (Options.State, docs/state.md): a restart behind the saved mark
// meets the clock-backwards policy; a second generator on the file is refused.
func TestStateFile(t *testing.T) {
	path := t.TempDir() + "/node5.state"
	if err := os.WriteFile(path, []byte("flakeid-state 1\nhigh_water_ms 1800000030000\nnode 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clock, err := NewManualClock(time.UnixMilli(1_800_000_000_000), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{Node: 5, State: path, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(); !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("restart behind the mark: want ErrClockBackwards, got %v", err)
	}
	var e *Error
	if _, err := New(Options{Node: 5, State: path}); !errors.As(err, &e) || e.Kind != ErrConfig || e.Field != "state" {
		t.Fatalf("a second generator on one file: want ErrConfig naming state, got %v", err)
	}
	g.Close()
	g = newGen(t, Options{Node: 5, State: path, Clock: clock, ClockBackwards: ClockBackwardsMonotonic})
	id, err := g.Next()
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := Decompose(id, Snowflake); p.TimestampMs <= 1_800_000_030_000 {
		t.Fatalf("monotonic after the mark: got %d", p.TimestampMs)
	}
}
