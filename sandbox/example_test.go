//go:build unix

package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox"
)

// A command runs confined where the machine offers a layer, and as the
// plain shell where it offers none; either way it writes in its working
// directory. The output is the same everywhere; where a layer confines
// the command, a write outside its writable roots would print "escaped".
// (The launcher is this binary, re-executed: package launcher takes over
// before anything else runs.)
func ExampleSandbox_Command() {
	dir, err := os.MkdirTemp("", "sandbox-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	work, outside, state := filepath.Join(dir, "work"), filepath.Join(dir, "outside"), filepath.Join(dir, "state")
	for _, d := range []string{work, outside, state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			panic(err)
		}
	}
	sb, err := sandbox.New(sandbox.Options{Mode: sandbox.ModeAuto, Network: sandbox.NetOff, Home: dir,
		BuildCaches: []string{}, CacheRoot: filepath.Join(dir, "caches")})
	if err != nil {
		panic(err)
	}
	script := "echo hello > note.txt && cat note.txt; echo x 2>/dev/null >" + filepath.Join(outside, "x")
	l, err := sb.Command(sandbox.Spec{Shell: "/bin/sh", Script: script, Dir: work, WorkDirs: []string{work}, StateDir: state}, time.Second)
	if err != nil {
		panic(err)
	}
	out, err := os.Create(filepath.Join(state, "out"))
	if err != nil {
		panic(err)
	}
	defer out.Close()
	cmd := l.Cmd
	cmd.Dir, cmd.Env = work, append(os.Environ(), l.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Start()
	l.Started(err)
	if err != nil {
		panic(err)
	}
	l.Wait()
	b, _ := os.ReadFile(out.Name())
	fmt.Print(string(b))
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil && sb.Confines() {
		fmt.Println("escaped")
	}
	// Output:
	// hello
}
