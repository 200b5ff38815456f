package permissions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/internal/protect"
)

// This file is the one list of protected paths. The permission check asks
// [Protected] about every path a call writes; a kernel sandbox makes the
// paths of [ProtectedPaths] read-only. Both read the lists below, so the
// two can never disagree.

// protectedDirs are directories whose contents configure tools that run
// code or hold credentials, wherever they appear: nothing inside them is
// written without an explicit allow rule naming them. They are every
// supported host's and editor's configuration (Claude Code, Codex, Gemini
// CLI, Cursor, VS Code, Zed, JetBrains, Continue, Windsurf: each starts
// MCP servers, tasks or hooks from it on the host), git's own, husky's
// hook scripts (run by the user's git commit), and .cargo, Cargo's
// configuration (build.rustc-wrapper and the like, read from the project's
// directory and every one above it, and from ~/.cargo).
var protectedDirs = []string{
	".git", ".claude", ".codex", ".gemini", ".cursor", ".vscode", ".zed", ".idea", ".continue", ".windsurf",
	".ssh", ".gnupg", ".agent-mcp", ".cargo", ".husky",
}

// protectedFiles are files that configure shells, git, MCP and language
// servers, or package managers and tools in a way that runs code the
// user did not ask for (yarn's yarnPath, pnpm's hooks, pip's index in a
// virtualenv, pre-commit's hooks at the user's git commit, direnv's and
// mise's on entering the directory), wherever they appear: a write to
// them can run code later, outside the sandbox.
var protectedFiles = []string{
	".mcp.json", ".lsp.json", ".claude.json", ".gitconfig", ".gitmodules", ".gitattributes",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout",
	".envrc", ".ripgreprc", ".npmrc", ".netrc", ".pypirc",
	".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "pip.conf", ".pre-commit-config.yaml", ".mise.toml", "mise.toml",
}

// protectedConfigDirs are directories under a `.config` directory (the XDG
// configuration of git, fish, go (its env file, where `go env -w` puts
// GOFLAGS=-toolexec or GOCACHEPROG for every later go command), and
// agent-mcp itself: its settings.json and mcp.json) protected as a whole.
// Where XDG_CONFIG_HOME moves the user's configuration, they are protected
// there too.
var protectedConfigDirs = []string{"git", "fish", "go", "agent-mcp"}

// protectedUserFileEnv are variables that move one of the user's own
// configuration files that runs code (git's global config, go's env
// file): the file they name is protected wherever it is.
var protectedUserFileEnv = []string{"GIT_CONFIG_GLOBAL", "GOENV"}

// userPlaces are the protected places the server's environment moves:
// the [protectedConfigDirs] under $XDG_CONFIG_HOME and the files of
// [protectedUserFileEnv]; absolute and cleaned, read when called.
func userPlaces() []string {
	var out []string
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		for _, n := range protectedConfigDirs {
			out = append(out, filepath.Join(x, n))
		}
	}
	for _, e := range protectedUserFileEnv {
		// GOENV=off turns the file off.
		if v := os.Getenv(e); filepath.IsAbs(v) {
			out = append(out, filepath.Clean(v))
		}
	}
	return out
}

// ProtectedPaths lists the protected paths directly under each of roots
// (working directories) and under home, whether or not they exist yet:
// what a sandbox makes read-only so that a command cannot create or change
// them. Paths deeper down (a nested repository's .git) are protected by
// [Protected] only.
func ProtectedPaths(roots []string, home string) []string {
	var out []string
	add := func(p string) {
		if p = filepath.Clean(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, r := range append(slices.Clone(roots), home) {
		if r == "" {
			continue
		}
		for _, n := range protectedDirs {
			add(filepath.Join(r, n))
		}
		for _, n := range protectedFiles {
			add(filepath.Join(r, n))
		}
	}
	if home != "" {
		for _, n := range protectedConfigDirs {
			add(filepath.Join(home, ".config", n))
		}
	}
	for _, p := range userPlaces() {
		add(p)
	}
	return out
}

// Protected reports whether writing abs needs an explicit allow rule: it
// is inside a directory such as .git, .claude or .cursor, or ~/.config/git
// (or where XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GOENV move the user's),
// or is a shell rc file, .mcp.json, or similar, at any depth. It checks
// the path as written and, when the caller gives it, where the path
// resolves to. what names the protected part.
func Protected(abs string, resolved ...string) (ok bool, what string) {
	names := ProtectedNames()
	for _, p := range append([]string{abs}, resolved...) {
		if ok, what := names.Protected(p); ok {
			return true, what
		}
	}
	return false, ""
}

// ProtectedNames are the protected names and the places the server's
// environment moves ([userPlaces]), read when called: the facts the kernel
// sandbox's supervisor judges a command's creating calls by, with the one
// predicate [Protected] uses (package internal/protect).
func ProtectedNames() protect.Names {
	return protect.Names{Dirs: protectedDirs, Files: protectedFiles, ConfigDirs: protectedConfigDirs, Places: userPlaces()}
}

// NamesProtected reports whether a path rule names a protected path itself
// (`Edit(.git/hooks/**)`, `Edit(//proj/.mcp.json)`), rather than covering
// one by a wider pattern (`Edit(//proj/**)`, `Edit`): only such a rule
// allows writing a protected path.
func (r *SourcedRule) NamesProtected() bool {
	if r == nil || r.path == nil {
		return false
	}
	lit := r.path.base
	for _, seg := range strings.Split(r.path.glob, "/") {
		if seg == "**" {
			continue // `.git/**` and an unanchored `.git` still name .git
		}
		if strings.ContainsAny(seg, `*?[\`) {
			break
		}
		lit = filepath.Join(lit, seg)
	}
	ok, _ := Protected(lit)
	return ok
}
