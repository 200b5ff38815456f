//go:build linux

package search

import (
	"bytes"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux files and directories are read with plain system calls: os.Open
// also makes the descriptor non-blocking and tries to register it with the
// network poller, two extra system calls per file that cost more than
// reading a typical source file.

// rawFile is an open file read with plain system calls.
type rawFile struct{ fd int }

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
			return 0, errEOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }

// ModTime returns the file's modification time.
func (f *rawFile) ModTime() (time.Time, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return time.Time{}, err
	}
	return time.Unix(st.Mtim.Unix()), nil
}

// readDir lists dir, sorted by name, with each entry's type from the
// directory itself (d_type), falling back to lstat where the file system
// does not fill it in.
func readDir(dir string) ([]dirEntry, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &pathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 32<<10)
	var out []dirEntry
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &pathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			if len(b) < 19 {
				break
			}
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			e := dirEntry{name: string(name)}
			switch typ {
			case syscall.DT_DIR:
				e.kind = kindDir
			case syscall.DT_REG:
				e.kind = kindFile
			case syscall.DT_UNKNOWN:
				e.kind = lstatKind(dir + "/" + e.name)
			default:
				e.kind = kindOther
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b dirEntry) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return out, nil
}

// modTimes returns the modification times of names in dir (zero where
// one cannot be read), with fstatat relative to the directory so the
// kernel resolves one path element per name rather than the whole path.
func modTimes(dir string, names []string) []time.Time {
	out := make([]time.Time, len(names))
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return out
	}
	defer syscall.Close(fd)
	var st unix.Stat_t
	for i, name := range names {
		for {
			err = unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if err != unix.EINTR {
				break
			}
		}
		if err == nil {
			out[i] = time.Unix(st.Mtim.Unix())
		}
	}
	return out
}
