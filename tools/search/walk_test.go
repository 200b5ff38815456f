package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWalkUnorderedYieldsWhatWalkYields checks that the unordered walk
// (Glob's) yields the same files as the ordered one, each once, with its
// modification time, whatever the number of workers and the filter.
func TestWalkUnorderedYieldsWhatWalkYields(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := genCrossTree(t, 7, 600)
	for i := range 40 { // a deep chain: the stack of directories grows and shrinks
		writeTree(t, dir, map[string]string{strings.Repeat("d/", i+1) + fmt.Sprintf("f%d.go", i): "x"})
	}
	filters := map[string]func() walkFilter{
		"all":       func() walkFilter { return walkFilter{} },
		"ignore":    func() walkFilter { return walkFilter{useIgnore: true} },
		"name *.go": func() walkFilter { return walkFilter{matchName: nameMatcher("*.go"), wantModTime: true} },
		"rel src/**": func() walkFilter {
			return walkFilter{matchRel: func(rel string) bool { return strings.HasPrefix(rel, "src/") }}
		},
		"with mtimes": func() walkFilter { return walkFilter{wantModTime: true} },
	}
	for name, filter := range filters {
		var want []string
		if err := newWalker(dir, filter()).walk(t.Context(), func(f walkFile) error {
			want = append(want, f.rel)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(want)
		if len(want) == 0 {
			t.Fatalf("%s: the ordered walk yielded nothing", name)
		}
		for _, workers := range []int{1, 2, 8} {
			t.Run(fmt.Sprintf("%s/%d_workers", name, workers), func(t *testing.T) {
				f := filter()
				per := make([][]walkFile, workers)
				err := newWalker(dir, f).walkUnordered(t.Context(), workers, func(w int, f walkFile) {
					per[w] = append(per[w], f)
				})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, files := range per {
					for _, wf := range files {
						got = append(got, wf.rel)
						if wf.abs != filepath.Join(dir, wf.rel) {
							t.Errorf("abs %q for rel %q", wf.abs, wf.rel)
						}
						if f.wantModTime {
							info, err := os.Lstat(wf.abs)
							if err != nil {
								t.Fatal(err)
							}
							mt := info.ModTime()
							if want := (fileTime{sec: mt.Unix(), nsec: int32(mt.Nanosecond())}); wf.modTime != want {
								t.Errorf("%s: modTime %v, want %v", wf.rel, wf.modTime, want)
							}
						}
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("unordered walk yielded %d files, the ordered walk %d:\n got %q\nwant %q", len(got), len(want), got, want)
				}
			})
		}
	}
}

// TestWalkUnorderedStopsWhenCanceled checks that the unordered walk ends,
// all its workers with it, and says why, once its context is done.
func TestWalkUnorderedStopsWhenCanceled(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{}
	for i := range 200 {
		tree[fmt.Sprintf("d%d/e%d/f.txt", i%20, i)] = "x"
	}
	writeTree(t, dir, tree)
	for _, workers := range []int{1, 4} {
		ctx, cancel := context.WithCancel(t.Context())
		n := 0
		var mu = make(chan struct{}, 1)
		err := newWalker(dir, walkFilter{}).walkUnordered(ctx, workers, func(int, walkFile) {
			mu <- struct{}{}
			if n++; n == 5 {
				cancel()
			}
			<-mu
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%d workers: err %v, want context.Canceled", workers, err)
		}
		if n >= 200 {
			t.Errorf("%d workers: the walk went on to the end (%d files) after its context was canceled", workers, n)
		}
		cancel()
	}
}
