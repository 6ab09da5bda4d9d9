package frameworks

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// docs/frameworks.md's Go blocks (fenced `go frameworks`): whole programs, each
// run with `go run` as a package of its own inside this module (so GORM and pgx
// resolve), with DATABASE_URL naming the fixture's PostgreSQL and FLAKEID_NODE set,
// as the doc tells a reader to run them.
func TestFrameworkDocBlocks(t *testing.T) {
	url := postgresURL(t)
	dir := t.TempDir()
	script := filepath.Join("..", "..", "tests", "docs", "blocks.py")
	if out, err := exec.Command("python3", script, "extract", "go", dir, "--frameworks").CombinedOutput(); err != nil {
		t.Fatalf("blocks.py extract: %v\n%s", err, out)
	}
	index, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer index.Close()
	n := 0
	for lines := bufio.NewScanner(index); lines.Scan(); n++ {
		f := strings.Split(lines.Text(), "\t") // file, doc, line
		t.Run(f[1]+":"+f[2], func(t *testing.T) {
			code, err := os.ReadFile(filepath.Join(dir, f[0]))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(code), "package main") {
				t.Fatalf("%s:%s: a `go frameworks` block is a whole program (package main)", f[1], f[2])
			}
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			pkg, err := os.MkdirTemp("testdata", "docblock-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(pkg)
			line, _ := strconv.Atoi(f[2])
			src := "//line " + f[1] + ":" + strconv.Itoa(line+1) + "\n" + string(code)
			if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "run", ".")
			cmd.Dir = pkg
			cmd.Env = append(os.Environ(), "DATABASE_URL="+url, "FLAKEID_NODE=7")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go run: %v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
	if n == 0 {
		t.Fatal("no `go frameworks` block in the docs (docs/frameworks.md has the GORM example)")
	}
}
