package search

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitignoreProbe is one path asked of a set of gitignore lines, with the
// decision git makes on it.
type gitignoreProbe struct {
	rel   string
	isDir bool
	want  decision
}

// gitignoreCases are sets of gitignore lines with the paths asked of them.
// TestGitignoreLine checks the decisions written here; TestGitignoreAgreesWithGit
// checks them against git's own answers, recorded in testdata.
var gitignoreCases = []struct {
	name   string
	lines  []string
	probes []gitignoreProbe
}{
	{"name_matches_at_any_depth", []string{"*.log"}, []gitignoreProbe{
		{"a.log", false, ignoreIt}, {"x/y/b.log", false, ignoreIt}, {"a.txt", false, undecided}}},
	{"question_mark_is_one_character", []string{"file?.txt"}, []gitignoreProbe{
		{"file1.txt", false, ignoreIt}, {"file12.txt", false, undecided}, {"file?.txt", false, ignoreIt}}},
	{"negated_class", []string{"[!a]*.c"}, []gitignoreProbe{
		{"b.c", false, ignoreIt}, {"a.c", false, undecided}}},
	{"negated_class_one_character", []string{"[!a].c"}, []gitignoreProbe{
		{"b.c", false, ignoreIt}, {"a.c", false, undecided}, {"bb.c", false, undecided}}},
	{"inner_slash_anchors_to_the_file's_directory", []string{"doc/frotz"}, []gitignoreProbe{
		{"doc/frotz", false, ignoreIt}, {"a/doc/frotz", false, undecided}}},
	{"leading_slash_anchors", []string{"/build"}, []gitignoreProbe{
		{"build", true, ignoreIt}, {"src/build", true, undecided}}},
	{"trailing_slash_only_directories", []string{"out/"}, []gitignoreProbe{
		{"out", true, ignoreIt}, {"out", false, undecided}, {"x/out", true, ignoreIt}}},
	{"double_star_prefix", []string{"**/gen/*.go"}, []gitignoreProbe{
		{"gen/a.go", false, ignoreIt}, {"x/y/gen/a.go", false, ignoreIt}, {"gen/x/a.go", false, undecided}}},
	{"double_star_middle", []string{"a/**/b"}, []gitignoreProbe{
		{"a/b", false, ignoreIt}, {"a/x/y/b", false, ignoreIt}, {"b", false, undecided}}},
	{"trailing_double_star_matches_inside_only", []string{"vendor/**"}, []gitignoreProbe{
		{"vendor", true, undecided}, {"vendor/x.go", false, ignoreIt}}},
	{"negation_last_match_wins", []string{"*.log", "!keep.log"}, []gitignoreProbe{
		{"a.log", false, ignoreIt}, {"keep.log", false, keepIt}, {"x/keep.log", false, keepIt}}},
	{"reignore_after_negation", []string{"*.log", "!keep.log", "keep.log"}, []gitignoreProbe{
		{"keep.log", false, ignoreIt}}},
	{"comments_blank_lines_and_escapes", []string{"# comment", "", `\#hash`, `\!bang`, "space\\ "}, []gitignoreProbe{
		{"#hash", false, ignoreIt}, {"!bang", false, ignoreIt}, {"space ", false, ignoreIt}, {"# comment", false, undecided}}},
	{"trailing_spaces_trimmed", []string{"trail.txt   "}, []gitignoreProbe{{"trail.txt", false, ignoreIt}}},
	{"braces_are_literal_in_gitignore", []string{"{a,b}.txt"}, []gitignoreProbe{
		{"a.txt", false, undecided}, {"{a,b}.txt", false, ignoreIt}}},
	{"crlf_lines", []string{"win.txt\r"}, []gitignoreProbe{{"win.txt", false, ignoreIt}}},
}

func TestGitignoreLine(t *testing.T) {
	t.Parallel()
	for _, tc := range gitignoreCases {
		t.Run(tc.name, func(t *testing.T) {
			rs := parseGitignore([]byte(strings.Join(tc.lines, "\n")), ".gitignore")
			for _, p := range tc.probes {
				if got := rs.match(p.rel, filepath.Base(p.rel), p.isDir); got != p.want {
					t.Errorf("%q (dir %v): got %v, want %v", p.rel, p.isDir, got, p.want)
				}
			}
		})
	}
}

// TestIgnoreTree checks precedence between files and levels on a real
// tree, through the walker.
func TestIgnoreTree(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".git/HEAD":                "ref: refs/heads/main\n",
		".git/info/exclude":        "excluded.txt\n",
		".gitignore":               "*.log\nbuild/\n!important.log\nsub/deep/*.txt\n",
		"a.log":                    "x",
		"important.log":            "x",
		"excluded.txt":             "x",
		"kept.txt":                 "x",
		"build/out.txt":            "x",
		"sub/.gitignore":           "!b.log\nlocal.txt\n",
		"sub/b.log":                "x",
		"sub/c.log":                "x",
		"sub/local.txt":            "x",
		"sub/deep/d.txt":           "x",
		"sub/deep/d.md":            "x",
		".ignore":                  "ignored-by-dotignore.txt\n!sub/c.log\n",
		"ignored-by-dotignore.txt": "x",
		"global.bak":               "x",
		"nested/.git/HEAD":         "x",
		"nested/n.log":             "x", // the outer .gitignore stops at a nested repository
		".hidden/h.txt":            "x",
		".svn/entries":             "x",
	})
	cfg := t.TempDir()
	writeTree(t, cfg, map[string]string{"git/ignore": "*.bak\n"})
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", t.TempDir())

	w := newWalker(dir, walkFilter{useIgnore: true})
	var got []string
	if err := w.walk(t.Context(), func(f walkFile) error { got = append(got, f.rel); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".gitignore", ".hidden/h.txt", ".ignore", "important.log", "kept.txt",
		"nested/n.log", "sub/.gitignore", "sub/b.log", "sub/c.log", "sub/deep/d.md",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walk yielded\n %q\nwant\n %q", got, want)
	}
}

func TestIgnoreOutsideGitRepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".gitignore": "*.log\n",
		".ignore":    "*.tmp\n",
		"a.log":      "x",
		"b.tmp":      "x",
	})
	w := newWalker(dir, walkFilter{useIgnore: true})
	var got []string
	w.walk(t.Context(), func(f walkFile) error { got = append(got, f.rel); return nil })
	// As for ripgrep: .gitignore applies only inside a git repository,
	// .ignore everywhere.
	want := []string{".gitignore", ".ignore", "a.log"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestGitConfigExcludesFile(t *testing.T) {
	home := t.TempDir()
	writeTree(t, home, map[string]string{
		".gitconfig":  "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my-excludes # comment\n",
		"my-excludes": "*.swp\n",
	})
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	rs := globalExcludes()
	if rs.match("a.swp", "a.swp", false) != ignoreIt {
		t.Fatal("core.excludesFile from ~/.gitconfig was not applied")
	}
	os.Remove(filepath.Join(home, ".gitconfig"))
	if globalExcludes() != nil {
		t.Fatal("no config and no default file should give no global excludes")
	}
}
