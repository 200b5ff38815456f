//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
)

// world is one run's tree, the same for every tool and laid out as the
// end-to-end corpus run lays it out: a working directory with .git/config,
// .mcp.json and secret/s.txt, a home, a directory outside every writable
// root holding keep.txt, and a state directory (agent-mcp's).
type world struct {
	root, work, home, outside, state string
	// helper is the program @HELPER@ names; tcpHost and tcpPort the
	// listener @TCPHOST@:@TCPPORT@ name; tty the terminal @TTY@ names.
	helper, tcpHost, tcpPort, tty string
	closers                       []func()
}

func newWorld(base string, b *bench) (*world, error) {
	root, err := os.MkdirTemp(base, "escapes-")
	if err != nil {
		return nil, err
	}
	w := &world{root: root, work: filepath.Join(root, "work"), home: filepath.Join(root, "home"),
		outside: filepath.Join(root, "outside"), state: filepath.Join(root, "state"),
		helper: b.helper, tcpHost: b.tcpHost, tcpPort: b.tcpPort, tty: "(no terminal)"}
	for _, d := range []string{w.work, w.outside, w.home, w.state, filepath.Join(w.work, ".git"), filepath.Join(w.work, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		filepath.Join(w.work, ".git", "config"):  "[core]\n",
		filepath.Join(w.work, ".mcp.json"):       "{}\n",
		filepath.Join(w.work, "secret", "s.txt"): "TOPSECRET\n",
		filepath.Join(w.outside, "keep.txt"):     "keep\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o666); err != nil {
			return nil, err
		}
	}
	// Without a sandbox the user could write (and delete in) outside.
	for _, p := range []string{root, w.outside, filepath.Join(w.outside, "keep.txt")} {
		if err := os.Chmod(p, 0o777); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// AreaPath maps "work/x", "home/x", "outside/x" into the world.
func (w *world) AreaPath(p string) string {
	area, rest, _ := strings.Cut(p, "/")
	switch area {
	case "work":
		return filepath.Join(w.work, rest)
	case "home":
		return filepath.Join(w.home, rest)
	case "outside":
		return filepath.Join(w.outside, rest)
	}
	return ""
}

// Expand substitutes the world's paths in a case's text.
func (w *world) Expand(s string) string {
	return strings.NewReplacer("@WORK@", w.work, "@HOME@", w.home, "@OUTSIDE@", w.outside,
		"@STATE@", w.state, "@HELPER@", w.helper, "@TTY@", w.tty, "@TCPHOST@", w.tcpHost, "@TCPPORT@", w.tcpPort).Replace(s)
}

// plant makes a case's files, as the corpus run does.
func (w *world) plant(c *attackcorpus.Case) error {
	for _, p := range c.Plant {
		path := w.AreaPath(p[0])
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		content := w.Expand(p[1])
		switch target, isLink := strings.CutPrefix(content, "-> "); {
		case strings.TrimSpace(content) == "=socket":
			l, err := attackcorpus.ListenUnix(path)
			if err != nil {
				return err
			}
			w.closers = append(w.closers, func() { l.Close() })
		case isLink:
			if err := os.Symlink(strings.TrimSpace(target), path); err != nil {
				return err
			}
		case strings.HasSuffix(p[0], "/"):
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		default:
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *world) close() {
	for _, f := range w.closers {
		f()
	}
	// A sandboxed command may have left read-only or odd files behind.
	_ = filepath.Walk(w.root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(w.root)
}
