package fs

import (
	"crypto/sha256"
	"fmt"
	"io/fs"

	"github.com/agent-mcp/agent-mcp/tools"
)

// freshness is how the caller's view of a file compares with the disk.
type freshness int

const (
	// notRead: the session never read (or wrote) the file.
	notRead freshness = iota
	// current: the file holds what the session last saw. A file that was
	// touched (new mtime) but holds the same bytes is current.
	current
	// changed: the file's content differs from what the session last saw.
	changed
)

// unknownFingerprint is the Fingerprint of a FileState recorded without
// hashing the whole file (a ranged Read of a large file stops early). Its
// freshness is judged by size and modification time instead.
var unknownFingerprint [32]byte

// lookupState returns what the session knows of the file written at abs,
// also trying the resolved target when abs is a symbolic link: a caller
// may read through the link and write through the target, or the reverse.
func lookupState(s *tools.Session, paths ...string) (tools.FileState, bool) {
	for _, p := range paths {
		if st, ok := s.File(p); ok {
			return st, true
		}
	}
	return tools.FileState{}, false
}

// judge compares the session's record of a file with its current bytes.
func judge(st tools.FileState, known bool, data []byte, info fs.FileInfo) freshness {
	if !known {
		return notRead
	}
	if st.Fingerprint == unknownFingerprint {
		if st.Size == info.Size() && st.ModTime.Equal(info.ModTime()) {
			return current
		}
		return changed
	}
	if sha256.Sum256(data) == st.Fingerprint {
		return current
	}
	return changed
}

// recordWritten tells the session that the file at target and at each of
// paths now holds data, as written by this session: its view of the file
// is current. info is the written file's information (its modification
// time is recorded), nil when unknown.
func recordWritten(s *tools.Session, info fs.FileInfo, target string, data []byte, paths ...string) {
	st := tools.FileState{Fingerprint: sha256.Sum256(data), Size: int64(len(data))}
	if info != nil {
		st.ModTime = info.ModTime()
		st.Size = info.Size()
	}
	seen := map[string]bool{}
	for _, p := range append([]string{target}, paths...) {
		if !seen[p] {
			seen[p] = true
			s.RecordFile(p, st)
		}
	}
}

// notReadError refuses a write to a file the session has not seen.
func notReadError(abs string) error {
	return fmt.Errorf("%s has not been read in this session: Read it first, then retry (changing a file whose current content you have not seen could destroy work)", abs)
}

// changedError refuses a write to a file that changed since it was read.
func changedError(abs string) error {
	return fmt.Errorf("%s has changed on disk since you last read it (another program or person modified it): Read it again, then retry", abs)
}

// unseenChangesNote is added to a result when an edit applied to a file
// that had changed since it was read.
func unseenChangesNote(abs string) string {
	return fmt.Sprintf("Note: %s had changed on disk since you last read it. The edit still matched exactly one place and was applied, but the file holds other changes you have not seen: Read it before relying on the rest of its content.", abs)
}
