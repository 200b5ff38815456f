package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// grepTree is the workspace most Grep cases search.
func grepTree(t *testing.T) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".git/HEAD":      "ref: refs/heads/main\n",
		".git/config":    "needle in git\n",
		".gitignore":     "ignored.txt\n",
		"ignored.txt":    "needle ignored\n",
		".hidden.txt":    "needle hidden\n",
		"a.go":           "package a\n\n// needle one\nfunc A() {}\n",
		"b.py":           "needle = 1\nNEEDLE = 2\nother = 3\n",
		"docs/c.md":      "# Title\nsome needle text\nmore\nneedle again\nend\n",
		"docs/d_test.go": "package docs\n// needle in a test\n",
		"bin.dat":        "needle\x00binary\n",
		"long.txt":       strings.Repeat("x", 600) + " needle\nshort needle\n",
		"ctx.txt":        "l1\nl2\nneedle3\nl4\nl5\nl6\nl7\nneedle8\nl9\n",
		"multi.txt":      "start {\n  body\n}\nother\n",
	})
	setMtimes(t, dir, map[string]int{
		"a.go": 10, "b.py": 20, "docs/c.md": 30, "docs/d_test.go": 5, ".hidden.txt": 1,
		"long.txt": 2, "ctx.txt": 3, "multi.txt": 4,
	})
	return dir
}

func TestGrep(t *testing.T) {
	t.Parallel()
	dir := grepTree(t)
	s := newSession(t, dir)
	for _, tc := range []struct {
		name  string
		input string
		want  string
	}{
		{"files_with_matches_newest_first",
			`{"pattern":"needle","glob":"*.go *.py *.md"}`,
			"Found 4 files\ndocs/c.md\nb.py\na.go\ndocs/d_test.go"},
		{"files_with_matches_skips_ignored_binary_and_git_but_not_hidden",
			`{"pattern":"needle"}`,
			"Found 7 files\ndocs/c.md\nb.py\na.go\ndocs/d_test.go\nctx.txt\nlong.txt\n.hidden.txt"},
		{"no_files_found", `{"pattern":"absent"}`, "No files found"},
		{"content_sorted_by_path_with_line_numbers",
			`{"pattern":"needle","output_mode":"content","type":"md"}`,
			"docs/c.md:2:some needle text\ndocs/c.md:4:needle again"},
		{"content_without_line_numbers",
			`{"pattern":"needle","output_mode":"content","type":"md","-n":false}`,
			"docs/c.md:some needle text\ndocs/c.md:needle again"},
		{"no_matches_found", `{"pattern":"absent","output_mode":"content"}`, "No matches found"},
		{"count_with_totals",
			`{"pattern":"needle","output_mode":"count","-i":true,"glob":"*.py,*.md"}`,
			"b.py:2\ndocs/c.md:2\n\nFound 4 total occurrences across 2 files."},
		{"count_singular",
			`{"pattern":"needle","output_mode":"count","type":"go","glob":"!*_test.go"}`,
			"a.go:1\n\nFound 1 total occurrence across 1 file."},
		{"case_insensitive",
			`{"pattern":"NEEDLE =","output_mode":"content","-i":true}`,
			"b.py:1:needle = 1\nb.py:2:NEEDLE = 2"},
		{"only_matching",
			`{"pattern":"ne+dle \\w+","output_mode":"content","-o":true,"path":"docs"}`,
			"docs/c.md:2:needle text\ndocs/c.md:4:needle again\ndocs/d_test.go:2:needle in"},
		{"context_with_group_separators",
			`{"pattern":"needle","output_mode":"content","-C":1,"path":"ctx.txt"}`,
			"2-l2\n3:needle3\n4-l4\n--\n7-l7\n8:needle8\n9-l9"},
		{"context_alias_and_after_override",
			`{"pattern":"needle","output_mode":"content","context":2,"-A":0,"path":"ctx.txt"}`,
			"1-l1\n2-l2\n3:needle3\n--\n6-l6\n7-l7\n8:needle8"},
		{"before_only",
			`{"pattern":"needle8","output_mode":"content","-B":1,"path":"ctx.txt"}`,
			"7-l7\n8:needle8"},
		{"context_separator_between_files",
			`{"pattern":"needle","output_mode":"content","-A":1,"type":"py","glob":"*.py *.md"}`,
			"b.py:1:needle = 1\nb.py-2-NEEDLE = 2\n--\ndocs/c.md:2:some needle text\ndocs/c.md-3-more\ndocs/c.md:4:needle again\ndocs/c.md-5-end"},
		{"single_file_prints_no_file_name",
			`{"pattern":"needle","output_mode":"content","path":"b.py"}`,
			"1:needle = 1"},
		{"single_file_is_searched_even_if_ignored",
			`{"pattern":"needle","path":"ignored.txt"}`,
			"Found 1 file\nignored.txt"},
		{"long_line_omitted",
			`{"pattern":"needle","output_mode":"content","path":"long.txt"}`,
			"1:[long line omitted: 607 characters]\n2:short needle"},
		{"multiline",
			`{"pattern":"\\{.*?\\}","output_mode":"content","multiline":true,"path":"multi.txt"}`,
			"1:start {\n2:  body\n3:}"},
		{"multiline_off_dot_stays_on_a_line",
			`{"pattern":"\\{.*\\}","output_mode":"content","path":"multi.txt"}`,
			"No matches found"},
		{"glob_override_beats_gitignore",
			`{"pattern":"needle","glob":"ignored.txt"}`,
			"Found 1 file\nignored.txt"},
		{"glob_with_braces",
			`{"pattern":"needle","glob":"*.{py,md}"}`,
			"Found 2 files\ndocs/c.md\nb.py"},
		{"glob_negation_only",
			`{"pattern":"needle","glob":"!*.txt !*.md !.gitignore"}`,
			"Found 3 files\nb.py\na.go\ndocs/d_test.go"},
		{"type_filter",
			`{"pattern":"needle","type":"go"}`,
			"Found 2 files\na.go\ndocs/d_test.go"},
		{"path_relative_subdirectory",
			`{"pattern":"needle","path":"docs","output_mode":"count"}`,
			"docs/c.md:2\ndocs/d_test.go:1\n\nFound 3 total occurrences across 2 files."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := call(t, Grep(), s, tc.input)
			if !ok {
				t.Fatalf("error: %s", got)
			}
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	t.Parallel()
	dir := grepTree(t)
	s := newSession(t, dir)
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"invalid_pattern", `{"pattern":"func("}`, []string{`"func("`, "missing closing )"}},
		{"invalid_glob", `{"pattern":"x","glob":"[abc"}`, []string{`invalid glob "[abc"`}},
		{"unknown_type", `{"pattern":"x","type":"cobol2"}`, []string{`unknown file type "cobol2"`, "go", "py"}},
		{"missing_path", `{"pattern":"x","path":"nope"}`, []string{filepath.Join(dir, "nope"), "does not exist", dir}},
		{"bad_output_mode", `{"pattern":"x","output_mode":"lines"}`, []string{`parameter "output_mode" must be one of`, `got "lines"`}},
		{"negative_context", `{"pattern":"x","-A":-1}`, []string{`parameter "-A" must be at least 0, got -1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := call(t, Grep(), s, tc.input)
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

func TestGrepPagination(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	mt := map[string]int{}
	for i := range 30 {
		name := fmt.Sprintf("f%02d.txt", i)
		files[name] = "hit a\nmiss\nhit b\n"
		mt[name] = i
	}
	writeTree(t, dir, files)
	setMtimes(t, dir, mt)
	s := newSession(t, dir)
	for _, tc := range []struct {
		name, input string
		want        string
	}{
		{"content_head_limit_counts_total",
			`{"pattern":"hit","output_mode":"content","head_limit":3}`,
			"f00.txt:1:hit a\nf00.txt:3:hit b\nf01.txt:1:hit a\n\n(Showing lines 1-3 of 60, with head_limit 3 and offset 0. Call again with offset 3 for more.)"},
		{"content_offset",
			`{"pattern":"hit","output_mode":"content","head_limit":2,"offset":58}`,
			"f29.txt:1:hit a\nf29.txt:3:hit b\n\n(Showing lines 59-60 of 60, with head_limit 2 and offset 58.)"},
		{"offset_past_the_end",
			`{"pattern":"hit","output_mode":"content","offset":100}`,
			"(Nothing to show at offset 100 with head_limit 250: there are 60 lines in all. Use a smaller offset.)"},
		{"files_head_limit_newest_first",
			`{"pattern":"hit","head_limit":2}`,
			"Found 30 files\nf29.txt\nf28.txt\n\n(Showing files 1-2 of 30, with head_limit 2 and offset 0. Call again with offset 2 for more.)"},
		{"files_offset",
			`{"pattern":"hit","head_limit":2,"offset":2}`,
			"Found 30 files\nf27.txt\nf26.txt\n\n(Showing files 3-4 of 30, with head_limit 2 and offset 2. Call again with offset 4 for more.)"},
		{"count_totals_cover_everything",
			`{"pattern":"hit","output_mode":"count","head_limit":1}`,
			"f00.txt:2\n\nFound 60 total occurrences across 30 files.\n\n(Showing files 1-1 of 30, with head_limit 1 and offset 0. Call again with offset 1 for more.)"},
		{"head_limit_zero_is_unlimited",
			`{"pattern":"hit b","output_mode":"count","head_limit":0,"glob":"f0*"}`,
			"f00.txt:1\nf01.txt:1\nf02.txt:1\nf03.txt:1\nf04.txt:1\nf05.txt:1\nf06.txt:1\nf07.txt:1\nf08.txt:1\nf09.txt:1\n\nFound 10 total occurrences across 10 files."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := call(t, Grep(), s, tc.input)
			if !ok {
				t.Fatalf("error: %s", got)
			}
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestGrepStructuredOutput(t *testing.T) {
	t.Parallel()
	dir := grepTree(t)
	s := newSession(t, dir)
	_, out, ok := call(t, Grep(), s, `{"pattern":"needle","output_mode":"content","head_limit":1,"type":"md"}`)
	if !ok {
		t.Fatal("call failed")
	}
	o := out.(GrepOutput)
	if o.Mode != "content" || o.NumFiles != 1 || o.NumLines != 2 || o.NumMatches != 2 || o.AppliedLimit == nil || *o.AppliedLimit != 1 {
		t.Fatalf("structured output = %+v", o)
	}
}

func TestGrepOutsideCwdShowsAbsolutePaths(t *testing.T) {
	t.Parallel()
	dir := grepTree(t)
	other := t.TempDir()
	s := newSession(t, other)
	got, _, ok := call(t, Grep(), s, fmt.Sprintf(`{"pattern":"needle","path":%q,"type":"py"}`, dir))
	if !ok || got != "Found 1 file\n"+filepath.Join(dir, "b.py") {
		t.Fatalf("got %q", got)
	}
}

func TestGrepSymlinksNotFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := t.TempDir()
	writeTree(t, target, map[string]string{"t.txt": "needle\n"})
	writeTree(t, dir, map[string]string{"real.txt": "needle\n"})
	if err := os.Symlink(target, filepath.Join(dir, "linkdir")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	os.Symlink(filepath.Join(dir, "real.txt"), filepath.Join(dir, "link.txt"))
	s := newSession(t, dir)
	got, _, _ := call(t, Grep(), s, `{"pattern":"needle"}`)
	if got != "Found 1 file\nreal.txt" {
		t.Fatalf("got %q", got)
	}
}
