// Package body is the test that both packages of go_test_test.go's `go test ./...`
// run (each package a process, side by side): generators with no node id, each
// test its own, left to the garbage collector.
package body

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flakeid "github.com/flakeid/flakeid-go"
)

// Run builds three generators with no node id, issues 5,000 IDs from each and
// writes them to a file of its own in FLAKEID_TEST_OUT.
func Run(t *testing.T) {
	var out strings.Builder
	for i := 0; i < 3; i++ {
		g, err := flakeid.New(flakeid.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 5000; j++ {
			id, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&out, uint64(id))
		}
	}
	// Held while the other package's process runs too.
	time.Sleep(300 * time.Millisecond)
	name := filepath.Join(os.Getenv("FLAKEID_TEST_OUT"), fmt.Sprintf("%d.txt", os.Getpid()))
	if err := os.WriteFile(name, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
