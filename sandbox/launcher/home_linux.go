package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// hideHome covers the plan's Home with an empty tmpfs and brings its
// HomeKept paths back at their own paths, each as it was (a writable root
// bound writable before stays writable, the rest stays read-only, mounts
// beneath them included), then makes the tmpfs read-only. The kept paths
// are cloned (open_tree) before the tmpfs hides them and moved onto
// mount points made in it; a kept symbolic link brings back what it
// points at. Nothing is done without a Home.
func hideHome(p Plan) error {
	if p.Home == "" {
		return nil
	}
	st, err := os.Stat(p.Home)
	if err != nil || !st.IsDir() {
		return nil // no home to hide
	}
	type clone struct {
		path string
		fd   int
		dir  bool
	}
	var clones []clone
	defer func() {
		for _, c := range clones {
			unix.Close(c.fd)
		}
	}()
	for _, k := range outermost(p.HomeKept, p.Home) {
		kst, err := os.Stat(k)
		if err != nil {
			continue // absent: nothing to bring back
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, k, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("keeping %s: %w", k, err)
		}
		clones = append(clones, clone{k, fd, kst.IsDir()})
	}
	mode := fmt.Sprintf("size=1m,mode=%o", st.Mode().Perm()|0o111)
	if err := unix.Mount("tmpfs", p.Home, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, mode); err != nil {
		return fmt.Errorf("hiding the home %s: %w", p.Home, err)
	}
	for _, c := range clones {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
			return fmt.Errorf("keeping %s: %w", c.path, err)
		}
		if c.dir {
			err = os.Mkdir(c.path, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(c.path, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("keeping %s: %w", c.path, err)
		}
		if err := unix.MoveMount(c.fd, "", unix.AT_FDCWD, c.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("keeping %s: %w", c.path, err)
		}
	}
	if err := setReadOnly(p.Home, false); err != nil {
		return fmt.Errorf("making the hidden home read-only: %w", err)
	}
	return nil
}

// outermost is kept's paths strictly beneath home, sorted, without those
// beneath another one (a recursive clone brings them along).
func outermost(kept []string, home string) []string {
	var in []string
	for _, k := range kept {
		k = filepath.Clean(k)
		if strings.HasPrefix(k, home+"/") {
			in = append(in, k)
		}
	}
	slices.Sort(in)
	var out []string
	for _, k := range in {
		if n := len(out); n > 0 && (k == out[n-1] || strings.HasPrefix(k, out[n-1]+"/")) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// readRules are the Landlock rules for reading: the whole filesystem, or,
// with a private Home and no mount namespace to hide it, every entry
// beside the home and beside each of its ancestors (walking down from
// /; the server's walk, HomeBeside, where it made one), then the HomeKept
// paths. An entry that is a symbolic link leading to the home, an
// ancestor of it or a path inside it is left out. Each directory is
// granted reading and executing, each other file reading and executing.
func readRules(p Plan) []landlock.Rule {
	if p.Home == "" || p.Namespaces || p.Home == "/" {
		return []landlock.Rule{landlock.RODirs("/")}
	}
	beside := p.HomeBeside
	if beside == nil {
		beside, _ = BesideHome(p.Home)
	}
	var rules []landlock.Rule
	for _, e := range beside {
		rules = appendBeside(rules, e)
	}
	for _, k := range p.HomeKept {
		rules = appendKept(rules, filepath.Clean(k), p.HomeHidden)
	}
	return rules
}

// BesideHome walks from / down to home and lists what lies beside the
// home and beside each of its ancestors, each entry its path after a
// letter saying what it was: D a directory, F another file, d and f a
// symbolic link to one (a link that leads to the home, above it or into
// it is left out, as is what cannot be read). walked are the directories
// it read, whose change (their modification time) makes the list stale.
// The server makes it once for many commands ([Plan.HomeBeside]).
func BesideHome(home string) (entries, walked []string) {
	home = filepath.Clean(home)
	for dir := "/"; dir != home && dir != "."; {
		rest := strings.TrimPrefix(strings.TrimPrefix(home, dir), "/")
		next := filepath.Join(dir, strings.SplitN(rest, "/", 2)[0])
		walked = append(walked, dir)
		if d, err := os.Open(dir); err == nil {
			names, _ := d.Readdirnames(-1)
			d.Close()
			slices.Sort(names)
			for _, n := range names {
				if path := filepath.Join(dir, n); path != next {
					if kind := besideKind(path, home); kind != 0 {
						entries = append(entries, string(kind)+path)
					}
				}
			}
		}
		dir = next
	}
	return entries, walked
}

// besideKind is what BesideHome says of path (0 to leave it out).
func besideKind(path, home string) byte {
	lst, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	link := lst.Mode()&os.ModeSymlink != 0
	if link {
		target, err := filepath.EvalSymlinks(path)
		if err != nil || target == home || target == "/" || strings.HasPrefix(home, target+"/") || strings.HasPrefix(target, home+"/") {
			return 0
		}
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return 0
	case st.IsDir() && link:
		return 'd'
	case st.IsDir():
		return 'D'
	case link:
		return 'f'
	}
	return 'F'
}

// appendBeside adds the rule for one of BesideHome's entries, made
// earlier by the server, when the path is still what it was (a directory
// still a directory, a link still a link); else it is left out.
func appendBeside(rules []landlock.Rule, entry string) []landlock.Rule {
	if len(entry) < 2 {
		return rules
	}
	kind, path := entry[0], entry[1:]
	lst, err := os.Lstat(path)
	if err != nil {
		return rules
	}
	link := lst.Mode()&os.ModeSymlink != 0
	switch {
	case kind == 'D' && !link && lst.IsDir():
		return append(rules, landlock.RODirs(path).IgnoreIfMissing())
	case kind == 'F' && !link && !lst.IsDir():
		return append(rules, landlock.ROFiles(path).IgnoreIfMissing())
	case kind == 'd' && link:
		return append(rules, landlock.RODirs(path).IgnoreIfMissing())
	case kind == 'f' && link:
		return append(rules, landlock.ROFiles(path).IgnoreIfMissing())
	}
	return rules
}

// appendKept adds the rules that let the kept path be read but for the
// hidden paths beneath it: the path whole where none is, else each of
// its entries in turn (Landlock can only grant, so a directory that holds
// a hidden path is granted around it; an entry made later in such a
// directory stays unreadable).
func appendKept(rules []landlock.Rule, path string, hidden []string) []landlock.Rule {
	inside := false
	for _, h := range hidden {
		h = filepath.Clean(h)
		if h == path {
			return rules
		}
		inside = inside || strings.HasPrefix(h, path+"/")
	}
	if !inside {
		return appendRead(rules, path, "")
	}
	if st, err := os.Lstat(path); err != nil || !st.IsDir() {
		return appendRead(rules, path, "")
	}
	d, err := os.Open(path)
	if err != nil {
		return rules
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	// No rule on the directory itself: one would cover the hidden entry
	// (so it cannot be listed; its other entries are read by name).
	for _, n := range names {
		rules = appendKept(rules, filepath.Join(path, n), hidden)
	}
	return rules
}

// appendRead adds the rule that lets path be read (as a directory or a
// file, after symbolic links), unless it is missing or, with home set,
// a link that leads to home, above it or into it.
func appendRead(rules []landlock.Rule, path, home string) []landlock.Rule {
	lst, err := os.Lstat(path)
	if err != nil {
		return rules
	}
	if lst.Mode()&os.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return rules
		}
		if home != "" && (target == home || target == "/" || strings.HasPrefix(home, target+"/") || strings.HasPrefix(target, home+"/")) {
			return rules
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return rules
	}
	if st.IsDir() {
		return append(rules, landlock.RODirs(path).IgnoreIfMissing())
	}
	return append(rules, landlock.ROFiles(path).IgnoreIfMissing())
}
