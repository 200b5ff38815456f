package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// constantNameLookups are the callers of reflect.Value.MethodByName known
// to pass only constant names, which the linker resolves to those methods
// alone (since Go 1.22): they keep no other method alive. Protobuf's
// descriptor formatter looks up "Get", "Path", "Package" and the like; it
// comes with the Prometheus client and the OTLP trace types.
var constantNameLookups = []string{
	"google.golang.org/protobuf/internal/descfmt.",
}

// TestBinary_links_no_reflective_method_lookup: where a program can look a
// method up by a name only known at run time (reflect.Value.Method, or
// MethodByName with a variable: text/template and html/template do), the
// linker must keep every exported method of every type that reaches an
// interface, since it cannot tell which one will be looked up. The
// provider SDKs' thousands of unused methods then stayed in the binary:
// 93 MB stripped, 52 MB without. The linker's dependency dump names every
// caller; each must be one known to pass constant names.
func TestBinary_links_no_reflective_method_lookup(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "agent-mcp"), ".")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%s", err, tail(out.String(), 2000))
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	callers := 0
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok || (to != "reflect.Value.Method" && to != "reflect.Value.MethodByName") {
			continue
		}
		callers++
		if from == "reflect.Value.MethodByName" || from == "reflect.Value.Method" {
			continue
		}
		known := false
		for _, p := range constantNameLookups {
			known = known || strings.HasPrefix(from, p)
		}
		if !known {
			t.Errorf("%s calls %s: something looks methods up by a name known only at run time (text/template?), so the linker keeps every exported method", from, to)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d callers of reflect.Value.Method/MethodByName, all with constant names", callers)
}

// chatOnly are the import path prefixes of the packages only chat uses:
// the terminal UI and its libraries (the text area's clipboard, the
// terminal's width and colour tables), the provider clients.
var chatOnly = []string{
	"github.com/agent-mcp/agent-mcp/internal/tui", "github.com/agent-mcp/agent-mcp/internal/providers",
	"charm.land/", "github.com/charmbracelet/", "github.com/yuin/goldmark",
	"github.com/atotto/clipboard", "github.com/mattn/go-runewidth", "github.com/rivo/uniseg",
	"github.com/clipperhouse/", "github.com/lucasb-eyer/go-colorful", "github.com/muesli/", "github.com/xo/terminfo",
	"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go",
	"github.com/alecthomas/chroma", "github.com/microcosm-cc/bluemonday",
}

// gone are chat-only packages that registered whole catalogues or type
// tables at start and are no longer linked: chroma's lexers and styles,
// glamour's HTML sanitiser, the provider SDKs.
var gone = []string{"github.com/alecthomas/chroma", "github.com/microcosm-cc/bluemonday",
	"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go"}

// goneExactly are chat-only packages, named exactly, that are no longer
// linked either: goldmark's extension package, which compiled Linkify's
// regular expressions at start (1.2 ms on a quiet machine, 3.9 ms on a
// loaded one, 264 KB; the chat's copy of its parsers, internal/tui/gfm.go,
// compiles them on first use), and its HTML renderer, which the terminal
// never used.
var goneExactly = []string{"github.com/yuin/goldmark/extension", "github.com/yuin/goldmark/renderer/html",
	"github.com/yuin/goldmark/renderer", "github.com/yuin/goldmark"}

// chatInitBudget bounds what the chat-only packages may allocate while
// the program initialises: every byte of it is spent by `serve` too,
// which never uses them. goldmark's util and parser tables are most of it
// (250 KB); the text area's clipboard looks its programs up on PATH (17 KB
// and 52 system calls). goldmark's extension package was 264 KB more;
// chroma's lexers and styles, before, were 3.9 MB in 60,000 allocations,
// the SDKs 360 KB.
const chatInitBudget = 352 << 10

// ownInitBudget bounds what agent-mcp's own packages allocate while the
// program initialises, together: their tables (ripgrep's file types, the
// shell analysis's program lists, Read's binary extensions) and regular
// expressions are built on first use. They took 89 KB before; 23 KB now.
const ownInitBudget = 32 << 10

// builtOnFirstUse are the packages whose package-level tables and regular
// expressions were made lazy (sync.OnceValue): each may allocate at most
// lazyInitBudget while the program initialises.
var builtOnFirstUse = []string{
	"github.com/agent-mcp/agent-mcp/tools/search", "github.com/agent-mcp/agent-mcp/tools/fs",
	"github.com/agent-mcp/agent-mcp/tools/shell", "github.com/agent-mcp/agent-mcp/server",
	"github.com/agent-mcp/agent-mcp/internal/tui",
}

const lazyInitBudget = 4 << 10

// TestServe_initialises_no_chat_only_package: Go runs the initialisation
// of every package linked in, so what the chat UI and the model clients
// do when the program starts, `serve` pays before it can answer
// initialize. GODEBUG=inittrace=1 reports each package's initialisation
// with its allocations (counted, not timed): the chat-only packages must
// stay within chatInitBudget together, and none of those gone may be
// linked again; agent-mcp's own packages stay within ownInitBudget, and
// those whose tables are built on first use within lazyInitBudget each.
func TestServe_initialises_no_chat_only_package(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "serve", "--cwd", t.TempDir(), "--state-dir", t.TempDir())
	cmd.Env = append(testbin.HermeticEnv(t), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput() // stdin is empty: serve ends at once
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, out)
	}
	var total, own int
	var who, ownWho []string
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		var pkg string
		var at, clock float64
		var bytes, allocs int
		if _, err := fmt.Sscanf(line, "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &pkg, &at, &clock, &bytes, &allocs); err != nil {
			continue
		}
		seen++
		if strings.HasPrefix(pkg, "github.com/agent-mcp/agent-mcp/") {
			own += bytes
			ownWho = append(ownWho, fmt.Sprintf("%s %d", pkg, bytes))
			if slices.Contains(builtOnFirstUse, pkg) && bytes > lazyInitBudget {
				t.Errorf("%s allocates %d bytes in %d allocations at start, over %d: its tables are to be built on first use", pkg, bytes, allocs, lazyInitBudget)
			}
		}
		if slices.Contains(goneExactly, pkg) {
			t.Errorf("serve initialises %s (%d bytes in %d allocations)", pkg, bytes, allocs)
		}
		for _, p := range chatOnly {
			if !strings.HasPrefix(pkg, p) {
				continue
			}
			if slices.Contains(gone, p) {
				t.Errorf("serve initialises %s (%d bytes in %d allocations)", pkg, bytes, allocs)
			}
			total += bytes
			who = append(who, fmt.Sprintf("%s %d", pkg, bytes))
		}
	}
	if seen == 0 {
		t.Fatalf("no inittrace lines in serve's output:\n%s", out)
	}
	if total > chatInitBudget {
		t.Errorf("the chat-only packages allocate %d bytes when serve starts, over the budget of %d:\n%s", total, chatInitBudget, strings.Join(who, "\n"))
	}
	if own > ownInitBudget {
		t.Errorf("agent-mcp's own packages allocate %d bytes when serve starts, over the budget of %d:\n%s", own, ownInitBudget, strings.Join(ownWho, "\n"))
	}
	t.Logf("chat-only packages allocate %d bytes at start, agent-mcp's own %d", total, own)
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
