package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func globTree(t *testing.T) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".git/HEAD":         "x",
		".gitignore":        "ignored.go\n",
		"ignored.go":        "x",
		".env":              "x",
		"main.go":           "x",
		"README.md":         "x",
		"src/app.ts":        "x",
		"src/app.tsx":       "x",
		"src/lib/util.go":   "x",
		"src/lib/file1.txt": "x",
		"src/lib/file2.txt": "x",
		"src/lib/fileX.txt": "x",
		".config/tool.yaml": "x",
	})
	setMtimes(t, dir, map[string]int{
		".gitignore": 0, "ignored.go": 9, ".env": 1, "main.go": 5, "README.md": 2, "src/app.ts": 3, "src/app.tsx": 4,
		"src/lib/util.go": 7, "src/lib/file1.txt": 8, "src/lib/file2.txt": 6, "src/lib/fileX.txt": 10, ".config/tool.yaml": 11,
	})
	return dir
}

func TestGlob(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	s := newSession(t, dir)
	for _, tc := range []struct {
		name, input, want string
	}{
		{"double_star_any_depth_oldest_first", `{"pattern":"**/*.go"}`, "main.go\nsrc/lib/util.go\nignored.go"},
		{"no_slash_matches_at_any_depth", `{"pattern":"*.go"}`, "main.go\nsrc/lib/util.go\nignored.go"},
		{"slash_pattern_is_anchored", `{"pattern":"src/*.ts"}`, "src/app.ts"},
		{"braces", `{"pattern":"src/*.{ts,tsx}"}`, "src/app.ts\nsrc/app.tsx"},
		{"character_class", `{"pattern":"file[0-9].txt"}`, "src/lib/file2.txt\nsrc/lib/file1.txt"},
		{"question_mark", `{"pattern":"**/file?.txt"}`, "src/lib/file2.txt\nsrc/lib/file1.txt\nsrc/lib/fileX.txt"},
		{"hidden_files_included", `{"pattern":".*"}`, ".gitignore\n.env"},
		{"hidden_directories_entered", `{"pattern":"**/*.yaml"}`, ".config/tool.yaml"},
		{"gitignore_not_applied", `{"pattern":"ignored.go"}`, "ignored.go"},
		{"vcs_directory_skipped", `{"pattern":"HEAD"}`, "No files found"},
		{"path_narrows_the_search", `{"pattern":"*.go","path":"src"}`, "src/lib/util.go"},
		{"dot_slash_prefix", `{"pattern":"./src/*.ts"}`, "src/app.ts"},
		{"absolute_pattern", fmt.Sprintf(`{"pattern":%q}`, filepath.Join(dir, "src", "lib", "*.go")), "src/lib/util.go"},
		{"no_match", `{"pattern":"*.rs"}`, "No files found"},
		{"missing_fixed_prefix_is_no_match", `{"pattern":"nowhere/**/*.go"}`, "No files found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := call(t, Glob(), s, tc.input)
			if !ok {
				t.Fatalf("error: %s", got)
			}
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestGlobErrors(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	s := newSession(t, dir)
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"missing_path", `{"pattern":"*","path":"nope"}`, []string{filepath.Join(dir, "nope"), "does not exist", "current directory: " + dir}},
		{"path_is_a_file", `{"pattern":"*","path":"main.go"}`, []string{filepath.Join(dir, "main.go"), "not a directory", dir}},
		{"invalid_pattern", `{"pattern":"src/[a-"}`, []string{`invalid glob pattern "src/[a-"`}},
		{"empty_pattern", `{"pattern":" "}`, []string{"pattern must not be empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := call(t, Glob(), s, tc.input)
			if ok {
				t.Fatalf("want an error, got %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("error %q does not mention %q", got, w)
				}
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	mt := map[string]int{}
	for i := range 150 {
		// Names in reverse of age, so order by time differs from order by name.
		name := fmt.Sprintf("d%d/f%03d.txt", i%3, 149-i)
		files[name] = "x"
		mt[name] = i
	}
	writeTree(t, dir, files)
	setMtimes(t, dir, mt)
	s := newSession(t, dir)
	got, out, ok := call(t, Glob(), s, `{"pattern":"**/*.txt"}`)
	if !ok {
		t.Fatal(got)
	}
	lines := strings.Split(got, "\n")
	if len(lines) != 101 {
		t.Fatalf("got %d lines, want 100 paths and a note", len(lines))
	}
	if lines[0] != "d0/f149.txt" || lines[99] != "d0/f050.txt" {
		t.Fatalf("first and last shown = %q, %q; want the 100 oldest, oldest first", lines[0], lines[99])
	}
	if !strings.Contains(lines[100], "100 of 150") {
		t.Fatalf("note %q does not say 100 of 150", lines[100])
	}
	o := out.(GlobOutput)
	if o.NumFiles != 150 || !o.Truncated || len(o.Filenames) != 100 {
		t.Fatalf("structured output: numFiles %d truncated %v filenames %d", o.NumFiles, o.Truncated, len(o.Filenames))
	}
}

func TestGlobOutsideCwdAbsolute(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	s := newSession(t, t.TempDir())
	got, _, ok := call(t, Glob(), s, fmt.Sprintf(`{"pattern":"*.md","path":%q}`, dir))
	if !ok || got != filepath.Join(dir, "README.md") {
		t.Fatalf("got %q", got)
	}
}

func TestGlobSymlinkedDirectoryNotFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := t.TempDir()
	writeTree(t, target, map[string]string{"inside.go": "x"})
	if err := os.Symlink(target, filepath.Join(dir, "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	s := newSession(t, dir)
	if got, _, _ := call(t, Glob(), s, `{"pattern":"**/*.go"}`); got != "No files found" {
		t.Fatalf("got %q", got)
	}
}
