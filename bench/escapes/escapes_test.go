//go:build linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
)

// TestSecurityDocListsTheCorpus: docs/security.md's case table names
// exactly the corpus's cases, so a case added without a scoreboard run
// (or one removed) is noticed. No sandbox is run.
func TestSecurityDocListsTheCorpus(t *testing.T) {
	t.Parallel()
	cases, err := attackcorpus.Load(filepath.Join("..", "..", "e2e", "attacks"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus []string
	for _, c := range cases {
		corpus = append(corpus, c.Name)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := docCases(doc)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	for _, n := range corpus {
		if !slices.Contains(listed, n) {
			t.Errorf("docs/security.md does not list the corpus case %s: run `go run ./bench/escapes` (peers: bench/escapes/install-peers.sh)", n)
		}
	}
	for _, n := range listed {
		if !slices.Contains(corpus, n) {
			t.Errorf("docs/security.md lists %s, which is not in e2e/attacks: run `go run ./bench/escapes`", n)
		}
	}
}

// TestFamilies: every corpus case belongs to one of the scoreboard's
// families.
func TestFamilies(t *testing.T) {
	t.Parallel()
	cases, err := attackcorpus.Load(filepath.Join("..", "..", "e2e", "attacks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if f := family(c.Name); f == "other" {
			t.Errorf("%s: its name starts with no family's prefix (bench/escapes/scoreboard.go)", c.Name)
		}
	}
}

// TestPeerSettings: what of a case's flags and settings a peer is given,
// and what makes a case not applicable to the peers.
func TestPeerSettings(t *testing.T) {
	t.Parallel()
	w := &world{Places: attackcorpus.Places{Work: "/w", Home: "/h"}}
	for _, tc := range []struct {
		name     string
		c        attackcorpus.Case
		roots    []string
		readDeny []string
		na       string
	}{
		{name: "plain", c: attackcorpus.Case{Steps: []attackcorpus.Step{{Kind: "bash", Text: "true"}}}},
		{name: "add-dir", c: attackcorpus.Case{Args: []string{"--add-dir", "@HOME@/p"}}, roots: []string{"/h/p"}},
		{name: "additionalDirectories", c: attackcorpus.Case{Settings: `{"permissions":{"additionalDirectories":["@HOME@"]}}`}, roots: []string{"/h"}},
		{name: "read deny", c: attackcorpus.Case{Settings: `{"permissions":{"deny":["Read(./a/secret/**)","Read(./k.pem)"]}}`}, readDeny: []string{"/w/a/secret", "/w/k.pem"}},
		{name: "network off", c: attackcorpus.Case{Settings: `{"sandbox":{"network":false}}`}},
		{name: "allowed domains", c: attackcorpus.Case{Settings: `{"sandbox":{"network":{"allowedDomains":["a.example"]}}}`}},
		{name: "denied domains", c: attackcorpus.Case{Settings: `{"sandbox":{"network":{"deniedDomains":["a.example"]}}}`}, na: "agent-mcp's sandbox.network setting"},
		{name: "excluded commands", c: attackcorpus.Case{Settings: `{"sandbox":{"excludedCommands":["git"]}}`}, na: "agent-mcp's sandbox.excludedCommands setting"},
		{name: "state dir", c: attackcorpus.Case{Args: []string{"--state-dir", "@WORK@/.s"}}, na: "agent-mcp's --state-dir flag"},
		{name: "state path", c: attackcorpus.Case{Steps: []attackcorpus.Step{{Kind: "bash", Text: "ls @STATE@"}}}, na: "the server's state directory"},
		{name: "background", c: attackcorpus.Case{Steps: []attackcorpus.Step{{Kind: "bash background", Text: "true"}}}, na: "background tasks (the server's)"},
		{name: "terminal", c: attackcorpus.Case{TTY: true}, na: "the server's terminal"},
		{name: "server's words", c: attackcorpus.Case{Steps: []attackcorpus.Step{{Kind: "bash", Text: "exit 7"}}, Expect: []string{"output Exit code 7"}},
			na: "judged by what agent-mcp's server prints"},
		{name: "env's words", c: attackcorpus.Case{Steps: []attackcorpus.Step{{Kind: "bash", Text: "env"}}, Expect: []string{"output PATH="}}},
		{name: "command's words", c: attackcorpus.Case{Steps: []attackcorpus.Step{{Kind: "bash", Text: "echo RAN"}}, Expect: []string{"output RAN"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := peerApplicable(&tc.c)
			if ok != (tc.na == "") || why != tc.na {
				t.Fatalf("applicable = %v, %q; want %q", ok, why, tc.na)
			}
			if !ok {
				return
			}
			pc, err := peerSettings(&tc.c, w)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pc.roots, tc.roots) || !slices.Equal(pc.readDeny, tc.readDeny) {
				t.Errorf("roots %v, read deny %v; want %v, %v", pc.roots, pc.readDeny, tc.roots, tc.readDeny)
			}
		})
	}
}

// TestReplaceBetween: the generated parts are replaced between their
// markers and nowhere else, and missing markers are an error naming them.
func TestReplaceBetween(t *testing.T) {
	t.Parallel()
	doc := []byte("intro\n" + begin(markCost) + "old\n" + end(markCost) + "\noutro\n")
	got, err := replaceBetween(doc, markCost, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n" + begin(markCost) + "new\n" + end(markCost) + "\noutro\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := replaceBetween(doc, markCases, "x"); err == nil || !strings.Contains(err.Error(), "escapes:cases") {
		t.Errorf("missing markers: err = %v", err)
	}
}

// TestMergeDoc: a run of some cases merged into the document keeps the
// earlier run's rows of the others, drops a row of a case gone from the
// corpus, and counts the scoreboard over them all.
func TestMergeDoc(t *testing.T) {
	t.Parallel()
	tools := []tool{agentMCP{}, srt{}, codex{}}
	old := &scoreboard{tools: tools, rows: []caseRow{
		{c: &attackcorpus.Case{Name: "git-a"}, results: []result{{}, {failed: []string{"x changed"}}, {na: "the server's terminal"}}},
		{c: &attackcorpus.Case{Name: "git-gone"}, results: []result{{}, {}, {}}},
	}}
	path := filepath.Join(t.TempDir(), "security.md")
	text := begin(markScore) + end(markScore) + "\n" + begin(markOpen) + end(markOpen) + "\n" + begin(markCases) + old.cases() + end(markCases) + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	corpus := []*attackcorpus.Case{{Name: "git-a"}, {Name: "git-new"}}
	b := &scoreboard{tools: tools, rows: []caseRow{{c: corpus[1], results: []result{{}, {}, {failed: []string{"the output lacks \"RAN\" (did the command run?)"}}}}}}
	if err := b.mergeDoc(path, corpus); err != nil {
		t.Fatal(err)
	}
	if err := writeDoc(path, b, nil, ""); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(path)
	names, _ := docCases(doc)
	if !slices.Equal(names, []string{"git-a", "git-new"}) {
		t.Errorf("cases %v, want git-a, git-new", names)
	}
	for _, want := range []string{"| git | 2 / 2 | 1 / 2 | 0 / 1 (1 not run) |", "| git-a | git | held | ESCAPED | n/a: the server's terminal |"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the document lacks %q:\n%s", want, doc)
		}
	}
	// A corpus case in neither is named.
	b = &scoreboard{tools: tools}
	if err := b.mergeDoc(path, append(corpus, &attackcorpus.Case{Name: "git-unrun"})); err == nil || !strings.Contains(err.Error(), "git-unrun") {
		t.Errorf("err = %v, want one naming git-unrun", err)
	}
}
