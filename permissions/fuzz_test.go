package permissions

import (
	"strings"
	"testing"
)

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(npm run *)", `Bash(echo \(x\))`, "Read(//a/**)", "mcp__s__*", "Edit(", "(x)", "WebFetch(domain:a.b)", "Bash(a:*)"} {
		f.Add(s)
	}
	a := Anchors{Home: "/h", Root: "/r", Cwd: "/r/c"}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		back, err := ParseRule(r.String())
		if err != nil || back != r {
			t.Fatalf("%q parsed as %+v, rendered %q, reparsed %+v, %v", s, r, r.String(), back, err)
		}
		sr, err := NewSourcedRule(r, Deny, "fuzz", a)
		if err != nil {
			return
		}
		tg := &Target{Tool: r.Tool, Bash: AnalyzeCommand("ls"), Accesses: []Access{{Path: "/r/c/x", Real: "/r/c/x"}}}
		_ = sr.matchAny(tg)
	})
}

// FuzzAnalyzeCommand checks that no command line panics the analysis, and
// that a denied command joined to anything is never allowed.
func FuzzAnalyzeCommand(f *testing.F) {
	for _, s := range []string{"ls", "echo hi && ls", "$(x)", "bash -c 'echo'", "a=b c", "echo > f", "`", "'", "eval x", "f() { :; }", "cat <<EOF\nx\nEOF"} {
		f.Add(s)
	}
	rs := ruleSet(f, []string{"Bash(rm *)"}, nil, []string{"Bash(echo *)", "Bash(ls *)", "Bash(cat *)", "Bash(sh *)", "Bash(env *)", "Bash(xargs *)", "Bash(*)"})
	f.Fuzz(func(t *testing.T, s string) {
		_ = bashDecision(t, rs, s)
		for _, joined := range []string{s + "\nrm -rf x", "rm -rf x; " + s, s + " && rm x", "echo $(rm x) " + s} {
			if strings.Count(joined, "'")%2 == 1 || strings.Count(joined, `"`)%2 == 1 || strings.Contains(joined, "<<") || strings.Contains(joined, "\\") || strings.Contains(joined, "#") {
				continue // the fuzz text may swallow the rm into a quote, heredoc or comment
			}
			if got := bashDecision(t, rs, joined); got == Allow {
				t.Fatalf("%q was allowed despite Bash(rm *)", joined)
			}
		}
	})
}
