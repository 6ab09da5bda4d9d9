package flakeid

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// `go test ./...` over two packages whose tests build generators with no node id:
// both pass side by side, and no ID is issued twice (each test process takes a
// free node id on the host).
func TestGoTestOverTwoPackagesWithDefaultGenerators(t *testing.T) {
	if runtime.GOOS == "windows" || os.Getenv("FLAKEID_HOST_GUARD") == "off" {
		t.Skip("needs the host guard (and a POSIX guard directory)")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "test", "-count=1", "-p", "2", "./...")
	cmd.Dir = filepath.Join("testdata", "twopkgs")
	cmd.Env = append(os.Environ(), "FLAKEID_TEST_OUT="+out, "FLAKEID_HOST_GUARD="+filepath.Join(t.TempDir(), "guard"))
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test ./...: %v\n%s", err, got)
	}
	files, err := os.ReadDir(out)
	if err != nil || len(files) != 2 {
		t.Fatalf("the two packages' IDs: %v %v\n%s", files, err, got)
	}
	seen := map[string]bool{}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(out, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range strings.Fields(string(text)) {
			if seen[id] {
				t.Fatalf("ID %s issued twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 2*3*5000 {
		t.Fatalf("%d IDs", len(seen))
	}
}
