//go:build linux

package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
)

// world is one run's tree, the same for every tool and laid out as the
// end-to-end corpus run lays it out (attackcorpus.Places): a working
// directory with .git/config, .mcp.json and secret/s.txt, a home, a
// directory outside every writable root holding keep.txt, and a state
// directory (agent-mcp's).
type world struct {
	attackcorpus.Places
	root    string
	closers []io.Closer
	// cred is the user the tools run as (nil: this process's), to whom
	// handOver gives the world.
	cred *syscall.Credential
}

func newWorld(base string, b *bench) (*world, error) {
	root, err := os.MkdirTemp(base, "escapes-")
	if err != nil {
		return nil, err
	}
	w := &world{root: root, Places: attackcorpus.Places{Work: filepath.Join(root, "work"), Home: filepath.Join(root, "home"),
		Outside: filepath.Join(root, "outside"), State: filepath.Join(root, "state"),
		Helper: b.helper, TCPHost: b.tcpHost, TCPPort: b.tcpPort}, cred: b.cred}
	for _, d := range []string{w.Work, w.Outside, w.Home, w.State, filepath.Join(w.Work, ".git"), filepath.Join(w.Work, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		filepath.Join(w.Work, ".git", "config"):  "[core]\n",
		filepath.Join(w.Work, ".mcp.json"):       "{}\n",
		filepath.Join(w.Work, "secret", "s.txt"): "TOPSECRET\n",
		filepath.Join(w.Outside, "keep.txt"):     "keep\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o666); err != nil {
			return nil, err
		}
	}
	// Without a sandbox the user could write (and delete in) outside.
	for _, p := range []string{root, w.Outside, filepath.Join(w.Outside, "keep.txt")} {
		if err := os.Chmod(p, 0o777); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// plant makes a case's files, as the corpus run does.
func (w *world) plant(c *attackcorpus.Case) error {
	closers, err := attackcorpus.Plant(c, w.Places, nil)
	w.closers = append(w.closers, closers...)
	return err
}

// handOver gives the world, all but the directory outside every writable
// root (which stays root's, writable by all), to the user the tools run
// as, once a tool's own files are in it.
func (w *world) handOver() error {
	if w.cred == nil {
		return nil
	}
	return filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == w.Outside {
			return filepath.SkipDir
		}
		if p == w.root {
			return nil
		}
		return os.Lchown(p, int(w.cred.Uid), int(w.cred.Gid))
	})
}

func (w *world) close() {
	for _, c := range w.closers {
		c.Close()
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
