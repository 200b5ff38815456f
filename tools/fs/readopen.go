package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/tools"
)

// beforeReadOpen, when set (by tests), runs in Read and LS right before
// the path is opened, with the absolute path.
var beforeReadOpen func(abs string)

// openForRead opens abs for Read or LS so that a symbolic link swapped
// into the path after the permission check cannot send the read outside
// the working directories (see confine.OpenRead): inside them it is
// opened through an os.Root, and a path outside is read only where it led
// when the check let the call through. The kind of what was opened is for
// the caller to check on the descriptor.
func openForRead(uc *tools.UseContext, abs string) (*os.File, error) {
	if beforeReadOpen != nil {
		beforeReadOpen(abs)
	}
	return confine.OpenRead(uc.Session.WorkDirs(), uc.Resolved, abs)
}

// openRegularForRead opens abs with openForRead and checks on the open
// descriptor that it is a regular file, returning its information.
func openRegularForRead(uc *tools.UseContext, abs string) (*os.File, fs.FileInfo, error) {
	f, err := openForRead(uc, abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, missingFileErrorFor(uc, abs)
		}
		return nil, nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("cannot read %s: %w", abs, err)
	case info.IsDir():
		err = fmt.Errorf("%s is a directory, not a file: use LS to list it or Glob to find files in it", abs)
	case !info.Mode().IsRegular():
		err = fmt.Errorf("cannot read %s: it is a %s, not a regular file, and reading it may never end", abs, fileKind(info.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// missingFileErrorFor is missingFileError for a reading tool: the names
// suggested come from a listing of abs's directory opened as
// openForRead opens abs, so a link swapped in cannot make it list a
// directory outside.
func missingFileErrorFor(uc *tools.UseContext, abs string) error {
	return missingError(abs, uc.Session.Cwd(), parentOpener(uc, abs))
}

// parentOpener opens the directory of abs the way openForRead opens abs:
// outside the working directories only where the permission check saw
// the directory lead.
func parentOpener(uc *tools.UseContext, abs string) func(dir string) (*os.File, error) {
	var checked map[string]string
	if uc.Resolved != nil {
		checked = map[string]string{}
		if real, ok := uc.Resolved[abs]; ok {
			checked[filepath.Dir(abs)] = filepath.Dir(real)
		}
	}
	return func(dir string) (*os.File, error) {
		return confine.OpenRead(uc.Session.WorkDirs(), checked, dir)
	}
}
