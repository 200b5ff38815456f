//go:build unix

package confine

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// readTree makes a working directory holding d/f.txt = "ours" and an
// outside directory holding d/f.txt = "theirs", both resolved.
func readTree(t *testing.T) (work, out string) {
	t.Helper()
	for _, dir := range []*string{&work, &out} {
		d, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		*dir = d
		os.MkdirAll(filepath.Join(d, "d"), 0o755)
	}
	os.WriteFile(filepath.Join(work, "d", "f.txt"), []byte("ours"), 0o644)
	os.WriteFile(filepath.Join(out, "d", "f.txt"), []byte("theirs"), 0o644)
	return work, out
}

func content(t *testing.T, f *os.File) string {
	t.Helper()
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// setBeforeOpen runs f once, right before OpenRead's open, for the test.
func setBeforeOpen(t *testing.T, f func()) {
	done := false
	beforeOpen = func(string) {
		if !done {
			done = true
			f()
		}
	}
	t.Cleanup(func() {
		beforeOpen = nil
		if !done {
			t.Error("the hook did not run")
		}
	})
}

func TestOpenRead(t *testing.T) {
	t.Run("inside_read_through_the_root", func(t *testing.T) {
		work, _ := readTree(t)
		f, err := OpenRead([]string{work}, map[string]string{}, filepath.Join(work, "d", "f.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := content(t, f); got != "ours" {
			t.Errorf("read %q", got)
		}
	})
	t.Run("directory_swapped_for_link_out_after_resolving_refused", func(t *testing.T) {
		for _, checked := range []map[string]string{nil, {}} {
			work, out := readTree(t)
			abs := filepath.Join(work, "d", "f.txt")
			setBeforeOpen(t, func() {
				os.Rename(filepath.Join(work, "d"), filepath.Join(work, "d.moved"))
				if err := os.Symlink(filepath.Join(out, "d"), filepath.Join(work, "d")); err != nil {
					t.Error(err)
				}
			})
			f, err := OpenRead([]string{work}, checked, abs)
			if err == nil {
				t.Fatalf("opened %q", content(t, f))
			}
			if !errors.Is(err, ErrOutside) {
				t.Errorf("error %v does not wrap ErrOutside", err)
			}
			beforeOpen = nil
		}
	})
	t.Run("outside_component_swapped_for_link_after_resolving_refused", func(t *testing.T) {
		// A path outside the working directories (allowed for itself) is
		// opened following no link: one swapped in after resolving makes
		// the open fail, even when it leads to another outside place.
		work, out := readTree(t)
		_, other := readTree(t)
		abs := filepath.Join(out, "d", "f.txt")
		setBeforeOpen(t, func() {
			os.Rename(filepath.Join(out, "d"), filepath.Join(out, "d.moved"))
			if err := os.Symlink(filepath.Join(other, "d"), filepath.Join(out, "d")); err != nil {
				t.Error(err)
			}
		})
		f, err := OpenRead([]string{work}, nil, abs)
		if err == nil {
			t.Fatalf("opened %q", content(t, f))
		}
		if !errors.Is(err, ErrOutside) {
			t.Errorf("error %v does not wrap ErrOutside", err)
		}
	})
	t.Run("outside_as_checked_read", func(t *testing.T) {
		work, out := readTree(t)
		link := filepath.Join(work, "l")
		os.Symlink(filepath.Join(out, "d"), link)
		abs := filepath.Join(link, "f.txt")
		real := filepath.Join(out, "d", "f.txt")
		for _, checked := range []map[string]string{nil, {abs: real}} {
			f, err := OpenRead([]string{work}, checked, abs)
			if err != nil {
				t.Fatal(err)
			}
			if got := content(t, f); got != "theirs" {
				t.Errorf("read %q", got)
			}
		}
	})
	t.Run("outside_not_as_checked_refused", func(t *testing.T) {
		work, out := readTree(t)
		abs := filepath.Join(out, "d", "f.txt")
		for name, checked := range map[string]map[string]string{
			"led_inside_then": {abs: filepath.Join(work, "d", "f.txt")},
			"not_judged":      {},
		} {
			f, err := OpenRead([]string{work}, checked, abs)
			if err == nil {
				t.Fatalf("%s: opened %q", name, content(t, f))
			}
			if !errors.Is(err, ErrOutside) {
				t.Errorf("%s: error %v does not wrap ErrOutside", name, err)
			}
		}
	})
}

func TestOpenBeneath(t *testing.T) {
	t.Parallel()
	work, out := readTree(t)
	os.Symlink(filepath.Join(out, "d"), filepath.Join(work, "out"))
	os.Symlink("d", filepath.Join(work, "in"))
	os.Symlink("f.txt", filepath.Join(work, "d", "lf"))
	dirfd, err := unix.Open(work, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	for _, path := range []struct{ name, how string }{{"fast", ""}, {"slow", "slow"}} {
		open := OpenBeneath
		if path.how == "slow" {
			open = openBeneathSlow
		}
		for _, tc := range []struct {
			rel string
			ok  bool
		}{
			{"d/f.txt", true},
			{".", true},
			{"d", true},
			{"out/f.txt", false},
			{"in/f.txt", false},
			{"d/lf", false},
			{"../x", false},
			{"d/../d/f.txt", false},
		} {
			fd, err := open(dirfd, tc.rel, unix.O_RDONLY)
			if err == nil {
				unix.Close(fd)
			}
			if (err == nil) != tc.ok {
				t.Errorf("%s %s: error %v, want success %v", path.name, tc.rel, err, tc.ok)
			}
		}
	}
}
