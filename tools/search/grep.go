package search

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed grep.md
var grepDescription string

// Grep's limits and defaults (docs/tools.md §1, §6).
const (
	// GrepMaxResultSizeChars is Grep's result budget.
	GrepMaxResultSizeChars = 20_000
	// GrepDefaultHeadLimit is head_limit when none is given.
	GrepDefaultHeadLimit = 250
	// searchWindow bounds the files in flight between the walker and the
	// printer, so a slow file never lets results pile up; it grows with
	// the workers, 64 files each.
	searchWindow = 256
)

// GrepInput is Grep's input.
type GrepInput struct {
	Pattern         string `json:"pattern" jsonschema:"Regular expression to search file contents for (Go RE2 syntax, as in ripgrep)"`
	Path            string `json:"path,omitempty" jsonschema:"File or directory to search (absolute, or relative to the current directory); default the current directory"`
	Glob            string `json:"glob,omitempty" jsonschema:"Only search files matching these glob patterns, e.g. \"*.js\", \"*.{ts,tsx}\", \"!*_test.go\"; several may be separated by spaces or commas"`
	Type            string `json:"type,omitempty" jsonschema:"Only search files of this type, e.g. go, py, js, ts, rust, java, c, cpp, md, json, yaml, sh, html, css"`
	OutputMode      string `json:"output_mode,omitempty" jsonschema:"\"files_with_matches\" (default) lists matching files, newest first; \"content\" shows matching lines; \"count\" shows match counts per file"`
	CaseInsensitive bool   `json:"-i,omitempty" jsonschema:"Case-insensitive search"`
	LineNumbers     *bool  `json:"-n,omitempty" jsonschema:"Show line numbers (content mode); default true"`
	OnlyMatching    bool   `json:"-o,omitempty" jsonschema:"Show only the matched parts of lines (content mode)"`
	After           *int   `json:"-A,omitempty" jsonschema:"Lines to show after each match (content mode)"`
	Before          *int   `json:"-B,omitempty" jsonschema:"Lines to show before each match (content mode)"`
	ContextC        *int   `json:"-C,omitempty" jsonschema:"Lines to show before and after each match (content mode)"`
	Context         *int   `json:"context,omitempty" jsonschema:"Lines to show before and after each match (content mode); same as -C"`
	Multiline       bool   `json:"multiline,omitempty" jsonschema:"Let the pattern span lines: . matches newlines"`
	HeadLimit       *int   `json:"head_limit,omitempty" jsonschema:"Show at most this many output lines, files or count lines; default 250, 0 for no limit"`
	Offset          *int   `json:"offset,omitempty" jsonschema:"Skip this many output lines, files or count lines first, to page through results; default 0"`
}

// Grep returns the Grep tool.
func Grep() *tools.Tool {
	return tools.New(tools.Tool{
		Name:               "Grep",
		Description:        grepDescription,
		SearchHint:         "search file contents by regex, like ripgrep",
		Core:               true,
		MaxResultSizeChars: GrepMaxResultSizeChars,
		ReadOnly:           true,
		ConcurrencySafe:    true,
		Idempotent:         true,
	}, tools.Handler[GrepInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "output_mode").Enum = []any{"content", "files_with_matches", "count"}
			tools.Default(s, "output_mode", "files_with_matches")
			tools.Default(s, "-n", true)
			tools.Default(s, "head_limit", GrepDefaultHeadLimit)
			tools.Default(s, "offset", 0)
			for _, k := range []string{"-A", "-B", "-C", "context", "head_limit", "offset"} {
				tools.Prop(s, k).Minimum = tools.Ptr(0.0)
			}
		},
		Validate: func(_ context.Context, in *GrepInput, _ *tools.UseContext) error {
			_, err := in.plan()
			return err
		},
		Call: runGrep,
	})
}

// grepPlan is a validated Grep input, ready to run.
type grepPlan struct {
	m             *matcher
	opt           searchOptions
	overrides     *ruleSet
	types         *typeFilter
	limit, offset int
}

// plan checks the input and compiles the pattern, globs and type.
func (in *GrepInput) plan() (*grepPlan, error) {
	p := &grepPlan{limit: GrepDefaultHeadLimit}
	switch in.OutputMode {
	case "", "files_with_matches":
		p.opt.mode = modeFiles
	case "content":
		p.opt.mode = modeContent
	case "count":
		p.opt.mode = modeCount
	default:
		return nil, fmt.Errorf(`output_mode %q is not one of "files_with_matches", "content", "count"`, in.OutputMode)
	}
	for name, v := range map[string]*int{"-A": in.After, "-B": in.Before, "-C": in.ContextC, "context": in.Context, "head_limit": in.HeadLimit, "offset": in.Offset} {
		if v != nil && *v < 0 {
			return nil, fmt.Errorf("%s must be 0 or more, got %d", name, *v)
		}
	}
	if in.HeadLimit != nil {
		p.limit = *in.HeadLimit
	}
	if in.Offset != nil {
		p.offset = *in.Offset
	}
	if p.opt.mode == modeContent {
		ctxLines := in.ContextC
		if in.Context != nil {
			ctxLines = in.Context
		}
		if ctxLines != nil {
			p.opt.before, p.opt.after = *ctxLines, *ctxLines
		}
		if in.Before != nil {
			p.opt.before = *in.Before
		}
		if in.After != nil {
			p.opt.after = *in.After
		}
		p.opt.lineNumbers = in.LineNumbers == nil || *in.LineNumbers
		p.opt.onlyMatching = in.OnlyMatching
	} else if p.opt.mode == modeCount {
		p.opt.onlyMatching = in.OnlyMatching
	}
	m, err := compileMatcher(in.Pattern, in.CaseInsensitive, in.Multiline)
	if err != nil {
		return nil, err
	}
	p.m = m
	if p.overrides, err = compileOverrides(splitGlobParam(in.Glob)); err != nil {
		return nil, err
	}
	if in.Type != "" {
		if p.types, err = compileType(in.Type); err != nil {
			return nil, err
		}
	}
	p.opt.retainCap = -1
	if p.limit > 0 {
		p.opt.retainCap = p.offset + p.limit
	}
	return p, nil
}

func runGrep(ctx context.Context, in *GrepInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	plan, err := in.plan()
	if err != nil {
		return nil, err
	}
	s := uc.Session
	root := uc.Dir()
	if strings.TrimSpace(in.Path) != "" {
		root = uc.Resolve(in.Path)
	}
	if _, err := os.Stat(root); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("path %s does not exist (current directory: %s): give an existing file or directory, or leave path out to search the current directory", root, s.Cwd())
		}
		return nil, fmt.Errorf("cannot search %s: %w", root, err)
	}
	var hidden atomic.Int64
	pr := newPrinter(plan.opt.mode, plan.limit, plan.offset, plan.opt.before > 0 || plan.opt.after > 0)
	top, err := openRoot(uc, root)
	if err != nil {
		return nil, err
	}
	info, err := top.Stat()
	if err != nil {
		top.Close()
		return nil, fmt.Errorf("cannot search %s: %w", root, err)
	}
	if info.IsDir() {
		defer top.Close()
		plan.opt.withPath = true
		err = searchTree(ctx, top, root, s.Display(root), plan, pr, walkFilter{}.hideDenied(uc, &hidden))
	} else {
		// A single file is searched whatever the globs, type and ignore
		// files say, and its lines are printed without its name.
		res := &fileResult{abs: root, display: s.Display(root)}
		sr := newSearcher(plan.m, plan.opt, &pr.pageFull)
		sr.search(rawFromOS(top), res)
		sr.release()
		if res.err != nil {
			return nil, fmt.Errorf("cannot search %s: %w", root, res.err)
		}
		pr.add(res)
	}
	if err != nil {
		return nil, err
	}
	text, out := pr.result()
	return &tools.Result{Text: text + pr.unreadableNote() + hiddenNote(hidden.Load()), Output: out}, nil
}

// searchTree walks root, open as dir, and searches its files on parallel
// workers, merging their results in walk order into pr. displayRoot is
// how root is shown ("." for the current directory).
//
// Each worker owns its searcher, buffers and automaton, and takes the
// walk's files a chunk at a time: under one lock it pulls up to
// chunkFiles consecutive files from the walk and queues the chunk for
// the merger, then searches the chunk with no lock held. There is no
// walker goroutine to hand files over (and to wait for a processor
// between hand-offs): the walk advances on whichever worker needs work,
// and the lock is taken once per chunk. The merger takes chunks in walk
// order and waits only for the one it needs next; workers run up to
// searchWindow files (64 a worker) ahead of it, so a large file holds up
// no one but the merger.
//
// deny carries the permission deny rules' filter (walkFilter.hideDenied).
func searchTree(ctx context.Context, dir *os.File, root, displayRoot string, plan *grepPlan, pr *printer, deny walkFilter) error {
	filter := walkFilter{useIgnore: true, overrides: plan.overrides, types: plan.types, denied: deny.denied, hidden: deny.hidden}
	w := newWalker(root, filter).in(dir)
	prefix := ""
	if displayRoot != "." {
		prefix = strings.TrimSuffix(displayRoot, "/") + "/"
	}
	it, err := w.start(ctx)
	if err != nil {
		return err
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	order := make(chan *chunk, max(searchWindow, 64*workers)/chunkFiles)
	var (
		mu      sync.Mutex // guards it, walkErr, ended and sends on order
		walkErr error
		ended   bool
	)
	// take fills c with the walk's next files and queues it for the
	// merger; false at the walk's end. Only the walk's advance and the
	// queueing happen under mu: the chunk is made before and its results
	// after.
	take := func(c *chunk) bool {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return false
		}
		for c.n < chunkFiles {
			if c.n > 0 && !it.ready() {
				break // search what we have rather than wait for a listing
			}
			f, ok, err := it.next(ctx)
			if !ok {
				walkErr, ended = err, true
				break
			}
			c.files[c.n] = f
			c.n++
		}
		if c.n > 0 {
			// The merger frees room as the chunks ahead finish; those are
			// searched by workers that do not hold mu.
			order <- c
		}
		if ended {
			close(order)
		}
		return c.n > 0
	}

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sr := newSearcher(plan.m, plan.opt, &pr.pageFull)
			defer sr.release()
			for {
				c := newChunk()
				if !take(c) {
					c.recycle()
					break
				}
				searchChunk(ctx, c, w, sr, plan.opt.mode, prefix)
				close(c.done)
			}
		}()
	}

	for c := range order {
		<-c.done // workers skip the rest of their chunk once ctx is done
		for i := range c.results {
			pr.add(&c.results[i])
		}
		c.recycle()
	}
	wg.Wait()
	it.stop()
	if walkErr != nil {
		return walkErr
	}
	return ctx.Err()
}

// searchChunk searches the files of c in order into c.results, each
// shown under prefix, until ctx is done.
func searchChunk(ctx context.Context, c *chunk, w *walker, sr *searcher, mode outputMode, prefix string) {
	for _, f := range c.files[:c.n] {
		c.results = append(c.results, fileResult{abs: f.abs, file: f})
	}
	for i := range c.results {
		r := &c.results[i]
		if ctx.Err() != nil {
			break
		}
		if mode == modeContent {
			r.display = prefix + r.file.rel // content lines carry it
		}
		if f, err := w.openFile(r.file); err != nil {
			r.err = err
		} else {
			sr.search(f, r)
		}
		if (r.matched || r.err != nil) && r.display == "" {
			r.display = prefix + r.file.rel
		}
	}
}

// chunkFiles is how many consecutive files of a walk a worker takes at a
// time.
const chunkFiles = 16

// chunk is a run of consecutive files of the walk and their results.
type chunk struct {
	files   [chunkFiles]walkFile
	n       int // files taken
	results []fileResult
	done    chan struct{} // closed when every result is filled in
}

// chunks holds chunks the merger is done with, for the next ones: a
// chunk's results are the search's largest allocation per file.
var chunks = sync.Pool{New: func() any { return &chunk{results: make([]fileResult, 0, chunkFiles)} }}

func newChunk() *chunk {
	c := chunks.Get().(*chunk)
	c.done = make(chan struct{})
	return c
}

// recycle returns c, merged, to the pool; nothing may refer to it or its
// results after.
func (c *chunk) recycle() {
	clear(c.results)
	c.results = c.results[:0]
	clear(c.files[:c.n])
	c.n = 0
	c.done = nil
	chunks.Put(c)
}
