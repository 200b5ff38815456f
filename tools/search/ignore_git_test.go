package search

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// record rewrites the recorded git answers instead of checking them:
//
//	go test ./tools/search -run TestGitignoreAgreesWithGit -record
var record = flag.Bool("record", false, "ask git check-ignore again and rewrite testdata/check-ignore.txt")

// checkIgnoreFile holds git check-ignore's answers for gitignoreCases.
const checkIgnoreFile = "testdata/check-ignore.txt"

// gitAnswer is what git decides on one probe: ignored, kept (a negation
// matched last) or none (no line matched).
var gitAnswer = map[decision]string{ignoreIt: "ignored", keepIt: "kept", undecided: "none"}

// probeKey names a probe in the recorded file: its case, and its path
// quoted, with a trailing slash when it is a directory.
func probeKey(name string, p gitignoreProbe) string {
	rel := p.rel
	if p.isDir {
		rel += "/"
	}
	return name + "\t" + strconv.Quote(rel)
}

// TestGitignoreAgreesWithGit checks the ignore layer against git itself:
// every probe of gitignoreCases gets the decision `git check-ignore`
// recorded for it in testdata. The record is made with -record, by a real
// git, one fresh repository per probe (so a path can be a file in one
// probe and a directory in the next).
func TestGitignoreAgreesWithGit(t *testing.T) {
	if *record {
		recordCheckIgnore(t)
	}
	data, err := os.ReadFile(checkIgnoreFile)
	if err != nil {
		t.Fatalf("%v (record it with -record)", err)
	}
	recorded := map[string]string{}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("%s: line %q: want case, quoted path and answer separated by tabs", checkIgnoreFile, line)
		}
		recorded[f[0]+"\t"+f[1]] = f[2]
	}
	asked := 0
	for _, tc := range gitignoreCases {
		rs := parseGitignore([]byte(strings.Join(tc.lines, "\n")), ".gitignore")
		for _, p := range tc.probes {
			key := probeKey(tc.name, p)
			git, ok := recorded[key]
			if !ok {
				t.Errorf("%s: no answer for %s (record it with -record)", checkIgnoreFile, strings.ReplaceAll(key, "\t", " "))
				continue
			}
			asked++
			if ours := gitAnswer[rs.match(p.rel, filepath.Base(p.rel), p.isDir)]; ours != git {
				t.Errorf("%s: lines %q, path %s: ours %s, git check-ignore %s", tc.name, tc.lines, strings.SplitN(key, "\t", 2)[1], ours, git)
			}
		}
	}
	if asked != len(recorded) {
		t.Errorf("%s has %d answers for %d probes: a probe was removed (record again with -record)", checkIgnoreFile, len(recorded), asked)
	}
}

// recordCheckIgnore asks git check-ignore about every probe of
// gitignoreCases and writes the answers to checkIgnoreFile. Git reads no
// configuration of the user's or the system's and no global excludes.
func recordCheckIgnore(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("-record needs git")
	}
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "XDG_CONFIG_HOME="+t.TempDir())
	git := func(dir string, stdin []byte, args ...string) []byte {
		cmd := exec.Command(gitPath, args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
		out, err := cmd.Output()
		// check-ignore exits 1 when no path is ignored.
		if err != nil && !(args[0] == "check-ignore" && cmd.ProcessState.ExitCode() == 1) {
			t.Fatalf("git %q in %s: %v", args, dir, err)
		}
		return out
	}
	version := strings.TrimSpace(string(git(".", nil, "version")))
	var b strings.Builder
	fmt.Fprintf(&b, "# git check-ignore's answers for the probes of gitignoreCases (ignore_test.go), one a line:\n")
	fmt.Fprintf(&b, "# the case, the path quoted (a trailing / for a directory), and git's decision: ignored,\n")
	fmt.Fprintf(&b, "# kept (a negation matched last) or none. Recorded by %s with\n", version)
	fmt.Fprintf(&b, "#   go test ./tools/search -run TestGitignoreAgreesWithGit -record\n")
	for _, tc := range gitignoreCases {
		for _, p := range tc.probes {
			dir := t.TempDir()
			git(dir, nil, "init", "-q", "--template=", ".")
			if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(tc.lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, filepath.FromSlash(p.rel))
			if p.isDir {
				err = os.MkdirAll(path, 0o755)
			} else if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.WriteFile(path, nil, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			// -v -n: every path, with the pattern that decided it (a
			// negation shown with its !), or empty fields for none.
			out := git(dir, []byte(p.rel+"\x00"), "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
			f := strings.Split(string(out), "\x00")
			if len(f) < 4 || f[3] != p.rel {
				t.Fatalf("git check-ignore on %q: unexpected answer %q", p.rel, out)
			}
			answer := "none"
			switch {
			case strings.HasPrefix(f[2], "!"):
				answer = "kept"
			case f[2] != "":
				answer = "ignored"
			}
			fmt.Fprintf(&b, "%s\t%s\n", probeKey(tc.name, p), answer)
		}
	}
	if err := os.WriteFile(checkIgnoreFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d lines", checkIgnoreFile, strings.Count(b.String(), "\n"))
}
