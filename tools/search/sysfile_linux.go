//go:build linux

package search

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// On Linux files and directories are read with plain system calls: os.Open
// also makes the descriptor non-blocking and tries to register it with the
// network poller, two extra system calls per file that cost more than
// reading a typical source file.
//
// Everything below the walk's root is opened relative to the root's
// descriptor with openat2, following no symbolic link in any component
// (confine.OpenBeneath): a directory swapped for a link during the
// walk, even one leading back inside, is not entered, and a file swapped
// for one is not read.

// rawFile is an open file read with plain system calls.
type rawFile struct {
	fd int
	// f, when set, owns fd (a file opened by os).
	f *os.File
}

// openFile opens the file at path, following links (a path the caller
// named itself).
func openFile(path string) (*rawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &pathError{Op: "open", Path: path, Err: err}
		}
		return &rawFile{fd: fd}, nil
	}
}

// openFileAt opens the file rel below the directory open as rootfd,
// following no symbolic link; abs names it in errors. O_NONBLOCK keeps a
// named pipe swapped in from blocking the open.
func openFileAt(rootfd int, rel, abs string) (*rawFile, error) {
	fd, err := confine.OpenBeneath(rootfd, rel, syscall.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	return &rawFile{fd: fd}, nil
}

// rawFromOS reads f, which it then owns, with plain system calls.
func rawFromOS(f *os.File) *rawFile { return &rawFile{fd: int(f.Fd()), f: f} }

// Read reads like io.Reader: 0 bytes and io.EOF at the end.
func (f *rawFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error {
	if f.f != nil {
		return f.f.Close()
	}
	return syscall.Close(f.fd)
}

// ModTime returns the file's modification time.
func (f *rawFile) ModTime() (time.Time, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return time.Time{}, err
	}
	return time.Unix(st.Mtim.Unix()), nil
}

// rawDir is an open directory of a walk.
type rawDir struct {
	fd    int
	path  string // for errors
	cname []byte // scratch: a name as a C string (modTime)
}

// rootFD returns the descriptor of the walk's root directory.
func rootFD(f *os.File) int { return int(f.Fd()) }

// openDirAt opens the directory rel ("" for the root itself) below the
// directory open as rootfd, following no symbolic link; abs names it.
func openDirAt(rootfd int, rel, abs string) (*rawDir, error) {
	if rel == "" {
		rel = "."
	}
	fd, err := confine.OpenBeneath(rootfd, rel, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return nil, &pathError{Op: "open", Path: abs, Err: err}
	}
	return &rawDir{fd: fd, path: abs}, nil
}

func (d *rawDir) Close() error { return syscall.Close(d.fd) }

// direntBufs holds the buffers directory listings are read into: one
// allocated per directory (32 KB, zeroed) was most of what a walk
// allocated.
var direntBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// list returns the directory's entries, sorted by name when sorted, each with its type
// from the directory itself (d_type), falling back to fstatat where the
// file system does not fill it in. The names of one read share one
// string: one allocation per read rather than one per name. The entries
// are appended to out[:0].
func (d *rawDir) list(out []dirEntry, sorted bool) ([]dirEntry, error) {
	bp := direntBufs.Get().(*[32 << 10]byte)
	defer direntBufs.Put(bp)
	buf := bp[:]
	out = out[:0]
	for {
		n, err := syscall.ReadDirent(d.fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &pathError{Op: "readdirent", Path: d.path, Err: err}
		}
		if n <= 0 {
			break
		}
		blob := string(buf[:n])
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			if n-off < 19 {
				break
			}
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			if reclen < 19 || reclen > n-off {
				break
			}
			typ := buf[off+18]
			name := blob[off+19 : off+reclen]
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if len(name) == 0 || name == "." || name == ".." {
				continue
			}
			e := dirEntry{name: name}
			switch typ {
			case syscall.DT_DIR:
				e.kind = kindDir
			case syscall.DT_REG:
				e.kind = kindFile
			case syscall.DT_UNKNOWN:
				e.kind = d.kindOf(e.name)
			default:
				e.kind = kindOther
			}
			out = append(out, e)
		}
	}
	if sorted {
		slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	}
	return out, nil
}

// kindOf finds an entry's kind when the listing did not say.
func (d *rawDir) kindOf(name string) entryKind {
	var st unix.Stat_t
	if err := fstatatRetry(d.fd, name, &st); err != nil {
		return kindOther
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFREG:
		return kindFile
	}
	return kindOther
}

// modTime returns the modification time of the entry name in the
// directory (unknownTime where it cannot be read), with fstatat relative to it
// so the kernel resolves one path element rather than the whole path.
func (d *rawDir) modTime(name string) fileTime {
	var st unix.Stat_t
	for {
		err := d.statName(name, &st)
		switch err {
		case nil:
			return fileTime{sec: int64(st.Mtim.Sec), nsec: int32(st.Mtim.Nsec)}
		case unix.EINTR:
			continue
		}
		return unknownTime
	}
}

func fstatatRetry(dirfd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}

// readFile reads the file name in the directory, following no symbolic
// link.
func (d *rawDir) readFile(name string) ([]byte, error) {
	fd, err := confine.OpenBeneath(d.fd, name, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path+"/"+name)
	defer f.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(f)
	return out.Bytes(), err
}
