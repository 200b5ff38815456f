package search

import (
	"context"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// Walker limits.
const (
	// prefetchCap bounds the directory entries listed ahead of the
	// consumer; past it, directories are read when reached.
	prefetchCap = 50_000
	// queueSize bounds the directories waiting for a prefetch worker.
	queueSize = 1024
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
	// match keeps a file by its path relative to the root (slash
	// separated) and its name (Glob's pattern).
	match func(rel, name string) bool
	// wantInfo asks for each yielded file's FileInfo (lstat).
	wantInfo bool
}

// walkFile is one file a walk yields.
type walkFile struct {
	abs, rel string
	info     fs.FileInfo
}

// walker traverses a directory tree. Listings are read by a pool of
// goroutines ahead of the consumer (a parallel traversal), while files are
// yielded in one deterministic order: depth first, with each directory's
// entries sorted bytewise by name, the order ripgrep's --sort path gives.
type walker struct {
	root     string
	filter   walkFilter
	global   *ruleSet
	queue    chan *dirJob
	buffered atomic.Int64
	stopped  atomic.Bool
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
	info     fs.FileInfo
}

func newWalker(root string, f walkFilter) *walker {
	w := &walker{root: root, filter: f, queue: make(chan *dirJob, queueSize)}
	if f.useIgnore {
		w.global = globalExcludes()
	}
	return w
}

// walk yields every file the filter keeps, in order, until emit returns
// an error or ctx is done. Unreadable directories are skipped.
func (w *walker) walk(ctx context.Context, emit func(walkFile) error) error {
	var parent *ignoreNode
	if w.filter.useIgnore {
		parent = ancestorNodes(w.root, w.global)
	}
	root := &dirJob{abs: w.root, parent: parent, done: make(chan struct{})}

	var wg sync.WaitGroup
	quit := make(chan struct{})
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-quit:
					return
				case job := <-w.queue:
					if job.claimed.CompareAndSwap(false, true) {
						job.prefetched = true
						w.run(job)
					}
				}
			}
		}()
	}
	defer func() {
		// The queue is never closed: a worker may still be offering
		// subdirectories to it.
		w.stopped.Store(true)
		close(quit)
		wg.Wait()
	}()

	type frame struct {
		job *dirJob
		i   int
	}
	w.obtain(root)
	stack := []frame{{job: root}}
	for len(stack) > 0 {
		fr := &stack[len(stack)-1]
		if fr.i >= len(fr.job.items) {
			if fr.job.prefetched {
				w.buffered.Add(-int64(len(fr.job.items)))
			}
			fr.job.items = nil
			stack = stack[:len(stack)-1]
			continue
		}
		it := fr.job.items[fr.i]
		fr.i++
		if it.dir != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			w.obtain(it.dir)
			stack = append(stack, frame{job: it.dir})
			continue
		}
		if err := emit(walkFile{abs: it.abs, rel: it.rel, info: it.info}); err != nil {
			return err
		}
	}
	return ctx.Err()
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
	entries, err := readDir(job.abs)
	if err != nil {
		return
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
		node = job.parent.child(job.abs, f, w.global)
	}
	prefix := job.abs + "/"
	if job.abs == "/" {
		prefix = "/"
	}
	relPrefix := ""
	if job.rel != "" {
		relPrefix = job.rel + "/"
	}
	items := make([]walkItem, 0, len(entries))
	var dirs []*dirJob
	for _, e := range entries {
		name := e.name
		if vcsDirs[name] {
			continue
		}
		isDir := e.kind == kindDir
		if !isDir && e.kind != kindFile {
			continue // symbolic links are not followed; special files are not searched
		}
		abs, rel := prefix+name, relPrefix+name
		if !w.keep(node, abs, rel, name, isDir) {
			continue
		}
		it := walkItem{abs: abs, rel: rel}
		if isDir {
			it.dir = &dirJob{abs: abs, rel: rel, parent: node, done: make(chan struct{})}
			dirs = append(dirs, it.dir)
		} else if w.filter.wantInfo {
			info, err := os.Lstat(abs)
			if err != nil {
				continue
			}
			it.info = info
		}
		items = append(items, it)
	}
	job.items = items
	if job.prefetched {
		w.buffered.Add(int64(len(items)))
	}
	if w.buffered.Load() >= prefetchCap || w.stopped.Load() {
		return
	}
	for _, d := range dirs {
		select {
		case w.queue <- d:
		default:
			return
		}
	}
}

// keep applies the filter to one entry, in ripgrep's order: overrides
// decide first when they match, then ignore files, then the file type.
func (w *walker) keep(node *ignoreNode, abs, rel, name string, isDir bool) bool {
	f := &w.filter
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
	return f.match == nil || f.match(rel, name)
}
