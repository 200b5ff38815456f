package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator"
)

// Env is what the system prompt says about the environment.
type Env struct {
	Cwd      string
	Platform string
	Date     time.Time
	// IsGit reports whether Cwd is inside a git repository.
	IsGit bool
	// Instructions are the project's instruction files (AGENTS.md,
	// CLAUDE.md), outermost first.
	Instructions []Instruction
}

// Instruction is one instruction file and its content.
type Instruction struct {
	Path, Content string
}

// instructionNames are the instruction files looked for in each directory.
var instructionNames = []string{"AGENTS.md", "CLAUDE.md", filepath.Join(".claude", "CLAUDE.md"), "CLAUDE.local.md"}

// maxInstructionBytes bounds each instruction file in the prompt.
const maxInstructionBytes = 40_000

// DetectEnv looks at cwd: whether it is in a git repository, and the
// instruction files in it and in its parents up to the repository root.
func DetectEnv(cwd string, now time.Time) Env {
	env := Env{Cwd: cwd, Platform: runtime.GOOS + "/" + runtime.GOARCH, Date: now}
	var dirs []string
	for d := cwd; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if st, err := os.Stat(filepath.Join(d, ".git")); err == nil && st != nil {
			env.IsGit = true
			break
		}
		if filepath.Dir(d) == d {
			// Not in a repository: only cwd's own files count.
			dirs = dirs[:1]
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, name := range instructionNames {
			p := filepath.Join(dirs[i], name)
			b, err := os.ReadFile(p)
			if err != nil || len(strings.TrimSpace(string(b))) == 0 {
				continue
			}
			if len(b) > maxInstructionBytes {
				b = append(b[:maxInstructionBytes], []byte("\n[... cut: the file is longer than 40000 bytes]")...)
			}
			env.Instructions = append(env.Instructions, Instruction{Path: p, Content: string(b)})
		}
	}
	return env
}

// SystemPrompt builds the system prompt from the pool's tools, the
// environment and the project's instructions.
func SystemPrompt(pool *orchestrator.Pool, env Env, extra string) string {
	var b strings.Builder
	b.WriteString(`You are a coding agent working in the user's terminal through agent-mcp. You help with software work: reading and changing code, running commands, finding and fixing problems, explaining what you find.

How to work:
- Use the tools to look before you act; read files before you change them and prefer small, precise edits.
- Several independent read-only calls can go in one response; they run in parallel.
- Keep answers short and concrete. Show paths relative to the working directory. Say plainly what you did and what remains.
- Do what was asked, no more; ask when a request is ambiguous or a step is risky or hard to undo.
- A denied tool call means the user chose not to allow it: do not retry it unchanged; adjust or ask.
- Never invent file contents, command output or results you have not seen.
`)
	if pool != nil {
		ts := pool.Tools()
		if len(ts) > 0 {
			b.WriteString("\nTools available (each tool's description says how to use it):\n")
			for _, t := range ts {
				fmt.Fprintf(&b, "- %s: %s\n", t.Name, firstSentence(t.Description))
			}
		}
	}
	b.WriteString("\nEnvironment:\n")
	fmt.Fprintf(&b, "- Working directory: %s\n", env.Cwd)
	fmt.Fprintf(&b, "- Platform: %s\n", env.Platform)
	fmt.Fprintf(&b, "- Date: %s\n", env.Date.Format("2006-01-02"))
	if env.IsGit {
		b.WriteString("- The working directory is in a git repository.\n")
	} else {
		b.WriteString("- The working directory is not in a git repository.\n")
	}
	if len(env.Instructions) > 0 {
		b.WriteString("\nProject instructions (follow them; later files are more specific):\n")
		for _, in := range env.Instructions {
			fmt.Fprintf(&b, "\n<instructions path=%q>\n%s\n</instructions>\n", in.Path, strings.TrimSpace(in.Content))
		}
	}
	if extra = strings.TrimSpace(extra); extra != "" {
		b.WriteString("\n" + extra + "\n")
	}
	return b.String()
}

// firstSentence is the first line of a description, cut at its first
// sentence end.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return truncate(s, 200)
}
