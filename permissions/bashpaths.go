package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// maxGlobMatches bounds how many files a glob in a command may name before
// its paths count as unknown.
const maxGlobMatches = 1000

// Accesses resolves the paths of the line against the directory it runs
// in (cwd, absolute) and the home directory: `~` and `~user` expanded,
// globs expanded as the shell would (a glob matching nothing stays as
// written), `git config`'s repository found, each symbolic link followed
// as the kernel will (a `..` after a link goes up from where the link
// leads). What cannot be resolved is returned as unknown. Call it when
// the command is about to run: the result is what the command will touch
// as long as nothing changes the files in between.
func (cl *CommandLine) Accesses(cwd, home string) (out []Access, unknown []shellcmd.Unknown) {
	unknown = append(unknown, cl.Unknowns...)
	for _, f := range cl.Files {
		base, err := expandTilde(f.Dir, cwd, home)
		if err == nil && !filepath.IsAbs(base) {
			base = filepath.Join(cwd, base)
		}
		p := f.Path
		if err == nil {
			p, err = expandTilde(f.Path, base, home)
		}
		if err != nil {
			unknown = append(unknown, shellcmd.Unknown{Write: f.Write, Why: fmt.Sprintf("%s: %v", f.Program, err)})
			continue
		}
		if !filepath.IsAbs(p) {
			p = base + "/" + p
		}
		paths := []string{p}
		if f.Pattern {
			matches, err := globWrite(escapeGlob(base)+strings.TrimPrefix(p, base), f.Write)
			switch {
			case err != nil || len(matches) > maxGlobMatches:
				unknown = append(unknown, shellcmd.Unknown{Write: f.Write, Why: fmt.Sprintf("%s: the pattern %s names too many files to judge", f.Program, f.Path)})
				continue
			case len(matches) > 0:
				paths = visibleMatches(p, matches)
			}
		}
		for _, p := range paths {
			if f.GitConfig {
				p = filepath.Join(gitDirOf(p), "config")
			}
			real, err := confine.ResolvePhysical(p)
			if err != nil {
				unknown = append(unknown, shellcmd.Unknown{Write: f.Write, Why: fmt.Sprintf("%s: %v", f.Program, err)})
				continue
			}
			a := Access{Path: filepath.Clean(p), Real: real, Write: f.Write, Subtree: f.Subtree, Guessed: f.Guess}
			if fi, err := os.Stat(real); err == nil {
				a.IsDir = fi.IsDir()
			}
			out = append(out, a)
		}
	}
	return out, unknown
}

// expandTilde expands a leading `~` or `~user` of p (home, or that user's
// home directory), and `~+` (dir). Other paths are returned as they are.
func expandTilde(p, dir, home string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	switch name {
	case "":
		if home == "" {
			return "", errors.New("the home directory is unknown")
		}
		return filepath.Join(home, rest), nil
	case "+":
		return filepath.Join(dir, rest), nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return "", fmt.Errorf("~%s: %w", name, err)
	}
	return filepath.Join(u.HomeDir, rest), nil
}

// globWrite expands pattern; for a write it also names the files the
// pattern's directories would get (`protecte?/new` writes protected/new,
// which does not exist yet).
func globWrite(pattern string, write bool) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil || !write {
		return matches, err
	}
	dir, last := filepath.Split(pattern)
	if dir == "" || strings.ContainsAny(last, `*?[\`) {
		return matches, nil
	}
	dirs, err := filepath.Glob(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if p := filepath.Join(d, last); !slices.Contains(matches, p) {
			matches = append(matches, p)
		}
	}
	return matches, nil
}

// visibleMatches drops the matches bash would not make: a component
// starting with "." matched by a pattern component that does not (bash's
// dotglob is off, and the Bash tool's environment cannot turn it on).
func visibleMatches(pattern string, matches []string) []string {
	pat := strings.Split(pattern, "/")
	var out []string
	for _, m := range matches {
		parts := strings.Split(m, "/")
		ok := len(parts) == len(pat)
		for i := 0; ok && i < len(parts); i++ {
			if strings.HasPrefix(parts[i], ".") && !strings.HasPrefix(pat[i], ".") && parts[i] != pat[i] {
				ok = false
			}
		}
		if ok || len(parts) != len(pat) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return []string{pattern}
	}
	return out
}

func escapeGlob(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// gitDirOf is the .git of the repository holding dir (the nearest parent
// with a .git entry), or dir/.git when there is none.
func gitDirOf(dir string) string {
	start := filepath.Clean(dir)
	for d := start; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return filepath.Join(d, ".git")
		}
		if d == filepath.Dir(d) {
			return filepath.Join(start, ".git")
		}
	}
}

// protectedBelowLimit bounds the walk of [ProtectedBelow].
const protectedBelowLimit = 20000

// ProtectedBelow reports whether a protected path lies at or below dir
// (without following symbolic links), for a command that may change
// everything there (`rm -r`, `tar -x`). A tree too large to walk counts as
// holding one. what names the protected part found.
func ProtectedBelow(dir string) (ok bool, what string) {
	if ok, what := Protected(dir); ok {
		return true, what
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: the command cannot change it either
		}
		if n++; n > protectedBelowLimit {
			what = fmt.Sprintf("more than %d files below %s to check", protectedBelowLimit, dir)
			return filepath.SkipAll
		}
		if prot, w := Protected(p); prot {
			what = w
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, err.Error()
	}
	return what != "", what
}
