// One of two packages of ordinary tests that go_test_test.go runs with
// `go test ./...` (each package a process, side by side): generators with no
// node id, each test its own, left to the garbage collector.
package a

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flakeid "github.com/flakeid/flakeid-go"
)

func TestDefaultGenerators(t *testing.T) {
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
