package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agent-mcp/agent-mcp"

// layers is the README's picture (How it is built) as numbers: a package
// of the product may import packages of its own layer or lower ones, never
// higher. A directory stands for everything below it unless a longer one
// is listed.
var layers = map[string]int{
	"internal/pdf": 0, // a leaf: Read's PDF engine (tools/fs)
	"permissions":  1,
	"tools":        2,
	"orchestrator": 3,
	"server":       4,
	// chat's front end: the provider clients and the terminal UI sit
	// above the server, so the server can never link them.
	"internal/providers": 5,
	"internal/tui":       5,
	"internal/cli":       6,
	".":                  7, // main.go
}

// testOnly are the helper packages for tests: nothing in the product may
// import them.
var testOnly = []string{"internal/testbin", "internal/testmodel", "internal/testpdf", "internal/tooltest"}

// outside are the directories that are not the product: tests of the
// whole, the conformance fixture server and the benchmarks, which may
// import anything.
var outside = []string{"e2e", "conformance", "bench"}

// layerOf is the layer of the package in dir (relative to the module root,
// slash-separated), and false for a package the picture does not place.
func layerOf(dir string) (int, bool) {
	for d := dir; ; d = path.Dir(d) {
		if l, ok := layers[d]; ok && (d != "." || dir == ".") {
			return l, true
		}
		if d == "." || d == "/" {
			return 0, false
		}
	}
}

func hasPrefixDir(dir string, dirs []string) bool {
	for _, d := range dirs {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}

// TestImportLayers holds every import between the product's packages to
// the one-way rule permissions ← tools ← orchestrator ← server ←
// internal/cli ← main.go, reading the import lines of every non-test Go
// file (whatever its build tags). Tests may import upward: a tool's tests
// run it through the real pipeline (internal/tooltest).
func TestImportLayers(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if hasPrefixDir(dir, outside) || hasPrefixDir(dir, testOnly) {
			return nil
		}
		from, ok := layerOf(dir)
		if !ok {
			t.Logf("%s: not placed in the picture (add it to layers and to the README)", dir)
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip != module && !strings.HasPrefix(ip, module+"/") {
				continue
			}
			checked++
			to := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
			if to == "" {
				to = "."
			}
			if hasPrefixDir(to, testOnly) {
				t.Errorf("%s imports %s, a helper for tests only", p, to)
				continue
			}
			if l, ok := layerOf(to); ok && l > from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point down only, permissions ← tools ← orchestrator ← server ← internal/cli ← main.go", p, from, to, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d imports between agent-mcp's packages were read: is the test run from the module root?", checked)
	}
}
