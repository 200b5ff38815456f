package shell

import (
	"errors"
	"strings"
)

// errNoBash is why Bash cannot run on Windows without a bash.
var errNoBash = errors.New(`no bash found: Bash needs bash.exe on Windows; install Git for Windows (https://gitforwindows.org, which puts bash.exe in %ProgramFiles%\Git\bin) or WSL (wsl --install), then restart agent-mcp`)

// bashLookup is what lookupWindowsBash reads: the environment, a PATH
// search, and whether a file exists.
type bashLookup struct {
	getenv   func(string) string
	lookPath func(string) (string, error)
	exists   func(string) bool
}

// lookupWindowsBash finds the bash.exe Bash runs on Windows: Git for
// Windows' bash first (on PATH, then %ProgramFiles%\Git\bin\bash.exe),
// WSL's bash.exe (System32\bash.exe, which runs the command in the Linux
// distribution) only if there is no other. Paths are joined with
// backslashes whatever the platform, so the lookup can be tested anywhere.
func lookupWindowsBash(l bashLookup) (string, error) {
	var wsl string
	if p, err := l.lookPath("bash.exe"); err == nil {
		if !isWSLBash(p, l.getenv("SystemRoot")) {
			return p, nil
		}
		wsl = p
	}
	for _, v := range []string{"ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"} {
		if dir := l.getenv(v); dir != "" {
			p := winJoin(dir, `Git\bin\bash.exe`)
			if l.exists(p) {
				return p, nil
			}
		}
	}
	if wsl != "" {
		return wsl, nil
	}
	if root := l.getenv("SystemRoot"); root != "" {
		if p := winJoin(root, `System32\bash.exe`); l.exists(p) {
			return p, nil
		}
	}
	return "", errNoBash
}

// isWSLBash reports whether p is WSL's bash.exe, in the Windows directory
// systemRoot (or any Windows directory when systemRoot is unknown).
func isWSLBash(p, systemRoot string) bool {
	p = strings.ToLower(strings.ReplaceAll(p, "/", `\`))
	if systemRoot != "" {
		return strings.HasPrefix(p, strings.ToLower(strings.TrimRight(systemRoot, `\`))+`\`)
	}
	return strings.Contains(p, `\windows\`)
}

// winJoin joins a Windows directory and a relative path with a backslash.
func winJoin(dir, rel string) string {
	return strings.TrimRight(dir, `/\`) + `\` + rel
}
