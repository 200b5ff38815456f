package attackcorpus

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Places is one run's tree as the cases name it, the same for the
// end-to-end corpus run and for the escape bench: the working directory,
// the home, a directory outside every writable root and agent-mcp's state
// directory, with the helper program (@HELPER@), the terminal (@TTY@) and
// the direct-connection target (@TCPHOST@:@TCPPORT@). It is a [World].
type Places struct {
	Work, Home, Outside, State    string
	Helper, TTY, TCPHost, TCPPort string
}

// AreaPath maps "work/x", "home/x", "outside/x" into the tree; "" for
// any other area.
func (p Places) AreaPath(name string) string {
	area, rest, _ := strings.Cut(name, "/")
	switch area {
	case "work":
		return filepath.Join(p.Work, rest)
	case "home":
		return filepath.Join(p.Home, rest)
	case "outside":
		return filepath.Join(p.Outside, rest)
	}
	return ""
}

// Expand substitutes the tree's names (@WORK@, @HOME@, ...) in a case's
// text.
func (p Places) Expand(s string) string {
	tty := p.TTY
	if tty == "" {
		tty = "(no terminal)"
	}
	return ExpandLoopback(strings.NewReplacer("@WORK@", p.Work, "@HOME@", p.Home, "@OUTSIDE@", p.Outside,
		"@STATE@", p.State, "@HELPER@", p.Helper, "@TTY@", tty, "@TCPHOST@", p.TCPHost, "@TCPPORT@", p.TCPPort).Replace(s))
}

// Plant makes the case's planted files in the tree: a directory for a
// name ending in "/", a symbolic link for "-> TARGET", a listening unix
// socket for "=socket" (closed through the returned closers), else a
// file with the expanded content. made, when not nil, is called with each
// path planted (the corpus run hands them to its unprivileged user).
func Plant(c *Case, p Places, made func(path string) error) ([]io.Closer, error) {
	var closers []io.Closer
	for _, f := range c.Plant {
		path := p.AreaPath(f[0])
		if path == "" {
			return closers, &os.PathError{Op: "plant", Path: f[0], Err: os.ErrInvalid}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return closers, err
		}
		content := p.Expand(f[1])
		target, isLink := strings.CutPrefix(content, "-> ")
		switch {
		case strings.TrimSpace(content) == "=socket":
			l, err := ListenUnix(path)
			if err != nil {
				return closers, err
			}
			closers = append(closers, l)
		case isLink:
			if err := os.Symlink(strings.TrimSpace(target), path); err != nil {
				return closers, err
			}
		case strings.HasSuffix(f[0], "/"):
			if err := os.MkdirAll(path, 0o755); err != nil {
				return closers, err
			}
		default:
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				return closers, err
			}
		}
		if made != nil {
			if err := made(path); err != nil {
				return closers, err
			}
		}
	}
	return closers, nil
}
