package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// genCrossTree writes a random tree that exercises the walker: nested
// .gitignore files with negations, .ignore, hidden files and directories,
// binary files, several languages, VCS directories and a nested
// repository.
func genCrossTree(t *testing.T, seed uint64, files int) string {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("alpha beta gamma delta Error error ERROR foo bar baz qux func return nil Deadline deadline x1 y2 z3 (a) {b} [c]")
	exts := []string{".go", ".py", ".js", ".md", ".txt", ".log", ".json", ".rs", ""}
	dirs := []string{"", "src", "src/lib", "src/lib/deep", "docs", ".hidden", "build", "vendor/pkg", "logs", "node_modules/m"}
	tree := map[string]string{
		".git/HEAD":          "ref: refs/heads/main\n",
		".git/info/exclude":  "*.secret\n",
		".gitignore":         "*.log\n!keep.log\nbuild/\nnode_modules/\n/docs/*.txt\n",
		"src/.gitignore":     "*.json\n!config.json\nlib/deep/\n",
		"src/lib/.gitignore": "!*.log\n",
		".ignore":            "vendor/\n",
		"a.secret":           "alpha beta\n",
		"keep.log":           "alpha error\n",
		"src/config.json":    `{"alpha": "error"}` + "\n",
		"bin1.dat":           "alpha\x00beta\n",
		"src/bin2":           "\x00\x01 error foo\n",
		"nested/.git/HEAD":   "ref: refs/heads/main\n",
		"nested/inner.log":   "alpha error gamma\n", // the outer .gitignore stops at a nested repository
	}
	for i := range files {
		d := dirs[rng.IntN(len(dirs))]
		name := fmt.Sprintf("f%d%s", i, exts[rng.IntN(len(exts))])
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			for k := range 1 + rng.IntN(8) {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rng.IntN(len(words))])
			}
			b.WriteByte('\n')
		}
		tree[filepath.Join(d, name)] = b.String()
	}
	writeTree(t, dir, tree)
	return dir
}

// rgCommand runs ripgrep in dir the way Grep searches: hidden files,
// no VCS directories, no messages.
func rgCommand(t *testing.T, dir string, args ...string) string {
	t.Helper()
	base := []string{"--hidden", "--no-messages", "--no-config", "-g", "!.git"}
	cmd := exec.Command("rg", append(base, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return ""
	}
	if err != nil {
		t.Fatalf("rg %v: %v", args, err)
	}
	return out.String()
}

func sortedLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// TestCrossCheckRipgrep compares Grep with ripgrep on generated trees:
// the same files match, with the same counts, and content mode prints the
// same lines in the same order as `rg --sort path`.
func TestCrossCheckRipgrep(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("ripgrep (rg) is not installed: install the Debian package ripgrep to cross-check Grep against it")
	}
	cases := []struct {
		pattern string
		flags   map[string]any
		rgFlags []string
	}{
		{"alpha", nil, nil},
		{"error", map[string]any{"-i": true}, []string{"-i"}},
		{"foo|baz", nil, nil},
		{`\(a\)|\{b\}`, nil, nil},
		{`\bx1\b`, nil, nil},
		{`[A-Z]rror`, nil, nil},
		{`^beta`, nil, nil},
		// No required literal: the lazy DFA decides every line.
		{`\w\d\s*\(`, nil, nil},
		{`[a-z]+ [A-Z]\w+$`, nil, nil},
		{`(?i)^[d-f]\w+ \w+$`, nil, nil},
		{`[A-Z][a-z]+rror\b`, nil, nil},
		{"deadline", map[string]any{"-i": true, "type": "go"}, []string{"-i", "--type", "go"}},
		{"gamma", map[string]any{"glob": "*.py *.md"}, []string{"-g", "*.py", "-g", "*.md"}},
		{"gamma", map[string]any{"glob": "!*.txt"}, []string{"-g", "!*.txt"}},
		{"error", map[string]any{"glob": "*.log"}, []string{"-g", "*.log"}},
	}
	for seed := range uint64(2) {
		dir := genCrossTree(t, seed, 400)
		s := newSession(t, dir)
		for _, c := range cases {
			name := fmt.Sprintf("seed%d/%s/%v", seed, c.pattern, c.rgFlags)
			t.Run(name, func(t *testing.T) {
				input := func(mode string) string {
					m := map[string]any{"pattern": c.pattern, "output_mode": mode, "head_limit": 0}
					for k, v := range c.flags {
						m[k] = v
					}
					b, _ := json.Marshal(m)
					return string(b)
				}
				rgArgs := func(mode ...string) []string {
					return append(append(slices.Clone(c.rgFlags), mode...), "-e", c.pattern)
				}

				text, out, ok := call(t, Grep(), s, input("files_with_matches"))
				if !ok {
					t.Fatal("Grep failed")
				}
				var ours []string
				if o, isGrep := out.(GrepOutput); isGrep {
					ours = slices.Sorted(slices.Values(o.Filenames))
				} else if _, list, found := strings.Cut(fullText(t, text, out), "\n"); found {
					ours = sortedLines(list) // after the "Found N files" line
				}
				theirs := sortedLines(rgCommand(t, dir, rgArgs("-l")...))
				if !slices.Equal(ours, theirs) {
					t.Fatalf("files differ:\n ours   %q\n theirs %q", ours, theirs)
				}

				text, out, _ = call(t, Grep(), s, input("count"))
				text = fullText(t, text, out)
				oursCount := sortedLines(strings.SplitN(text, "\n\n", 2)[0])
				if text == "No matches found" {
					oursCount = nil
				}
				if theirs := sortedLines(rgCommand(t, dir, rgArgs("-c")...)); !slices.Equal(oursCount, theirs) {
					t.Fatalf("counts differ:\n ours   %q\n theirs %q", oursCount, theirs)
				}

				text, out, _ = call(t, Grep(), s, input("content"))
				text = fullText(t, text, out)
				if text == "No matches found" {
					text = ""
				}
				theirsContent := strings.TrimSuffix(rgCommand(t, dir, rgArgs("-n", "--sort", "path")...), "\n")
				if text != theirsContent {
					t.Fatalf("content differs: %s", firstDiff(strings.Split(text, "\n"), strings.Split(theirsContent, "\n")))
				}
			})
		}
	}
}

// fullText is a result's whole text: the text itself, or, when the
// result was over Grep's budget and persisted, the file holding it.
func fullText(t *testing.T, text string, out any) string {
	t.Helper()
	m, ok := out.(map[string]any)
	if !ok {
		return text
	}
	path, _ := m["persistedOutputPath"].(string)
	if p, ok := m["persistedOutput"].(map[string]any); ok && path == "" {
		path, _ = p["path"].(string)
	}
	if path == "" {
		return text
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the persisted result: %v", err)
	}
	return string(data)
}

// TestCrossCheckFiles compares Glob's file set with `rg --files`.
func TestCrossCheckFiles(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("ripgrep (rg) is not installed: install the Debian package ripgrep to cross-check Glob against rg --files")
	}
	dir := genCrossTree(t, 5, 300)
	s := newSession(t, dir)
	for _, pattern := range []string{"*.go", "**/*.log", "src/**/*.json", "*.{py,md}"} {
		t.Run(pattern, func(t *testing.T) {
			_, out, ok := call(t, Glob(), s, fmt.Sprintf(`{"pattern":%q}`, pattern))
			if !ok {
				t.Fatal("Glob failed")
			}
			o := out.(GlobOutput)
			if o.Truncated {
				t.Fatalf("%d files: too many for the comparison", o.NumFiles)
			}
			ours := slices.Sorted(slices.Values(o.Filenames))
			theirs := sortedLines(rgCommand(t, dir, "--files", "--no-ignore", "-g", pattern))
			if !slices.Equal(ours, theirs) {
				t.Fatalf("files differ:\n ours   %q\n theirs %q", ours, theirs)
			}
		})
	}
}
