//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// revert moves aside whatever now lies at the protected path p. Outside
// Linux no command runs sandboxed, so nothing is ever guarded; this keeps
// the package whole there, by path.
func revert(p string, roots []string, since time.Time, changedOnly bool) (msg string, failed bool) {
	st, err := os.Lstat(p)
	if err != nil || !within(p, roots) || filepath.Base(p) == ".git" && st.IsDir() || changedOnly && st.ModTime().Before(since) {
		return "", false
	}
	for n := 0; n < asideTries; n++ {
		dst := asideName(filepath.Base(p), n)
		full := filepath.Join(filepath.Dir(p), dst)
		if _, err := os.Lstat(full); err == nil {
			continue
		}
		if err := os.Rename(p, full); err != nil {
			return fmt.Sprintf("%s, a protected name, was created by a sandboxed command and could not be moved aside: %v", p, err), true
		}
		return fmt.Sprintf("%s, a protected name, was created by a sandboxed command: moved aside to %s", p, full), false
	}
	return fmt.Sprintf("%s, a protected name, was created by a sandboxed command; no free name to move it aside to", p), true
}
