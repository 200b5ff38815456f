package main

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agent-mcp/agent-mcp"

// allowed is the dependency graph of the product, one entry per package
// (its directory relative to the module root): the agent-mcp packages it
// may import, and nothing else of agent-mcp. A package missing from the
// table fails TestDeps, so a new package is placed on purpose. The
// README's picture (How it is built) is this table drawn by hand, and
// TestDepsPicture holds the two together.
//
// The layers read from the bottom up: permissions ← tools ← orchestrator
// ← server ← internal/{providers,tui} ← internal/cli ← main.go.
var allowed = map[string][]string{
	".":                  {"internal/cli", "sandbox/launcher"},
	"internal/cli":       {"server", "internal/tui", "internal/providers", "internal/redact", "orchestrator", "orchestrator/agent", "orchestrator/hooks", "orchestrator/llm", "orchestrator/permit", "orchestrator/upstream", "tools", "tools/builtin", "tools/lsp", "tools/shell", "sandbox", "sandbox/egress", "sandbox/proc", "permissions", "permissions/settings"},
	"internal/tui":       {"internal/providers", "orchestrator", "orchestrator/agent", "orchestrator/llm", "orchestrator/permit", "orchestrator/upstream", "tools", "permissions"},
	"internal/providers": {"orchestrator/llm"},

	"server": {"orchestrator", "orchestrator/agent", "orchestrator/llm", "tools", "permissions", "permissions/confine", "internal/largeargs"},

	"orchestrator/agent":    {"orchestrator", "orchestrator/llm", "tools", "permissions"},
	"orchestrator/permit":   {"orchestrator", "tools", "permissions", "permissions/confine", "permissions/shellcmd"},
	"orchestrator/hooks":    {"orchestrator", "permissions", "permissions/settings", "sandbox/proc"},
	"orchestrator/upstream": {"tools", "sandbox/proc"},
	"orchestrator/llm":      {},
	"orchestrator":          {"tools", "permissions", "internal/largeargs", "internal/redact"},

	"tools/builtin":               {"tools", "tools/fs", "tools/lsp", "tools/search", "tools/shell", "sandbox", "tools/web", "tools/workflow"},
	"tools/lsp":                   {"tools", "sandbox", "sandbox/proc"},
	"tools/lsp/internal/protogen": {},
	"tools/fs":                    {"tools", "permissions/confine", "internal/pdf", "internal/textdist"},
	"tools/search":                {"tools", "permissions/confine"},
	"tools/shell":                 {"tools", "sandbox", "sandbox/egress", "sandbox/proc", "permissions/confine", "permissions/shellcmd"},
	"tools/web":                   {"tools", "internal/netguard"},
	"tools/workflow":              {"tools", "permissions"},
	"tools":                       {"permissions", "internal/largeargs"},

	"sandbox":          {"sandbox/launcher", "sandbox/egress", "internal/protect"},
	"sandbox/egress":   {"internal/netguard"},
	"sandbox/launcher": {"internal/protect"},
	"sandbox/proc":     {},

	"permissions/settings": {"permissions", "permissions/confine", "internal/textdist"},
	"permissions":          {"permissions/confine", "permissions/shellcmd", "internal/protect"},
	"permissions/confine":  {},
	"permissions/shellcmd": {},
	"internal/pdf":         {},
	"internal/largeargs":   {},
	"internal/redact":      {},
	"internal/netguard":    {},
	"internal/protect":     {},
	"internal/textdist":    {},
}

// heavy are the large third-party families, each with the product packages
// that may import it themselves. Anything else reaching one does so
// through these.
var heavy = []struct {
	family string   // an import path prefix
	by     []string // the product packages that may import it directly
}{
	{"charm.land/", []string{"internal/tui"}},
	{"github.com/charmbracelet/", []string{"internal/tui"}},
	{"github.com/yuin/goldmark", []string{"internal/tui"}},
}

// serverSide are the packages `agent-mcp serve` is built of (a directory
// stands for everything below it): none of them may link a heavy family,
// directly or through anything they import.
var serverSide = []string{"server", "orchestrator", "tools", "sandbox", "permissions", "internal/pdf", "internal/largeargs", "internal/netguard", "internal/textdist", "internal/protect"}

// testOnly are the helper packages for tests: nothing in the product may
// import them.
var testOnly = []string{"internal/testbin", "internal/testmodel", "internal/testpdf", "internal/tooltest"}

// outside are the directories that are not the product: tests of the
// whole, the conformance fixture server, the benchmarks and the tests of
// the deployment files (deploy, a Go module of its own), which may import
// anything.
var outside = []string{"e2e", "conformance", "bench", "deploy"}

func under(dir string, dirs []string) bool {
	for _, d := range dirs {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}

// walkProduct calls fn with the path and the directory (slash-separated,
// relative to the module root) of every non-test Go file of the product,
// whatever its build tags: not the tests of the whole, the benchmarks,
// the conformance fixtures or the test helpers.
func walkProduct(fn func(path, dir string) error) error {
	return filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
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
		dir := filepath.ToSlash(filepath.Dir(p))
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || under(dir, outside) || under(dir, testOnly) {
			return nil
		}
		return fn(p, dir)
	})
}

// productImports reads the import lines of every non-test Go file of the
// product (whatever its build tags): directory → import path → the first
// file importing it.
func productImports(t *testing.T) map[string]map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string]map[string]string{}
	err := walkProduct(func(p, dir string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if pkgs[dir] == nil {
			pkgs[dir] = map[string]string{}
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if _, ok := pkgs[dir][ip]; !ok {
				pkgs[dir][ip] = p
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("only %d packages of agent-mcp were read: is the test run from the module root?", len(pkgs))
	}
	return pkgs
}

// local is the directory of an agent-mcp import path, and false for
// anything else.
func local(ip string) (string, bool) {
	if ip == module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(ip, module+"/")
	return rest, ok
}

// TestDeps holds every import of the product to the table: an agent-mcp
// import the importer's entry does not list fails, as does a product
// package without an entry, an entry for a package that is gone, an
// import of a test helper, and a heavy family imported by a package not
// named for it. Tests may import anything (a tool's tests run it through
// the real pipeline with internal/tooltest).
func TestDeps(t *testing.T) {
	t.Parallel()
	pkgs := productImports(t)
	for dir, imports := range pkgs {
		allow, listed := allowed[dir]
		if !listed {
			t.Errorf("%s: a product package the dependency table does not list (add it to allowed in deps_test.go and to the README's picture)", dir)
		}
		for ip, file := range imports {
			if to, ok := local(ip); ok {
				switch {
				case under(to, testOnly):
					t.Errorf("%s imports %s, a helper for tests only", file, to)
				case listed && !slices.Contains(allow, to):
					t.Errorf("%s imports %s, which %s may not import (allowed: %s)", file, to, dir, strings.Join(allow, ", "))
				}
				continue
			}
			for _, h := range heavy {
				if strings.HasPrefix(ip, h.family) && !slices.Contains(h.by, dir) {
					t.Errorf("%s imports %s: only %v may import %s*", file, ip, h.by, h.family)
				}
			}
		}
	}
	for dir := range allowed {
		if _, ok := pkgs[dir]; !ok {
			t.Errorf("%s: listed in the dependency table but no product package is there", dir)
		}
	}
}

// TestDepsServerSide checks what the server's packages link, transitively
// (go list's Deps for this platform): none of the heavy families, which
// only chat needs.
func TestDepsServerSide(t *testing.T) {
	t.Parallel()
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}
	for _, d := range serverSide {
		args = append(args, "./"+d+"/...")
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		n++
		for _, dep := range fields[1:] {
			for _, h := range heavy {
				if strings.HasPrefix(dep, h.family) {
					t.Errorf("%s links %s: the server's packages never link %s*", fields[0], dep, h.family)
				}
			}
		}
	}
	if n < 15 {
		t.Fatalf("go list named only %d packages:\n%s", n, out)
	}
}

// TestDepsPicture holds the documentation's picture of the packages (the
// code block of the README's How it is built, or of the docs/ page it
// moved to, that begins with main.go) to the table: the same packages,
// each with the same imports.
func TestDepsPicture(t *testing.T) {
	t.Parallel()
	picture := readPicture(t)
	for dir, allow := range allowed {
		drawn, ok := picture[dir]
		if !ok {
			t.Errorf("%s: in the dependency table, missing from the README's picture", dir)
			continue
		}
		want := slices.Sorted(slices.Values(allow))
		if !slices.Equal(drawn, want) {
			t.Errorf("%s: the README draws it importing %v, the table allows %v", dir, drawn, want)
		}
	}
	for dir := range picture {
		if _, ok := allowed[dir]; !ok {
			t.Errorf("%s: drawn in the README's picture, missing from the dependency table", dir)
		}
	}
}

// readPicture parses the picture: lines "pkgs → imports" up to
// "not the product:", continued on indented lines, where a{,/b,/c} stands
// for a, a/b and a/c, "," separates packages and "·" is nothing.
func readPicture(t *testing.T) map[string][]string {
	t.Helper()
	docs, _ := filepath.Glob("docs/*.md")
	var after string
	found := false
	for _, name := range append([]string{"README.md"}, docs...) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, after, found = strings.Cut(string(data), "```\nmain.go "); found {
			break
		}
	}
	if !found {
		t.Fatal("README.md, docs/*.md: no code block beginning with main.go (the package picture of How it is built)")
	}
	block, _, _ := strings.Cut("main.go "+after, "```")
	block, _, _ = strings.Cut(block, "not the product:")
	var entries []string
	for line := range strings.Lines(block) {
		line = strings.TrimRight(line, "\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasPrefix(line, " ") && len(entries) > 0 {
			entries[len(entries)-1] += " " + strings.TrimSpace(line)
			continue
		}
		entries = append(entries, line)
	}
	picture := map[string][]string{}
	for _, e := range entries {
		from, to, ok := strings.Cut(e, "→")
		if !ok {
			t.Fatalf("README picture: %q has no →", e)
		}
		var imports []string
		for _, p := range expand(to) {
			if p != "·" {
				imports = append(imports, p)
			}
		}
		slices.Sort(imports)
		for _, p := range expand(from) {
			if p == "main.go" {
				p = "."
			}
			picture[p] = imports
		}
	}
	return picture
}

// expand splits a list of the picture's package names at top-level commas
// and expands each a{x,y} into ax and ay.
func expand(s string) []string {
	var out []string
	depth, start := 0, 0
	s = strings.TrimSpace(s) + ","
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth > 0 {
				continue
			}
			item := strings.TrimSpace(s[start:i])
			start = i + 1
			if item == "" {
				continue
			}
			prefix, rest, ok := strings.Cut(item, "{")
			if !ok {
				out = append(out, item)
				continue
			}
			inner, suffix, _ := strings.Cut(rest, "}")
			for _, alt := range strings.Split(inner, ",") {
				out = append(out, prefix+alt+suffix)
			}
		}
	}
	return out
}
