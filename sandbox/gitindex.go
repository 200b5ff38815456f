package sandbox

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A repository's index names its submodules: an entry of mode 160000 (a
// gitlink) is a directory the user's git status enters and runs git in.
// The scan of the writable roots is bounded, and a command can make it
// stop before a repository it made (git-scan-exhausted); the index is
// what git itself follows, so the repositories it names are found
// however far the scan got (withGitlinks).

// gitlinkMode is a gitlink entry's mode (S_IFGITLINK, 0160000).
const gitlinkMode = 0o160000

// maxGitlinkRepos bounds the repositories withGitlinks adds.
const maxGitlinkRepos = 1000

// indexKey is what tells that an index file is unchanged since it was
// read.
type indexKey struct {
	ino   uint64
	size  int64
	mtime time.Time
}

// indexLinks is what an index file said when read at key.
type indexLinks struct {
	key    indexKey
	links  []string
	shared string
}

// withGitlinks returns entries (.git entries) and the .git entries of the
// repositories their indexes name as gitlinks, inside roots, and theirs
// in turn, boundedly. Each index is read again only when it changed.
func (m *repoMemory) withGitlinks(entries, roots []string) []string {
	out := slices.Clone(entries)
	have := make(map[string]bool, len(out))
	for _, e := range out {
		have[e] = true
	}
	for i := 0; i < len(out) && len(out) < len(entries)+maxGitlinkRepos; i++ {
		e := out[i]
		st, err := os.Lstat(e)
		if err != nil {
			continue
		}
		dir := e
		if st.Mode().IsRegular() {
			dir = gitDirOf(e)
		} else if !st.IsDir() {
			continue
		}
		if dir == "" {
			continue
		}
		worktree := filepath.Dir(e)
		for _, p := range m.gitlinksOf(dir) {
			g := filepath.Join(worktree, filepath.FromSlash(p), ".git")
			if have[g] || !within(g, roots) {
				continue
			}
			if _, err := os.Lstat(g); err != nil {
				continue // not there (yet): a later sweep finds it
			}
			have[g] = true
			out = append(out, g)
		}
	}
	return out
}

// gitlinksOf lists the gitlink paths of a git directory's index and, for
// a split index, of the shared index its link extension names.
func (m *repoMemory) gitlinksOf(dir string) []string {
	links, shared := m.indexGitlinks(filepath.Join(dir, "index"))
	if shared != "" {
		base, _ := m.indexGitlinks(filepath.Join(dir, "sharedindex."+shared))
		for _, l := range base {
			if !slices.Contains(links, l) {
				links = append(links, l)
			}
		}
	}
	return links
}

// indexGitlinks is the gitlinks of the index file at path and the shared
// index it names (split index: its hash in hex; empty when none), from
// the memory when the file is unchanged since it was read.
func (m *repoMemory) indexGitlinks(path string) ([]string, string) {
	f, err := openRegular(path)
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, ""
	}
	key := indexKey{ino: inode(st), size: st.Size(), mtime: st.ModTime()}
	m.mu.Lock()
	c, ok := m.indexes[path]
	m.mu.Unlock()
	if ok && c.key == key {
		return c.links, c.shared
	}
	var links []string
	shared := ""
	for _, idLen := range []int{20, 32} { // SHA-1 or SHA-256 object ids
		r, v := verifiedIndex(f, st.Size(), idLen)
		if v == invalid {
			continue
		}
		if v == checksummed {
			links, shared = r.links, r.shared
			break
		}
		// No checksum tells the id length (index.skipHash): keep both.
		for _, l := range r.links {
			if !slices.Contains(links, l) {
				links = append(links, l)
			}
		}
		if shared == "" {
			shared = r.shared
		}
	}
	m.mu.Lock()
	if m.indexes == nil {
		m.indexes = map[string]indexLinks{}
	}
	m.indexes[path] = indexLinks{key: key, links: links, shared: shared}
	m.mu.Unlock()
	return links, shared
}

// indexRead is what an index says for the sandbox: its gitlinks, and the
// shared index a split index's link extension names (hex; empty if none).
type indexRead struct {
	links  []string
	shared string
}

// verifiedIndex reads the index f (size bytes) with object ids of idLen
// bytes, and says whether the file's trailing checksum over the rest
// matches (or is all zeros: index.skipHash), as git checks before it uses
// an index (the verdict). Only the right id length reads a file whose
// checksum matches; one that matches neither is one git refuses too, so
// that it enters none of its submodules.
func verifiedIndex(f *os.File, size int64, idLen int) (indexRead, verdict) {
	if size < int64(12+idLen) {
		return indexRead{}, invalid
	}
	var h hash.Hash = sha1.New()
	if idLen == 32 {
		h = sha256.New()
	}
	body := io.TeeReader(io.NewSectionReader(f, 0, size-int64(idLen)), h)
	br := bufio.NewReaderSize(body, 64<<10)
	links, err := readGitlinks(br, idLen)
	if err != nil {
		return indexRead{}, invalid
	}
	shared, err := readLinkExtension(br, idLen)
	if err != nil {
		return indexRead{}, invalid
	}
	trailer := make([]byte, idLen)
	if _, err := f.ReadAt(trailer, size-int64(idLen)); err != nil {
		return indexRead{}, invalid
	}
	r := indexRead{links: links, shared: shared}
	switch {
	case bytes.Equal(trailer, h.Sum(nil)):
		return r, checksummed
	case bytes.Equal(trailer, make([]byte, idLen)):
		return r, unchecked
	}
	return indexRead{}, invalid
}

// readLinkExtension reads the extensions that follow an index's entries
// to their end and returns the shared index the "link" extension names
// (the split index's base: sharedindex.HEX beside it), in hex.
func readLinkExtension(r *bufio.Reader, idLen int) (string, error) {
	shared := ""
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return shared, nil
			}
			return "", err
		}
		size := int(binary.BigEndian.Uint32(hdr[4:]))
		if string(hdr[:4]) == "link" && size >= idLen {
			id := make([]byte, idLen)
			if _, err := io.ReadFull(r, id); err != nil {
				return "", err
			}
			if !bytes.Equal(id, make([]byte, idLen)) {
				shared = hex.EncodeToString(id)
			}
			size -= idLen
		}
		if _, err := r.Discard(size); err != nil {
			return "", err
		}
	}
}

// verdict is what an index's trailing checksum says of a reading.
type verdict int

const (
	invalid     verdict = iota // it does not match: git refuses the file
	unchecked                  // all zeros (index.skipHash): nothing is said
	checksummed                // it matches
)

// errIndex is an index that is not one git writes.
var errIndex = errors.New("not a git index")

// readGitlinks reads a git index (versions 2 to 4) whose object ids are
// idLen bytes long and returns the paths of its gitlink entries, as far as
// it could read them; the error says why it stopped early. Extensions are
// not read: the entries come first. Memory stays bounded whatever the
// file holds (a path is at most 4096 bytes, as git's own).
func readGitlinks(r *bufio.Reader, idLen int) ([]string, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != "DIRC" {
		return nil, errIndex
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return nil, errIndex
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	fixed := make([]byte, 40+idLen+2)
	var links []string
	var prev []byte
	for range count {
		if _, err := io.ReadFull(r, fixed); err != nil {
			return links, err
		}
		mode := binary.BigEndian.Uint32(fixed[24:28])
		flags := binary.BigEndian.Uint16(fixed[40+idLen:])
		n := len(fixed)
		if flags&0x4000 != 0 { // extended flags (version 3 and later)
			if version < 3 {
				return links, errIndex
			}
			if _, err := r.Discard(2); err != nil {
				return links, err
			}
			n += 2
		}
		var name []byte
		if version == 4 {
			strip, err := readOffset(r)
			if err != nil {
				return links, err
			}
			if strip > uint64(len(prev)) {
				return links, errIndex
			}
			suffix, err := readName(r)
			if err != nil {
				return links, err
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], suffix...)
			if len(name) > 4096 {
				return links, errIndex
			}
		} else {
			suffix, err := readName(r)
			if err != nil {
				return links, err
			}
			name = suffix
			// The entry is padded with 1 to 8 NULs to a multiple of 8
			// bytes; readName took the first.
			n += len(name) + 1
			if pad := (8 - n%8) % 8; pad > 0 {
				if _, err := r.Discard(pad); err != nil {
					return links, err
				}
			}
		}
		if mode&0o170000 == gitlinkMode && len(name) > 0 {
			links = append(links, string(name))
		}
		prev = name
	}
	return links, nil
}

// readName reads a NUL-terminated path of at most 4096 bytes.
func readName(r *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice(0)
		b = append(b, chunk...)
		if len(b) > 4097 {
			return nil, errIndex
		}
		if err == nil {
			return bytes.TrimSuffix(b, []byte{0}), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// readOffset reads the variable-length number of an index version 4
// entry (git's offset encoding: each continuation adds one before the
// shift).
func readOffset(r *bufio.Reader) (uint64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(c & 0x7f)
	for i := 0; c&0x80 != 0; i++ {
		if i > 8 {
			return 0, errIndex
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		v = ((v + 1) << 7) | uint64(c&0x7f)
	}
	return v, nil
}
