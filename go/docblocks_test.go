package flakeid

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The docs' Go blocks (go/README.md, docs/*.md), each compiled and run as written.
// tests/docs/blocks.py finds them, the one parser of fences and flags for
// every language (`blocks.py extract go DIR`); a block fenced `go no_run` is not run.

// docBlock is one fenced block: its code as written and where it is.
type docBlock struct {
	file string // the extracted code, in the extract directory
	path string // the doc, relative to the repository root
	line int    // the line of the opening fence
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.path, b.line) }

// docBlocks extracts the blocks of lang into a temporary directory (with the
// seal.key docs/sealing.md's examples read) and lists them. Outside the repository
// (a packed module) there are no docs: the test skips.
func docBlocks(t *testing.T, lang string) (string, []docBlock) {
	t.Helper()
	script := filepath.Join("..", "tests", "docs", "blocks.py")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("tests/docs/blocks.py not found (outside the repository): %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("python3", script, "extract", lang, dir).CombinedOutput(); err != nil {
		t.Fatalf("blocks.py extract %s: %v\n%s", lang, err, out)
	}
	index, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer index.Close()
	var blocks []docBlock
	lines := bufio.NewScanner(index)
	for lines.Scan() {
		var b docBlock
		if _, err := fmt.Sscanf(strings.ReplaceAll(lines.Text(), "\t", " "), "%s %s %d", &b.file, &b.path, &b.line); err != nil {
			t.Fatalf("index.tsv: %q: %v", lines.Text(), err)
		}
		blocks = append(blocks, b)
	}
	return dir, blocks
}

// The packages a block that is not a whole program may use without importing them.
var docImports = map[string]string{
	"flakeid": `"github.com/flakeid/flakeid-go"`,
	"errors":  `"errors"`,
	"fmt":     `"fmt"`,
	"hex":     `"encoding/hex"`,
	"log":     `"log"`,
	"os":      `"os"`,
	"rand":    `"crypto/rand"`,
	"strings": `"strings"`,
	"time":    `"time"`,
}

var pkgUse = regexp.MustCompile(`\b([a-z]+)\.[A-Za-z]`)

// goProgram is a block as a program: a whole program (`package main`) as it is, a
// fragment as the body of main with the imports it uses. The //line directives make
// the compiler's messages point into the doc.
func goProgram(code string, b docBlock) string {
	at := fmt.Sprintf("//line %s:%d\n", b.path, b.line+1)
	if regexp.MustCompile(`(?m)^package `).MatchString(code) {
		return at + code
	}
	var imports []string
	for _, m := range pkgUse.FindAllStringSubmatch(code, -1) {
		if imp, ok := docImports[m[1]]; ok && !strings.Contains(strings.Join(imports, "\n"), imp) {
			imports = append(imports, imp)
		}
	}
	sort.Strings(imports)
	return "package main\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n\nfunc main() {\n" + at + code + "}\n"
}

// docChecks: what a block must print, beyond exiting 0 (by doc).
var docChecks = map[string]func(t *testing.T, dir, out string){
	// docs/sealing.md prints a sealed ID: it unseals, with the key and tweak it
	// used, to an ID of worker 1.
	"docs/sealing.md": func(t *testing.T, dir, out string) {
		text, err := os.ReadFile(filepath.Join(dir, "seal.key"))
		if err != nil {
			t.Fatal(err)
		}
		key, err := hex.DecodeString(strings.TrimSpace(string(text)))
		if err != nil {
			t.Fatal(err)
		}
		pub, err := Decode(strings.TrimSpace(out), Base62)
		if err != nil {
			t.Fatalf("printed %q: %v", out, err)
		}
		s, err := NewSealer(key, SealerOptions{Tweak: []byte("orders")})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		id, err := s.Unseal(pub)
		if p, _ := id.Parts(); err != nil || p.Worker != 1 {
			t.Fatalf("unsealed %d (%v): not a worker-1 ID", id, err)
		}
	},
}

// Every Go block of the docs, compiled and run as written, each as a package of its
// own under testdata/ (which `./...` skips; inside the module, so the import of
// github.com/flakeid/flakeid-go is this checkout), from a folder with a seal.key.
func TestDocBlocks(t *testing.T) {
	t.Parallel() // go build subprocesses, ~3 s: overlaps the long seal test
	dir, blocks := docBlocks(t, "go")
	if len(blocks) < 4 {
		t.Fatalf("%d Go blocks in the docs, want at least go/README.md's 3 and docs/sealing.md's 1", len(blocks))
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		t.Run(b.String(), func(t *testing.T) {
			code, err := os.ReadFile(filepath.Join(dir, b.file))
			if err != nil {
				t.Fatal(err)
			}
			pkg, err := os.MkdirTemp("testdata", "docblock-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(pkg)
			if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(goProgram(string(code), b)), 0o644); err != nil {
				t.Fatal(err)
			}
			key, err := os.ReadFile(filepath.Join(dir, "seal.key"))
			if err == nil {
				err = os.WriteFile(filepath.Join(pkg, "seal.key"), key, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "run", ".")
			cmd.Dir = pkg
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: the Go block failed (go run: %v):\n%s", b, err, out)
			}
			if check := docChecks[b.path]; check != nil {
				check(t, dir, string(out))
			}
		})
	}
}
