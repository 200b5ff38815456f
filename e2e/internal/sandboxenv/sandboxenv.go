// Package sandboxenv runs agent-mcp's real binary in a sandbox environment
// of its own for the end-to-end tests of the sandbox (e2e) and the attack
// corpus (e2e/attacks): a world-reachable tree with a working directory,
// a home, a state directory, a directory outside, and a copy of the binary;
// each layer set on its own and together, as root and as an unprivileged
// user (uid 65534, through setpriv, when the tests run as root). The tests
// check facts: files on disk, /proc, a loopback listener's accept count.
package sandboxenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/sandbox"
)

// User is who a sandbox test's server runs as.
type User struct {
	Name     string
	UID, GID int
	Wrap     []string // command prefix that switches to the user
}

// Users are the users the tests run servers as: the test's own, and where
// the tests run as root, an unprivileged one (uid 65534, through setpriv).
func Users(t *testing.T) []User {
	self := User{Name: "self", UID: os.Getuid(), GID: os.Getgid()}
	if os.Getuid() != 0 {
		return []User{self}
	}
	self.Name = "root"
	users := []User{self}
	if p, err := exec.LookPath("setpriv"); err == nil {
		users = append(users, User{Name: "unprivileged", UID: 65534, GID: 65534,
			Wrap: []string{p, "--reuid=65534", "--regid=65534", "--clear-groups", "--"}})
	} else {
		t.Log("setpriv not found: the unprivileged runs are skipped")
	}
	return users
}

// LayerSets are the layer sets tested: each alone, both together.
var LayerSets = []string{"namespaces", "landlock", "namespaces,landlock"}

// RequireLayers skips the test when the machine lacks a layer of want, as
// binary's `sandbox check` reports.
func RequireLayers(t *testing.T, binary, want string) {
	t.Helper()
	sup := Support(binary)
	if strings.Contains(want, "namespaces") && !sup.Namespaces {
		t.Skipf("no namespaces here: %v", sup.NamespacesErr)
	}
	if strings.Contains(want, "landlock") && sup.Landlock == 0 {
		t.Skipf("no Landlock here: %v", sup.LandlockErr)
	}
}

// Support is what binary's `sandbox check` reports this machine has,
// asked once per binary.
func Support(binary string) sandbox.Support {
	supportMu.Lock()
	defer supportMu.Unlock()
	if s, ok := supported[binary]; ok {
		return s
	}
	s := checkSupport(binary)
	supported[binary] = s
	return s
}

var (
	supportMu sync.Mutex
	supported = map[string]sandbox.Support{}
)

// checkSupport runs binary's `sandbox check` and reads its answer.
func checkSupport(binary string) sandbox.Support {
	out, err := exec.Command(binary, "sandbox", "check").CombinedOutput()
	s := sandbox.Support{}
	text := string(out)
	if strings.Contains(text, "landlock:   yes") {
		s.Landlock = 1
	} else {
		s.LandlockErr = fmt.Errorf("%s (%v)", text, err)
	}
	if strings.Contains(text, "namespaces: yes") {
		s.Namespaces = true
	} else {
		s.NamespacesErr = fmt.Errorf("%s (%v)", text, err)
	}
	if strings.Contains(text, "cgroup:     yes") {
		s.Cgroup = "yes"
	} else {
		s.CgroupErr = fmt.Errorf("%s (%v)", text, err)
	}
	return s
}

// Env is a world-reachable tree for one server: the working
// directory, a directory outside it that the user could write without a
// sandbox, a home, a state directory, and a copy of the binary.
type Env struct {
	Root, Work, Outside, Home, State, Bin string
	User                                  User
	// Ctty, when set, is the terminal the server runs on (its
	// controlling terminal).
	Ctty *os.File
	// Inherit, when set, is a descriptor the server inherits without
	// knowing of it.
	Inherit *os.File
}

// New makes an environment for user u, with a copy of binary in it.
func New(t *testing.T, binary string, u User) *Env {
	t.Helper()
	root, err := os.MkdirTemp("", "agent-mcp-sandbox-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	e := &Env{Root: root, Work: filepath.Join(root, "work"), Outside: filepath.Join(root, "outside"),
		Home: filepath.Join(root, "home"), State: filepath.Join(root, "state"), Bin: filepath.Join(root, "bin", "agent-mcp"), User: u}
	for _, d := range []string{e.Work, e.Outside, e.Home, e.State, filepath.Dir(e.Bin), filepath.Join(e.Work, ".git"), filepath.Join(e.Work, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(e.Work, ".git", "config"):  "[core]\n",
		filepath.Join(e.Work, ".mcp.json"):       "{}\n",
		filepath.Join(e.Work, "secret", "s.txt"): "TOPSECRET\n",
		filepath.Join(e.Outside, "keep.txt"):     "keep\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := testbin.CopyExecutable(e.Bin, binary); err != nil {
		t.Fatal(err)
	}
	// Without a sandbox the user could write (and delete in) outside.
	for _, p := range []string{root, e.Outside, filepath.Join(e.Outside, "keep.txt")} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(e.Outside, "keep.txt"), 0o666); err != nil {
		t.Fatal(err)
	}
	if u.UID != os.Getuid() {
		for _, d := range []string{e.Work, e.Home, e.State} {
			if err := filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, u.UID, u.GID)
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

// AllowEverythingHook is a PreToolUse hook that allows every call, so that
// nothing but the kernel stands between a command and what it attempts.
const AllowEverythingHook = `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command",` +
	`"command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'"}]}]}}`

// Environ is a hermetic environment whose home, configuration and caches are
// the environment's.
func (e *Env) Environ(t *testing.T) []string {
	env := testbin.HermeticEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			env[i] = "HOME=" + e.Home
		}
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(e.Home, ".config"), "AGENT_MCP_CONFIG_DIR="+filepath.Join(e.Home, ".config", "agent-mcp"),
		"XDG_CACHE_HOME="+filepath.Join(e.Home, ".cache"))
}

// Serve starts the server as the environment's user with the given layers
// (AGENT_MCP_SANDBOX_LAYERS) and flags.
func (e *Env) Serve(t *testing.T, layers string, extraEnv []string, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	argv := append(append([]string{}, e.User.Wrap...), e.Bin, "serve", "--cwd", e.Work, "--state-dir", e.State,
		"--permission-mode", "bypassPermissions", "--settings", AllowEverythingHook)
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(e.Environ(t), append([]string{sandbox.LayersEnv + "=" + layers}, extraEnv...)...)
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if e.Ctty != nil {
		// The server runs on a terminal, as chat or serve started by hand.
		cmd.ExtraFiles = append(cmd.ExtraFiles, e.Ctty)
		cmd.SysProcAttr = TerminalAttr(3)
	}
	if e.Inherit != nil {
		// At a high number, as a leaked descriptor usually is: the low
		// ones are the server's own children's.
		for len(cmd.ExtraFiles) < 40 {
			cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, e.Inherit)
	}
	cs := testbin.Stdio(t, cmd, nil)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server stderr:\n%s", cmd.Stderr.(*lockedWriter).String())
		}
	})
	return cs, cmd
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// HelperBinary is a compiled program (not an interpreter the shell knows)
// that writes, deletes and reads the paths it is given.
var HelperBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "agent-mcp-sandbox-helper-")
	if err != nil {
		return "", err
	}
	gobin, err := GoBinary()
	if err != nil {
		return "", err
	}
	return attackcorpus.BuildHelper(gobin, dir)
})

// GoBinary finds the go command: on PATH, else in /usr/local/go.
func GoBinary() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return filepath.EvalSymlinks(p)
	}
	if _, err := os.Stat("/usr/local/go/bin/go"); err == nil {
		return "/usr/local/go/bin/go", nil
	}
	return "", fmt.Errorf("the go command is not installed")
}

// ForEach runs fn in a parallel subtest for each user and each of
// LayerSets, with a fresh environment holding a copy of binary.
func ForEach(t *testing.T, binary string, fn func(t *testing.T, e *Env, layers string)) {
	ForEachLayers(t, binary, LayerSets, fn)
}

// ForEachLayers is ForEach over the given layer sets.
func ForEachLayers(t *testing.T, binary string, sets []string, fn func(t *testing.T, e *Env, layers string)) {
	for _, u := range Users(t) {
		for _, layers := range sets {
			t.Run(u.Name+"/"+strings.ReplaceAll(layers, ",", "+"), func(t *testing.T) {
				t.Parallel()
				RequireLayers(t, binary, layers)
				fn(t, New(t, binary, u), layers)
			})
		}
	}
}
