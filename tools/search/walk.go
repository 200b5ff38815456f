package search

import (
	"container/heap"
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Walker limits.
const (
	// prefetchCap bounds the directory entries listed ahead of the
	// consumer; past it, directories are read when reached.
	prefetchCap = 50_000
)

// walkFilter decides which entries a walk yields. Directories are pruned
// when excluded; symbolic links and special files are never yielded, and
// VCS directories (.git, .hg, ...) are never entered.
type walkFilter struct {
	// useIgnore applies .gitignore, .ignore, .git/info/exclude and the
	// global excludes (Grep); Glob walks without them.
	useIgnore bool
	// overrides are Grep's glob patterns; they beat the ignore files.
	overrides *ruleSet
	// types keeps only files of a type (Grep's type).
	types *typeFilter
	// matchName keeps a file by its name; matchRel by its path relative
	// to the root, slash separated (Glob's pattern).
	matchName func(name string) bool
	matchRel  func(rel string) bool
	// wantModTime asks for each yielded file's modification time.
	wantModTime bool
	// denied, when set, hides the paths a permission deny rule covers
	// (tools.UseContext.ReadDenied); hidden counts them.
	denied func(abs string, isDir bool) bool
	hidden *atomic.Int64
}

// hideDenied makes f skip what uc's deny rules cover, counting it in
// hidden.
func (f walkFilter) hideDenied(uc *tools.UseContext, hidden *atomic.Int64) walkFilter {
	f.denied, f.hidden = uc.ReadDenied, hidden
	return f
}

// hiddenNote is the line a search adds when deny rules hid n paths.
func hiddenNote(n int64) string {
	if n == 0 {
		return ""
	}
	word := "paths"
	if n == 1 {
		word = "path"
	}
	return fmt.Sprintf("\n(%d %s below the search root skipped: a permission deny rule covers them.)", n, word)
}

// walkFile is one file a walk yields.
type walkFile struct {
	abs, rel string
	modTime  fileTime // when walkFilter.wantModTime
}

// walker traverses a directory tree. Listings are read by a pool of
// goroutines ahead of the consumer (a parallel traversal), while files are
// yielded in one deterministic order: depth first, with each directory's
// entries sorted bytewise by name, the order ripgrep's --sort path gives.
type walker struct {
	root   string
	filter walkFilter
	global *ruleSet
	// rootfd is the root directory's descriptor: every directory and file
	// below it is opened relative to it, following no symbolic link (see
	// openDirAt, openFileAt). -1 until set by in or walk.
	rootfd int

	// pending holds the directories found but not yet listed, ordered so
	// that workers list them in the order the consumer will need them.
	mu       sync.Mutex
	cond     *sync.Cond
	pending  jobHeap
	buffered int // entries listed by workers and not yet consumed
	stopped  bool
}

// dirJob is the listing of one directory, filtered, made by whichever
// goroutine claims it first.
type dirJob struct {
	abs, rel   string
	parent     *ignoreNode
	claimed    atomic.Bool
	done       chan struct{}
	prefetched bool
	items      []walkItem
}

type walkItem struct {
	abs, rel string
	dir      *dirJob // set for directories
	modTime  fileTime
}

func newWalker(root string, f walkFilter) *walker {
	w := &walker{root: root, filter: f, rootfd: -1}
	w.cond = sync.NewCond(&w.mu)
	if f.useIgnore {
		w.global = globalExcludes()
	}
	return w
}

// in makes the walk start from dir, the root directory already open (the
// way the tool opened it after the permission check); dir must stay open
// until the walk and every openFile of its files are done.
func (w *walker) in(dir *os.File) *walker {
	w.rootfd = rootFD(dir)
	return w
}

// beforeOpen, when set (by tests), runs right before a walk opens a
// directory or a file below its root, with its path relative to the root
// ("" for the root itself).
var beforeOpen func(rel string)

// openFile opens a file the walk yielded, relative to the root's
// descriptor, following no symbolic link.
func (w *walker) openFile(f walkFile) (*rawFile, error) {
	if beforeOpen != nil {
		beforeOpen(f.rel)
	}
	return openFileAt(w.rootfd, f.rel, f.abs)
}

// walk yields every file the filter keeps, in order, until emit returns
// an error or ctx is done. Unreadable directories are skipped. Without
// in, the root is opened by its path here, and closed when walk returns.
func (w *walker) walk(ctx context.Context, emit func(walkFile) error) error {
	it, err := w.start(ctx)
	if err != nil {
		return err
	}
	defer it.stop()
	for {
		f, ok, err := it.next(ctx)
		if !ok {
			return err
		}
		if err := emit(f); err != nil {
			return err
		}
	}
}

// walkIter is a walk in progress, its files pulled one at a time by
// next: the consumer advances the depth-first traversal itself, so no
// goroutine stands between the walk and whoever uses its files. The
// listing workers run ahead of it. It is not safe for concurrent use.
type walkIter struct {
	w     *walker
	stack []walkFrame
	wg    sync.WaitGroup // the listing workers
	// closeRoot closes the root when start opened it.
	closeRoot func()
}

type walkFrame struct {
	job *dirJob
	i   int // next item
}

// start begins a walk: it opens the root when in was not called, starts
// the listing workers and lists the root. stop must be called when done.
func (w *walker) start(ctx context.Context) (*walkIter, error) {
	it := &walkIter{w: w}
	if w.rootfd < 0 {
		dir, err := os.Open(w.root)
		if err != nil {
			return nil, ctx.Err()
		}
		w.rootfd = rootFD(dir)
		it.closeRoot = func() {
			dir.Close()
			w.rootfd = -1
		}
	}
	var parent *ignoreNode
	if w.filter.useIgnore {
		parent = ancestorNodes(w.root, w.global)
	}
	root := &dirJob{abs: w.root, parent: parent, done: make(chan struct{})}
	for range max(1, runtime.GOMAXPROCS(0)) {
		it.wg.Add(1)
		go func() {
			defer it.wg.Done()
			for {
				job := w.take()
				if job == nil {
					return
				}
				if job.claimed.CompareAndSwap(false, true) {
					job.prefetched = true
					w.run(job)
				}
			}
		}()
	}
	w.obtain(root)
	it.stack = []walkFrame{{job: root}}
	return it, nil
}

// stop ends the walk: the listing workers exit, the root is closed if
// start opened it.
func (it *walkIter) stop() {
	w := it.w
	w.mu.Lock()
	w.stopped = true
	w.cond.Broadcast()
	w.mu.Unlock()
	it.wg.Wait()
	if it.closeRoot != nil {
		it.closeRoot()
	}
}

// next returns the walk's next file; ok is false at the end, or when ctx
// is done (err then says why).
func (it *walkIter) next(ctx context.Context) (f walkFile, ok bool, err error) {
	w := it.w
	for len(it.stack) > 0 {
		fr := &it.stack[len(it.stack)-1]
		if fr.i >= len(fr.job.items) {
			if fr.job.prefetched {
				w.mu.Lock()
				full := w.buffered >= prefetchCap
				w.buffered -= len(fr.job.items)
				if full && w.buffered < prefetchCap {
					w.cond.Broadcast() // workers may be waiting for room
				}
				w.mu.Unlock()
			}
			fr.job.items = nil
			it.stack = it.stack[:len(it.stack)-1]
			continue
		}
		item := fr.job.items[fr.i]
		fr.i++
		if item.dir != nil {
			if err := ctx.Err(); err != nil {
				return walkFile{}, false, err
			}
			w.obtain(item.dir)
			it.stack = append(it.stack, walkFrame{job: item.dir})
			continue
		}
		return walkFile{abs: item.abs, rel: item.rel, modTime: item.modTime}, true, nil
	}
	return walkFile{}, false, ctx.Err()
}

// ready reports whether next can go on without waiting for a listing
// worker (it may still list a directory itself).
func (it *walkIter) ready() bool {
	if len(it.stack) == 0 {
		return true
	}
	fr := &it.stack[len(it.stack)-1]
	if fr.i >= len(fr.job.items) {
		return true
	}
	d := fr.job.items[fr.i].dir
	if d == nil || !d.claimed.Load() {
		return true
	}
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// obtain makes sure job's listing is ready: reading it here when no
// worker has started on it, else waiting for the worker.
func (w *walker) obtain(job *dirJob) {
	if job.claimed.CompareAndSwap(false, true) {
		w.run(job)
		return
	}
	<-job.done
}

// run lists and filters one directory, then offers its subdirectories to
// the prefetch workers while the buffer has room.
func (w *walker) run(job *dirJob) {
	defer close(job.done)
	items := w.read(job, nil, true)
	job.items = items
	w.mu.Lock()
	if job.prefetched {
		w.buffered += len(items)
	}
	for _, it := range items {
		if it.dir == nil {
			continue
		}
		heap.Push(&w.pending, it.dir)
		// One waiting worker per new directory: a broadcast would wake
		// every worker for each directory listed, most of them to find
		// nothing to do (a thundering herd on many cores).
		w.cond.Signal()
	}
	w.mu.Unlock()
}

// read lists and filters the directory of job, appending what the
// filter keeps to items[:0]: files, with their modification time when
// the filter wants it, and directories, each with a new job (it.dir).
// ordered sorts the entries by name and makes the jobs' done channels
// (the ordered walk's); an unordered walk needs neither. An unreadable
// directory yields nothing.
func (w *walker) read(job *dirJob, items []walkItem, ordered bool) []walkItem {
	items = items[:0]
	if beforeOpen != nil {
		beforeOpen(job.rel)
	}
	dir, err := openDirAt(w.rootfd, job.rel, job.abs)
	if err != nil {
		return items
	}
	defer dir.Close()
	scratch := entryLists.Get().(*[]dirEntry)
	entries, err := dir.list(*scratch, ordered)
	defer func() {
		clear(entries) // the names share the listing's memory
		*scratch = entries[:0]
		entryLists.Put(scratch)
	}()
	if err != nil {
		return items
	}
	node := job.parent
	if w.filter.useIgnore {
		var f ignoreFiles
		for _, e := range entries {
			switch e.name {
			case ".git":
				f.hasGit = true
			case ".gitignore":
				f.hasGitignore = e.kind == kindFile
			case ".ignore":
				f.hasIgnore = e.kind == kindFile
			}
		}
		node = job.parent.child(job.abs, f, w.global, dir.readFile)
	}
	prefix := job.abs + "/"
	if job.abs == "/" {
		prefix = "/"
	}
	relPrefix := ""
	if job.rel != "" {
		relPrefix = job.rel + "/"
	}
	// The candidates' absolute paths are written into one allocation;
	// each path is a string over its part (rel is its tail).
	size := 0
	for i := range entries {
		e := &entries[i]
		if !w.candidate(e) {
			e.kind = kindOther
			continue
		}
		size += len(prefix) + len(e.name)
	}
	paths := make([]byte, 0, size)
	if items == nil {
		items = make([]walkItem, 0, len(entries))
	}
	for _, e := range entries {
		if e.kind == kindOther {
			continue
		}
		name := e.name
		isDir := e.kind == kindDir
		start := len(paths)
		paths = append(append(paths, prefix...), name...)
		abs := unsafe.String(&paths[start], len(paths)-start)
		rel := abs[len(abs)-len(relPrefix)-len(name):]
		if !w.keep(node, abs, rel, name, isDir) {
			continue
		}
		it := walkItem{abs: abs, rel: rel}
		if isDir {
			it.dir = &dirJob{abs: abs, rel: rel, parent: node}
			if ordered {
				it.dir.done = make(chan struct{})
			}
		} else if w.filter.wantModTime {
			it.modTime = dir.modTime(name)
		}
		items = append(items, it)
	}
	return items
}

// candidate reports whether a listed entry may be yielded or entered,
// before the filter's rules that need its path: version-control
// directories, symbolic links and special files, and (Glob) names the
// pattern rejects are not.
func (w *walker) candidate(e *dirEntry) bool {
	switch e.kind {
	case kindDir:
		return !vcsDirs[e.name]
	case kindFile:
		return w.filter.matchName == nil || w.filter.matchName(e.name)
	}
	return false
}

// entryLists holds the slices directories are listed into, reused from
// one directory to the next.
var entryLists = sync.Pool{New: func() any { return new([]dirEntry) }}

// take waits for a directory a worker may list: one is pending and the
// listed-ahead entries are under prefetchCap. It returns nil when the walk
// is over.
func (w *walker) take() *dirJob {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.stopped {
			return nil
		}
		for w.pending.Len() > 0 && w.buffered < prefetchCap {
			job := heap.Pop(&w.pending).(*dirJob)
			if !job.claimed.Load() {
				return job
			}
		}
		w.cond.Wait()
	}
}

// jobHeap orders pending directories by their place in the walk: depth
// first, names sorted, so the directory the consumer needs next is listed
// first.
type jobHeap []*dirJob

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(i, j int) bool { return walkOrderLess(h[i].rel, h[j].rel) }
func (h jobHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)        { *h = append(*h, x.(*dirJob)) }
func (h *jobHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// walkOrderLess compares two relative paths element by element, the
// order in which the walk visits them.
func walkOrderLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return true
		}
		if cb == '/' {
			return false
		}
		return ca < cb
	}
	return len(a) < len(b)
}

// keep applies the filter to one entry, in ripgrep's order: overrides
// decide first when they match, then ignore files, then the file type.
func (w *walker) keep(node *ignoreNode, abs, rel, name string, isDir bool) bool {
	f := &w.filter
	if f.denied != nil && f.denied(abs, isDir) {
		f.hidden.Add(1)
		return false
	}
	if f.overrides != nil {
		switch f.overrides.match(rel, name, isDir) {
		case ignoreIt:
			return false
		case keepIt:
			return true
		}
	}
	if f.useIgnore && node.ignored(abs, name, isDir) {
		return false
	}
	if isDir {
		return true
	}
	if f.types != nil && !f.types.matches(name) {
		return false
	}
	return f.matchRel == nil || f.matchRel(rel)
}

// walkUnordered yields every file the filter keeps, in no particular
// order, for a caller that orders the files itself (Glob, by
// modification time): workers goroutines (the caller's among them) each
// take a directory not yet listed, list it, and yield its files to
// emit(worker, f), worker being the goroutine's index from 0, so emit
// may keep its results per worker without a lock. With no order to keep
// there is no consumer to hand files to, no listing is sorted, and the
// only thing shared is the stack of directories still to list, taken
// under a lock once per directory. It returns ctx.Err(). Without in, the
// root is opened by its path here, and closed when it returns.
func (w *walker) walkUnordered(ctx context.Context, workers int, emit func(worker int, f walkFile)) error {
	if w.rootfd < 0 {
		dir, err := os.Open(w.root)
		if err != nil {
			return ctx.Err()
		}
		w.rootfd = rootFD(dir)
		defer func() {
			dir.Close()
			w.rootfd = -1
		}()
	}
	var parent *ignoreNode
	if w.filter.useIgnore {
		parent = ancestorNodes(w.root, w.global)
	}
	u := &unorderedWalk{w: w, stack: []*dirJob{{abs: w.root, parent: parent}}}
	u.cond = sync.NewCond(&u.mu)
	var wg sync.WaitGroup
	for i := 1; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.work(ctx, i, emit)
		}()
	}
	u.work(ctx, 0, emit)
	wg.Wait()
	return ctx.Err()
}

// unorderedWalk is the state walkUnordered's workers share.
type unorderedWalk struct {
	w      *walker
	mu     sync.Mutex
	cond   *sync.Cond
	stack  []*dirJob // directories found, not yet listed; the last is taken first (depth first)
	active int       // workers listing a directory, which may find more
	over   bool
}

func (u *unorderedWalk) work(ctx context.Context, worker int, emit func(int, walkFile)) {
	var items []walkItem
	defer func() { clear(items[:cap(items)]) }()
	for {
		job := u.take(ctx)
		if job == nil {
			return
		}
		items = u.w.read(job, items, false)
		for _, it := range items {
			if it.dir == nil {
				emit(worker, walkFile{abs: it.abs, rel: it.rel, modTime: it.modTime})
			}
		}
		u.done(items)
	}
}

// take returns the next directory to list, waiting while the stack is
// empty and other workers may still add to it; nil when the walk is over
// or ctx is done.
func (u *unorderedWalk) take(ctx context.Context) *dirJob {
	u.mu.Lock()
	defer u.mu.Unlock()
	for !u.over && len(u.stack) == 0 && u.active > 0 {
		u.cond.Wait()
	}
	if u.over || len(u.stack) == 0 || ctx.Err() != nil {
		u.over = true
		u.cond.Broadcast()
		return nil
	}
	job := u.stack[len(u.stack)-1]
	u.stack[len(u.stack)-1] = nil
	u.stack = u.stack[:len(u.stack)-1]
	u.active++
	return job
}

// done pushes the subdirectories a worker's listing found and wakes one
// waiting worker for each; the last worker to finish with nothing left
// wakes them all to end.
func (u *unorderedWalk) done(items []walkItem) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.active--
	for i := len(items) - 1; i >= 0; i-- {
		if d := items[i].dir; d != nil {
			u.stack = append(u.stack, d)
			u.cond.Signal()
		}
	}
	if u.active == 0 && len(u.stack) == 0 {
		u.cond.Broadcast()
	}
}
