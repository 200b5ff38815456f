// Package git runs the attack corpus's repository protections, the cases
// e2e/attacks/*.txtar names git-* (attacks.Package), in a test binary of
// their own: they are the costliest third of the corpus.
package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/attacks"
	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// binary is the agent-mcp built once for these cases.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

func TestAttackCorpus(t *testing.T) {
	t.Parallel()
	attacks.Run(t, binary, "..", attacks.In("git"))
}

// TestSandbox_git_works_in_protected_repositories: with a repository's
// code paths protected (attacks git-*), git still commits, branches and
// checks out in it, command after command; what it cannot do is keep a
// config: the one `git init` wrote in the sandbox is moved aside when the
// command ends (git-created-*), and one a later command writes is too.
func TestSandbox_git_works_in_protected_repositories(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	sandboxenv.ForEachLayers(t, binary, []string{"namespaces,landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		cs, _ := e.Serve(t, layers, nil)
		id := "-c user.name=t -c user.email=t@e"
		r := filepath.Join(e.Work, "r")
		steps := []struct{ cmd, want string }{
			{"git init -q " + r + " && cd " + r + " && git " + id + " commit --allow-empty -qm a && echo OK1", "OK1"},
			{"cd " + r + " && echo x > f && git add f && git " + id + " commit -qm b && git checkout -qb topic && echo y >> f && git " + id + " commit -qam c && git checkout -q - && git log --oneline --all | wc -l", "3"},
			{"cd " + r + " && git config core.fsmonitor 'touch x' 2>&1; echo OK3", "OK3"},
			{"cd " + r + " && git log --oneline | wc -l", "2"},
		}
		for _, s := range steps {
			if out, _ := testbin.Bash(t, cs, s.cmd, false); !strings.Contains(out, s.want) {
				t.Errorf("%s: want %q in %s", s.cmd, s.want, out)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(e.Work, "r", ".git", "config")); strings.Contains(string(b), "fsmonitor") {
			t.Errorf("the nested repository's config was changed: %s", b)
		}
	})
}
