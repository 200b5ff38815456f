package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/tools"
)

// preflightWrite is the part of a write's checks that can be made before
// the permission decision, so that nobody is asked to approve a call that
// would fail anyway: a file inside the working directories that exists
// but was never read in the session is refused, and edits to a file the
// session holds the current text of must each match as the call will
// apply them. Nothing is held: the call checks everything again under
// the file's lock. A file the session has not read is only looked up
// (never opened); one it read is read again to match the edits (its
// reading was allowed); a path the call would refuse for leading out of
// the working directories is left to the call. edits is nil for Write.
func preflightWrite(uc *tools.UseContext, path string, edits []editSpec, multi bool) error {
	if uc == nil || uc.Session == nil {
		return nil
	}
	s := uc.Session
	abs := uc.Resolve(path)
	target, err := writeTarget(s, abs)
	if err != nil {
		return nil
	}
	real, err := confine.ResolvePath(target)
	if err != nil || checkConfined(s, abs, real) != nil {
		return nil // the call refuses it in its own words
	}
	st, known := lookupState(s, abs, target, real)
	if !known {
		// Whether a file outside the working directories exists is not
		// told before the user allowed the call.
		if conf := confine.New(s.WorkDirs()); !conf.Contains(abs) || !conf.Contains(real) {
			return nil
		}
	}
	info, err := os.Stat(real)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return nil // created, or refused by the call with its own words
	case err != nil || !info.Mode().IsRegular():
		return nil
	case !known:
		return notReadError(abs)
	case edits == nil:
		return nil
	}
	data, err := os.ReadFile(real)
	if err != nil || judge(st, true, data, info) != current {
		return nil // the call says what is wrong, under the lock
	}
	body, format, err := decodeText(data)
	if err != nil {
		return nil
	}
	for i, e := range edits {
		if e.Old == "" {
			return nil // the call words an empty old_string's cases
		}
		applied, err := applyEdit(body, format, e, false)
		if err != nil {
			where := ""
			if multi {
				where = fmt.Sprintf("edits[%d] (edit %d of %d): ", i, i+1, len(edits))
			}
			return fmt.Errorf("%s%w", where, describeMatchError(err, abs, body, e.Old))
		}
		body = applied.body
	}
	return nil
}
