package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitIn runs git in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestGitlinksOf: the gitlinks read from the index are those git lists,
// in every index version, with SHA-1 and SHA-256 object ids, with
// extended flags, and with a split index whose entries live in a shared
// file beside it.
func TestGitlinksOf(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, tt := range []struct {
		name    string
		init    []string
		version string
		extra   func(t *testing.T, dir string)
		zeroed  bool // the checksum is zeros (index.skipHash)
		corrupt bool // the checksum does not match: git refuses the index
	}{
		{name: "v2", version: "2"},
		{name: "v3 with intent-to-add", version: "3", extra: func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "later.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitIn(t, dir, "add", "-N", "later.txt")
		}},
		{name: "v4", version: "4"},
		{name: "sha256 v2", init: []string{"--object-format=sha256"}, version: "2"},
		{name: "sha256 v4", init: []string{"--object-format=sha256"}, version: "4"},
		// index.skipHash (git 2.40 and later) writes zeros for the
		// checksum: made here by hand, which git 2.40 accepts.
		{name: "sha256 v4 without a checksum (index.skipHash)", init: []string{"--object-format=sha256"}, version: "4", zeroed: true},
		{name: "v2 without a checksum (index.skipHash)", version: "2", zeroed: true},
		{name: "a checksum that does not match", version: "2", corrupt: true},
		{name: "split index", version: "2", extra: func(t *testing.T, dir string) {
			gitIn(t, dir, "update-index", "--split-index")
			gitIn(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("c", oidLen(t, dir))+",zz/after-split")
		}},
		// The shared index is the one the link extension names, not the
		// first of the names a command may have put beside it.
		{name: "split index behind decoys", version: "2", extra: func(t *testing.T, dir string) {
			gitIn(t, dir, "update-index", "--split-index")
			gitIn(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("c", oidLen(t, dir))+",zz/after-split")
			for _, d := range []string{"0", "00", "000", "0000", "00000"} {
				if err := os.WriteFile(filepath.Join(dir, ".git", "sharedindex."+d), []byte("DIRC"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}},
		// Git follows a link in the index's place, so the reader does.
		{name: "index behind a link", version: "2", extra: func(t *testing.T, dir string) {
			index := filepath.Join(dir, ".git", "index")
			moved := filepath.Join(dir, "elsewhere.idx")
			if err := os.Rename(index, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, index); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			gitIn(t, dir, append([]string{"init", "-q"}, tt.init...)...)
			n := oidLen(t, dir)
			for i, p := range []string{"a.txt", "deep/dir/b.txt", strings.Repeat(strings.Repeat("n", 120)+"/", 3) + "c.txt"} {
				full := filepath.Join(dir, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(fmt.Sprint(i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			gitIn(t, dir, "add", ".")
			for _, p := range []string{"sub", "vendor/x", "deep/dir/sub2", strings.Repeat(strings.Repeat("s", 120)+"/", 3) + "sub"} {
				gitIn(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("b", n)+","+p)
			}
			gitIn(t, dir, "update-index", "--index-version", tt.version)
			if tt.extra != nil {
				tt.extra(t, dir)
			}
			var want []string
			for _, line := range strings.Split(gitIn(t, dir, "ls-files", "-s"), "\n") {
				if f := strings.Fields(line); len(f) == 4 && f[0] == "160000" {
					want = append(want, f[3])
				}
			}
			if tt.zeroed || tt.corrupt {
				index := filepath.Join(dir, ".git", "index")
				b, err := os.ReadFile(index)
				if err != nil {
					t.Fatal(err)
				}
				n := oidLen(t, dir) / 2
				if tt.corrupt {
					b[len(b)-1] ^= 0xff
					want = nil
				} else {
					copy(b[len(b)-n:], make([]byte, n))
				}
				if err := os.WriteFile(index, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m := &repoMemory{}
			got := m.gitlinksOf(filepath.Join(dir, ".git"))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || (len(want) < 4 && !tt.corrupt) {
				t.Errorf("gitlinks %q, git lists %q", got, want)
			}
		})
	}
}

// oidLen is the length of an object id's hex spelling in dir's repository.
func oidLen(t *testing.T, dir string) int {
	return len(strings.TrimSpace(gitIn(t, dir, "hash-object", "--stdin")))
}

// TestWithGitlinks_findsWhatTheScanMissed: a repository the index names
// is found whatever the scan saw, and those its own index names; one not
// made yet is not.
func TestWithGitlinks_findsWhatTheScanMissed(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	gitIn(t, root, "init", "-q")
	gitIn(t, root, "init", "-q", "far/away/sub")
	gitIn(t, filepath.Join(root, "far/away/sub"), "init", "-q", "inner")
	n := oidLen(t, root)
	for _, p := range []string{"far/away/sub", "missing"} {
		gitIn(t, root, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("b", n)+","+p)
	}
	gitIn(t, filepath.Join(root, "far/away/sub"), "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("b", n)+",inner")
	m := &repoMemory{}
	got := m.withGitlinks([]string{filepath.Join(root, ".git")}, []string{root})
	want := []string{filepath.Join(root, ".git"), filepath.Join(root, "far/away/sub/.git"), filepath.Join(root, "far/away/sub/inner/.git")}
	if !slices.Equal(got, want) {
		t.Errorf("withGitlinks = %q, want %q", got, want)
	}
}

// FuzzReadGitlinks: no index, however malformed, makes the reader panic
// or hold more than a bounded path.
func FuzzReadGitlinks(f *testing.F) {
	dir := f.TempDir()
	if _, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command("sh", "-c", "git init -q && git update-index --add --cacheinfo 160000,"+strings.Repeat("b", 40)+",sub && git update-index --index-version 4")
		cmd.Dir = dir
		if cmd.Run() == nil {
			if b, err := os.ReadFile(filepath.Join(dir, ".git", "index")); err == nil {
				f.Add(b)
				f.Add(b[:len(b)/2])
			}
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x04\xff\xff\xff\xff"))
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, n := range []int{20, 32} {
			links, _ := readGitlinks(bufio.NewReader(bytes.NewReader(b)), n)
			for _, l := range links {
				if len(l) > 4097 {
					t.Fatalf("a path of %d bytes", len(l))
				}
			}
		}
	})
}

// TestGitlinksOf_oddFiles: an index that is a FIFO, a directory, a link to
// a device or to nothing gives no gitlinks, and reading it does not block.
func TestGitlinksOf_oddFiles(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		plant func(index string) error
	}{
		{"fifo", func(index string) error { return mkfifo(index) }},
		{"link to a fifo", func(index string) error {
			if err := mkfifo(index + ".fifo"); err != nil {
				return err
			}
			return os.Symlink(index+".fifo", index)
		}},
		{"directory", func(index string) error { return os.Mkdir(index, 0o755) }},
		{"link to a device", func(index string) error { return os.Symlink("/dev/zero", index) }},
		{"dangling link", func(index string) error { return os.Symlink("/nonexistent/index", index) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gitDir := filepath.Join(t.TempDir(), ".git")
			if err := os.Mkdir(gitDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tt.plant(filepath.Join(gitDir, "index")); err != nil {
				t.Skipf("cannot plant it here: %v", err)
			}
			if got := (&repoMemory{}).gitlinksOf(gitDir); len(got) != 0 {
				t.Errorf("gitlinks %q", got)
			}
		})
	}
}
