package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// beforeOpen, when set (by tests), runs in [OpenRead] after the path is
// resolved and right before it is opened, with the resolved path.
var beforeOpen func(real string)

// OpenRead opens the absolute path abs for reading, a file or a directory,
// so that a symbolic link swapped into the path cannot send the read
// somewhere it was not judged to go:
//
//   - abs is resolved now; when it leads inside one of the working
//     directories dirs, it is opened through an os.Root of that directory
//     ([OpenFile], as the writing tools do), which no link can lead out of;
//   - otherwise it must lead where it led when the permission check let
//     the call through. checked maps each path the check judged (absolute
//     and clean, as the call named it) to where it led then, every link
//     resolved (tools.UseContext.Resolved). A path that leads elsewhere
//     outside the working directories now, or that the check did not judge,
//     is refused with an error wrapping [ErrOutside]. checked is nil when
//     no check of paths ran: a path outside is then read where it leads;
//   - a path outside is opened by its resolved path following no symbolic
//     link in any component, so a link swapped in after it was resolved
//     makes the open fail rather than go elsewhere.
//
// On Unix the file is opened with O_NONBLOCK, so a named pipe swapped in
// cannot block the open; callers check the kind of what they got on the
// descriptor (Stat), not on the path. On Windows a path outside is opened
// by its resolved path following links (see openOutside there).
func OpenRead(dirs []string, checked map[string]string, abs string) (*os.File, error) {
	abs = filepath.Clean(abs)
	real, err := ResolvePath(abs)
	if err != nil {
		return nil, err
	}
	c := New(dirs)
	inside := c.containsResolved(real)
	if !inside && checked != nil {
		then, judged := checked[abs]
		if !judged {
			return nil, fmt.Errorf("%s leads to %s, outside the working directories (%s), and the permission check did not judge that path: %w",
				abs, real, strings.Join(c.dirs, ", "), ErrOutside)
		}
		if then != real {
			return nil, fmt.Errorf("%s now leads to %s, outside the working directories (%s), but led to %s when the permission check was made: a symbolic link in the path changed after the check, so nothing was read: %w",
				abs, real, strings.Join(c.dirs, ", "), then, ErrOutside)
		}
	}
	if beforeOpen != nil {
		beforeOpen(real)
	}
	const flag = readFlag
	if inside {
		f, err := OpenFile(dirs, real, flag, 0)
		if errors.Is(err, ErrOutside) {
			return nil, fmt.Errorf("%s: a symbolic link in the path now leads outside the working directories (the path changed after it was resolved), so nothing was read: %w", abs, ErrOutside)
		}
		return f, err
	}
	return openOutside(abs, real, flag)
}
