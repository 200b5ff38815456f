package shell

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestLookupWindowsBash: Git for Windows' bash wins (PATH, then
// %ProgramFiles%\Git\bin), WSL's bash.exe is taken only when there is no
// other, and with none the error names what to install.
func TestLookupWindowsBash(t *testing.T) {
	t.Parallel()
	env := map[string]string{`SystemRoot`: `C:\Windows`, `ProgramFiles`: `C:\Program Files`}
	const (
		gitOnPath = `D:\tools\Git\usr\bin\bash.exe`
		gitDir    = `C:\Program Files\Git\bin\bash.exe`
		wsl       = `C:\Windows\System32\bash.exe`
	)
	for _, tc := range []struct {
		name   string
		onPath string
		files  []string
		want   string
	}{
		{"git on PATH", gitOnPath, []string{gitDir, wsl}, gitOnPath},
		{"git in Program Files", "", []string{gitDir, wsl}, gitDir},
		{"WSL on PATH loses to Program Files", `c:\windows\system32\bash.exe`, []string{gitDir, wsl}, gitDir},
		{"WSL on PATH when nothing else", `C:\WINDOWS\System32\bash.exe`, []string{wsl}, `C:\WINDOWS\System32\bash.exe`},
		{"WSL in System32 when nothing else", "", []string{wsl}, wsl},
		{"none", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := lookupWindowsBash(bashLookup{
				getenv: func(k string) string { return env[k] },
				lookPath: func(string) (string, error) {
					if tc.onPath == "" {
						return "", exec.ErrNotFound
					}
					return tc.onPath, nil
				},
				exists: func(p string) bool {
					for _, f := range tc.files {
						if f == p {
							return true
						}
					}
					return false
				},
			})
			if tc.want == "" {
				if !errors.Is(err, errNoBash) || !strings.Contains(err.Error(), "Git for Windows") || !strings.Contains(err.Error(), "WSL") {
					t.Fatalf("got %q, %v; want the no-bash error naming Git for Windows and WSL", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
