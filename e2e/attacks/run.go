package attacks

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/sandbox"
)

// Package is the package under e2e/attacks that runs the case named name:
// "git" for the repository protections (git-*), "protected" for the
// protected paths and the server's own files in reach of a command
// (protected-*, output-*, state-*), and "" (e2e/attacks itself) for the
// rest. Each is a test binary of its own, so that each third of the
// corpus, which runs every case six times, stays well inside go test's
// timeout on a loaded machine; the git cases are the costliest (several
// fill the working directory with ten thousand entries to exhaust the
// repository scan).
func Package(name string) string {
	prefix, _, _ := strings.Cut(name, "-")
	switch prefix {
	case "git":
		return "git"
	case "protected", "output", "state":
		return "protected"
	}
	return ""
}

// In is the filter for Run that keeps the cases of package pkg (see
// Package).
func In(pkg string) func(name string) bool {
	return func(name string) bool { return Package(name) == pkg }
}

// Run runs the cases in dir (e2e/attacks) that keep selects through
// binary: each in a parallel subtest named for it, for each user and layer
// set (sandboxenv.ForEach), failing where a layer set that holds the case
// finds a check failing, and checking the gap statement where none does.
func Run(t *testing.T, binary, dir string, keep func(name string) bool) {
	t.Helper()
	cases := loadAttacks(t, dir)
	helper, err := sandboxenv.HelperBinary()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := os.ReadFile(filepath.Join(dir, "..", "..", "docs", "sandbox.md"))
	ran := 0
	for _, c := range cases {
		if !keep(c.Name) {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			sandboxenv.ForEach(t, binary, func(t *testing.T, se *sandboxenv.Env, layers string) {
				e := &sandboxEnv{se}
				e.plantAttack(t, c, helper)
				var args []string
				if c.Settings != "" {
					args = append(args, "--settings", e.expand(c.Settings, helper))
				}
				for _, a := range c.Args {
					args = append(args, e.expand(a, helper))
				}
				if c.TTY {
					ptmx, tty, err := pty.Open()
					if err != nil {
						t.Fatalf("opening a terminal for the server: %v", err)
					}
					t.Cleanup(func() { ptmx.Close(); tty.Close() })
					e.Ctty = tty
				}
				if c.Inherit {
					// As a careless host or script would: a descriptor it
					// left open, which the server does not know of.
					d, err := os.Open(e.Outside)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { d.Close() })
					e.Inherit = d
				}
				var env []string
				for _, kv := range c.Env {
					env = append(env, e.expand(kv, helper))
				}
				cs, _ := e.Serve(t, layers, env, args...)
				failed := runAttack(t, c, e, cs, helper)
				must := c.HoldsUnder(layers) && !(c.RootGap && e.User.Name == "root")
				switch {
				case c.Open != "" && must:
					// Declared open: logged, not failed; the fix that
					// closes it removes the line.
					if len(failed) == 0 {
						t.Logf("declared open (%s), but held here", c.Open)
					} else {
						t.Logf("open as declared (%s): %s", c.Open, strings.Join(failed, "; "))
					}
				case must:
					for _, f := range failed {
						t.Errorf("%s (%s): %s", c.Name, c.What, f)
					}
				default:
					if len(failed) > 0 {
						t.Logf("not held by %s, as declared: %s", layers, strings.Join(failed, "; "))
					}
					// Where no layer of holds is in use, what is missing
					// is said: by sandbox check, and in the docs.
					if c.Gap == "" {
						t.Fatalf("%s is not held by %s (holds: %v) but the case names no gap: text", c.Name, layers, c.Holds)
					}
					if out := sandboxCheck(binary, layers); !strings.Contains(out, c.Gap) {
						t.Errorf("sandbox check with %s does not say %q:\n%s", layers, c.Gap, out)
					}
					if !bytes.Contains(readme, []byte(c.Gap)) && !bytes.Contains(docs, []byte(c.Gap)) {
						t.Errorf("neither README.md nor docs/sandbox.md says %q", c.Gap)
					}
				}
			})
		})
	}
	if ran == 0 {
		t.Fatalf("no case of %s is this package's", dir)
	}
}

// sandboxEnv is a case's sandbox environment, with what the corpus does
// in it: its areas, its files planted, the user's own commands.
type sandboxEnv struct{ *sandboxenv.Env }

func loadAttacks(t *testing.T, dir string) []*attackcorpus.Case {
	t.Helper()
	cases, err := attackcorpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// places is the environment as a case sees it, with the helper program
// @HELPER@ names.
func (e *sandboxEnv) places(helper string) attackcorpus.Places {
	tty := ""
	if e.Ctty != nil {
		tty = e.Ctty.Name()
	}
	host, port := tcpTarget()
	return attackcorpus.Places{Work: e.Work, Home: e.Home, Outside: e.Outside, State: e.State,
		Helper: helper, TTY: tty, TCPHost: host, TCPPort: port}
}

// expand substitutes the environment's paths in a case's text.
func (e *sandboxEnv) expand(s, helper string) string { return e.places(helper).Expand(s) }

// tcpTarget is the listener @TCPHOST@:@TCPPORT@ name (see
// attackcorpus.ListenTCP): what a direct connection must never reach.
var tcpTarget = sync.OnceValues(func() (string, string) {
	host, port, err := attackcorpus.ListenTCP()
	if err != nil {
		panic(err)
	}
	return host, port
})

// plantAttack makes a case's files, owned by the environment's user.
func (e *sandboxEnv) plantAttack(t *testing.T, c *attackcorpus.Case, helper string) {
	t.Helper()
	chown := func(path string) error {
		if e.User.UID == os.Getuid() {
			return nil
		}
		for d := path; strings.HasPrefix(d, e.Root+"/") && d != e.Outside; d = filepath.Dir(d) {
			if err := os.Lchown(d, e.User.UID, e.User.GID); err != nil {
				return err
			}
		}
		return nil
	}
	closers, err := attackcorpus.Plant(c, e.places(helper), chown)
	for _, c := range closers {
		t.Cleanup(func() { c.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
}

// runAttack runs a case's steps and returns the failed checks.
func runAttack(t *testing.T, c *attackcorpus.Case, e *sandboxEnv, cs *mcp.ClientSession, helper string) []string {
	t.Helper()
	w := e.places(helper)
	before := c.Before(w)
	var outputs, waitFailed []string
	lastTask := ""
	for _, s := range c.Steps {
		switch s.Kind {
		case "bash", "bash background":
			out, _ := testbin.Bash(t, cs, e.expand(s.Text, helper), s.Kind == "bash background")
			outputs = append(outputs, out)
			if rest, ok := strings.CutPrefix(out, "Command running in the background as task "); ok {
				lastTask = strings.TrimSuffix(strings.Fields(rest)[0], ".")
			}
		case "user":
			outputs = append(outputs, e.runAsUser(t, e.expand(s.Text, helper)))
		case "wait":
			if f := attackcorpus.WaitFor(w, e.expand(s.Text, helper)); f != "" {
				waitFailed = append(waitFailed, f)
			}
		case "taskinput":
			if lastTask == "" {
				// The command was refused: there is nothing to type into.
				outputs = append(outputs, "(no background task to type into)")
				continue
			}
			args := map[string]any{"task_id": lastTask, "input": e.expand(s.Text, helper), "timeout": 5000}
			if s.Until != "" {
				args["wait_for"], args["timeout"] = s.Until, 20000
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "TaskInput", Arguments: args})
			if err != nil {
				t.Fatalf("TaskInput %s: %v", lastTask, err)
			}
			outputs = append(outputs, testbin.Text(t, res))
		case "taskoutput":
			args := map[string]any{"task_id": lastTask, "block": true, "timeout": 30000}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "TaskOutput", Arguments: args})
			if err != nil {
				t.Fatalf("TaskOutput %s: %v", lastTask, err)
			}
			outputs = append(outputs, testbin.Text(t, res))
		}
	}
	failed := append(waitFailed, c.Judge(w, before, outputs)...)
	if len(failed) > 0 {
		t.Logf("outputs:\n%s", strings.Join(outputs, "\n"))
	}
	return failed
}

// runAsUser runs script with bash in the working directory, outside the
// sandbox, as the server's user: what the user does next (their own git
// status, say). It returns what the script printed.
func (e *sandboxEnv) runAsUser(t *testing.T, script string) string {
	t.Helper()
	shell, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append([]string{}, e.User.Wrap...), shell, "-c", script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = e.Work
	env := testbin.HermeticEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			env[i] = "HOME=" + e.Home
		}
	}
	cmd.Env = append(env, "XDG_CONFIG_HOME="+filepath.Join(e.Home, ".config"))
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// sandboxCheck is binary's `sandbox check` output with the given layers,
// asked once per binary and layer set.
func sandboxCheck(binary, layers string) string {
	checkMu.Lock()
	defer checkMu.Unlock()
	key := binary + "\x00" + layers
	if out, ok := checked[key]; ok {
		return out
	}
	cmd := exec.Command(binary, "sandbox", "check")
	cmd.Env = append(os.Environ(), sandbox.LayersEnv+"="+layers)
	out, _ := cmd.CombinedOutput()
	checked[key] = string(out)
	return string(out)
}

var (
	checkMu sync.Mutex
	checked = map[string]string{}
)
