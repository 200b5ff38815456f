package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed ls.md
var lsDescription string

// LSMaxEntries caps how many entries one LS lists (docs/tools.md §4).
const LSMaxEntries = 1000

// LSInput is LS's input.
type LSInput struct {
	Path   string   `json:"path" jsonschema:"Directory to list (absolute, or relative to the current directory)"`
	Ignore []string `json:"ignore,omitempty" jsonschema:"Glob patterns of entries to leave out, matched against each entry's name and its path relative to the listed directory (e.g. \"node_modules\", \"**/*.log\", \"build/\")"`
}

// LSOutput is LS's structured output.
type LSOutput struct {
	// Path is the listed directory.
	Path string `json:"path"`
	// Entries are paths relative to Path, slash-separated, directories
	// ending in "/", in breadth-first order.
	Entries []string `json:"entries"`
	// Truncated is true when more than LSMaxEntries entries were found.
	Truncated bool `json:"truncated,omitempty"`
	// Unreadable lists subdirectories that could not be read.
	Unreadable []string `json:"unreadable,omitempty"`
}

// LS returns the LS tool.
func LS() *tools.Tool {
	return tools.New(tools.Tool{
		Name:            "LS",
		Description:     lsDescription,
		SearchHint:      "list the entries of a directory",
		ReadOnly:        true,
		ConcurrencySafe: true,
		Idempotent:      true,
	}, tools.Handler[LSInput]{
		Validate: func(_ context.Context, in *LSInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.Path) == "" {
				return errors.New("path must not be empty: give the directory to list")
			}
			for i, p := range in.Ignore {
				if !doublestar.ValidatePattern(strings.TrimSuffix(p, "/")) {
					return fmt.Errorf("ignore[%d] = %q is not a valid glob pattern: check its brackets and braces", i, p)
				}
			}
			return nil
		},
		Call: runLS,
	})
}

func runLS(ctx context.Context, in *LSInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	s := uc.Session
	root := uc.Resolve(in.Path)
	info, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			msg := fmt.Sprintf("Directory does not exist: %s (current directory: %s).", root, s.Cwd())
			if sug := suggestName(root, parentOpener(uc, root)); sug != "" {
				msg += fmt.Sprintf(" Did you mean %s?", sug)
			}
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("cannot list %s: %w", root, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a directory: read it with Read, or list its directory %s", root, filepath.Dir(root))
	}
	// The directory is opened once, the way Read opens a file, and every
	// subdirectory below it relative to that descriptor following no
	// symbolic link: a link swapped in for a directory during the listing
	// is not followed.
	top, err := openForRead(uc, root)
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", root, err)
	}
	defer top.Close()
	if info, err = top.Stat(); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("cannot list %s: it is no longer a directory (it changed while being opened)", root)
	}
	topfd := int(top.Fd())

	ig := newIgnorer(in.Ignore, root)
	out := LSOutput{Path: root, Entries: []string{}}
	children := map[string][]string{} // directory (relative, "" for root) → entry names
	hidden := 0                       // entries a deny rule covers
	queue := []string{""}
	for len(queue) > 0 && !out.Truncated {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := queue[0]
		queue = queue[1:]
		entries, err := listBeneath(topfd, dir, root)
		if err != nil {
			if dir == "" {
				return nil, fmt.Errorf("cannot list %s: %w", root, err)
			}
			out.Unreadable = append(out.Unreadable, dir+"/")
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if name == ".git" {
				continue
			}
			rel := path.Join(dir, name)
			isDir := e.IsDir()
			if ig.ignored(rel, name, isDir) {
				continue
			}
			if uc.ReadDenied != nil && uc.ReadDenied(filepath.Join(root, rel), isDir) {
				hidden++
				continue
			}
			if len(out.Entries) == LSMaxEntries {
				out.Truncated = true
				break
			}
			shown, entry := name, rel
			if isDir {
				shown, entry = name+"/", rel+"/"
				queue = append(queue, rel)
			}
			out.Entries = append(out.Entries, entry)
			children[dir] = append(children[dir], shown)
		}
	}

	var b strings.Builder
	if out.Truncated {
		fmt.Fprintf(&b, "%s holds more than %d entries; the first %d, breadth first, are listed. List a subdirectory with LS, or find files with Glob or Grep.\n\n",
			root, LSMaxEntries, LSMaxEntries)
	}
	fmt.Fprintf(&b, "- %s/\n", strings.TrimSuffix(root, "/"))
	renderTree(&b, children, "", 1)
	if len(out.Unreadable) > 0 {
		fmt.Fprintf(&b, "\nCould not read %s: %s\n", plural(len(out.Unreadable), "directory"), strings.Join(out.Unreadable, ", "))
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "\n(%s not listed: a permission deny rule covers them.)\n", plural(hidden, "entry"))
	}
	return &tools.Result{Output: out, Text: strings.TrimSuffix(b.String(), "\n")}, nil
}

// renderTree writes dir's entries, sorted by name, each on its own line
// indented two spaces per level, descending into subdirectories.
func renderTree(b *strings.Builder, children map[string][]string, dir string, depth int) {
	names := children[dir]
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(b, "%s- %s\n", strings.Repeat("  ", depth), n)
		if strings.HasSuffix(n, "/") {
			renderTree(b, children, path.Join(dir, strings.TrimSuffix(n, "/")), depth+1)
		}
	}
}

// ignorer matches LS's ignore patterns.
type ignorer struct {
	patterns []string
	dirOnly  []bool
	root     string
}

func newIgnorer(patterns []string, root string) *ignorer {
	ig := &ignorer{root: root}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		ig.dirOnly = append(ig.dirOnly, strings.HasSuffix(p, "/") && len(p) > 1)
		ig.patterns = append(ig.patterns, strings.TrimSuffix(p, "/"))
	}
	return ig
}

// ignored reports whether an entry matches a pattern: by its name, by its
// path relative to the listed directory, or (for absolute patterns) by its
// absolute path. A pattern ending in "/" matches directories only.
func (ig *ignorer) ignored(rel, name string, isDir bool) bool {
	for i, p := range ig.patterns {
		if ig.dirOnly[i] && !isDir {
			continue
		}
		target := rel
		if filepath.IsAbs(p) {
			target = filepath.ToSlash(filepath.Join(ig.root, filepath.FromSlash(rel)))
		}
		if doublestar.MatchUnvalidated(p, target) || doublestar.MatchUnvalidated(p, name) {
			return true
		}
	}
	return false
}

// beforeListDir, when set (by tests), runs in LS right before each
// directory is opened, with its path relative to the listed directory
// ("" for that directory itself).
var beforeListDir func(rel string)

// listBeneath lists the directory rel (slash-separated, "" for the
// directory itself) below the directory open as dirfd, sorted by name,
// following no symbolic link on the way. root names dirfd in errors.
func listBeneath(dirfd int, rel, root string) ([]os.DirEntry, error) {
	if beforeListDir != nil {
		beforeListDir(rel)
	}
	if rel == "" {
		rel = "."
	}
	d, err := openDirBeneath(dirfd, rel, filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, filepath.FromSlash(rel)), Err: err}
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
