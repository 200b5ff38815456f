package permissions

import (
	"path/filepath"
	"slices"
	"strings"
)

// protectedDirs are directories whose contents configure tools that run
// code or hold credentials; nothing inside them is written without an
// explicit allow rule.
var protectedDirs = []string{".git", ".claude", ".vscode", ".idea", ".ssh", ".gnupg", ".agent-mcp"}

// protectedFiles are files that configure shells, git, or MCP servers: a
// write to them can run code later.
var protectedFiles = []string{
	".mcp.json", ".claude.json", ".gitconfig", ".gitmodules", ".gitattributes",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout",
	".envrc", ".ripgreprc", ".npmrc", ".netrc", ".pypirc",
}

// Protected reports whether writing abs needs an explicit allow (PARITY
// §9): it is inside a directory such as .git or .claude, or is a shell rc
// file, .mcp.json, or similar. It checks the path as written and, when the
// caller gives it, where the path resolves to.
func Protected(abs string, resolved ...string) (bool, string) {
	for _, p := range append([]string{abs}, resolved...) {
		parts := strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
		for _, c := range parts {
			if slices.Contains(protectedDirs, c) {
				return true, c + "/"
			}
		}
		if base := parts[len(parts)-1]; slices.Contains(protectedFiles, base) {
			return true, base
		}
	}
	return false, ""
}
