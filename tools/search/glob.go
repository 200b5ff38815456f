package search

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed glob.md
var globDescription string

// Glob's limits (docs/tools.md §5).
const (
	// GlobMaxResults is how many paths Glob returns at most.
	GlobMaxResults = 100
	// GlobMaxResultSizeChars is Glob's result budget.
	GlobMaxResultSizeChars = 100_000
)

// GlobInput is Glob's input.
type GlobInput struct {
	Pattern string `json:"pattern" jsonschema:"Glob pattern to match file paths against, e.g. \"**/*.go\", \"src/**/*.{ts,tsx}\", \"*.md\" (no slash: any depth)"`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search in (absolute, or relative to the current directory); leave it out to search the current directory"`
}

// GlobOutput is Glob's structured output.
type GlobOutput struct {
	// Filenames are the paths shown, oldest modification first.
	Filenames []string `json:"filenames"`
	// NumFiles counts every matching file, shown or not.
	NumFiles  int  `json:"numFiles"`
	Truncated bool `json:"truncated"`
}

// Glob returns the Glob tool.
func Glob() *tools.Tool {
	return tools.New(tools.Tool{
		Name:               "Glob",
		Description:        globDescription,
		SearchHint:         "find files by name pattern",
		Core:               true,
		MaxResultSizeChars: GlobMaxResultSizeChars,
		ReadOnly:           true,
		ConcurrencySafe:    true,
		Idempotent:         true,
	}, tools.Handler[GlobInput]{
		Validate: func(_ context.Context, in *GlobInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.Pattern) == "" {
				return errors.New(`pattern must not be empty: give a glob such as "**/*.go"`)
			}
			if !doublestar.ValidatePattern(in.Pattern) {
				return fmt.Errorf("invalid glob pattern %q: check its brackets and braces", in.Pattern)
			}
			return nil
		},
		Call: runGlob,
	})
}

func runGlob(ctx context.Context, in *GlobInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	s := uc.Session
	base := uc.Dir()
	if strings.TrimSpace(in.Path) != "" {
		base = uc.Resolve(in.Path)
		info, err := os.Stat(base)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("directory %s does not exist (current directory: %s): give an existing directory as path, or leave it out", base, s.Cwd())
		case err != nil:
			return nil, fmt.Errorf("cannot search %s: %w", base, err)
		case !info.IsDir():
			return nil, fmt.Errorf("path %s is a file, not a directory (current directory: %s): give the directory to search in", base, s.Cwd())
		}
	}
	root, pattern, anchored := splitGlob(base, in.Pattern)
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("invalid glob pattern %q: check its brackets and braces", in.Pattern)
	}
	var hidden atomic.Int64
	filter := walkFilter{wantModTime: true}.hideDenied(uc, &hidden)
	if anchored {
		filter.matchRel = func(rel string) bool { return doublestar.MatchUnvalidated(pattern, rel) }
	} else {
		filter.matchName = nameMatcher(pattern)
	}
	var ranks []globRank
	total := 0
	if info, err := os.Stat(root); err == nil && info.IsDir() {
		dir, err := openRoot(uc, root)
		if err != nil {
			return nil, err
		}
		defer dir.Close()
		// Each worker keeps the oldest GlobMaxResults of the files it
		// saw; the oldest of all are among them.
		workers := max(1, runtime.GOMAXPROCS(0))
		kept := make([]globKept, workers)
		err = newWalker(root, filter).in(dir).walkUnordered(ctx, workers, func(worker int, f walkFile) {
			kept[worker].add(globRank{mtime: f.modTime, abs: f.abs})
		})
		if err != nil {
			return nil, err
		}
		for _, k := range kept {
			total += k.total
			ranks = append(ranks, k.oldest.items...)
		}
		slices.SortFunc(ranks, globRank.compare)
		ranks = ranks[:min(len(ranks), GlobMaxResults)]
	}
	out := GlobOutput{Filenames: make([]string, 0, len(ranks)), NumFiles: total, Truncated: total > len(ranks)}
	for _, r := range ranks {
		out.Filenames = append(out.Filenames, s.Display(r.abs))
	}
	if total == 0 {
		return &tools.Result{Text: "No files found" + hiddenNote(hidden.Load()), Output: out}, nil
	}
	text := strings.Join(out.Filenames, "\n")
	if out.Truncated {
		text += fmt.Sprintf("\n(Showing %d of %d matching files, the least recently modified. Use a more specific pattern or path to see the others.)",
			len(ranks), total)
	}
	return &tools.Result{Text: text + hiddenNote(hidden.Load()), Output: out}, nil
}

// splitGlob turns a Glob pattern into the directory to walk and the
// pattern to match below it. The fixed leading directories of a pattern
// (all of it when absolute) move into the root, so only that part of the
// tree is walked. anchored is false when the pattern has no slash: it then
// matches file names at any depth.
func splitGlob(base, pattern string) (root, rest string, anchored bool) {
	pattern = strings.TrimPrefix(pattern, "./")
	if !strings.Contains(pattern, "/") {
		return base, pattern, false
	}
	dir, rest := doublestar.SplitPattern(pattern)
	root = base
	if dir != "." {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
		root = filepath.Clean(dir)
	}
	// "**/name-pattern" is a name pattern at any depth: match names
	// directly, without doublestar's backtracking over directories.
	if name, ok := strings.CutPrefix(rest, "**/"); ok && !strings.Contains(name, "/") && !strings.Contains(name, "**") {
		return root, name, false
	}
	return root, rest, true
}

// nameMatcher matches file names against pattern, with fast paths for
// "*.ext" and plain names.
func nameMatcher(pattern string) func(string) bool {
	switch {
	case !hasMeta(pattern):
		return func(name string) bool { return name == pattern }
	case pattern[0] == '*' && len(pattern) > 1 && !hasMeta(pattern[1:]):
		suffix := pattern[1:]
		return func(name string) bool { return strings.HasSuffix(name, suffix) }
	}
	return func(name string) bool { return doublestar.MatchUnvalidated(pattern, name) }
}

// globRank orders Glob's results: oldest modification first, ties by path.
type globRank struct {
	mtime fileTime
	abs   string
}

func (a globRank) compare(b globRank) int {
	if c := a.mtime.compare(b.mtime); c != 0 {
		return c
	}
	return strings.Compare(a.abs, b.abs)
}

// globKept is what one of Glob's walk workers keeps: how many files it
// saw and the oldest GlobMaxResults of them.
type globKept struct {
	total  int
	oldest bestN[globRank]
	_      [64]byte // workers' counts on separate cache lines
}

func (k *globKept) add(r globRank) {
	k.total++
	k.oldest.add(r, GlobMaxResults)
}
