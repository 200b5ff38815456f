package permissions

import (
	"testing"
)

func TestParseRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     Rule
		wantErr  bool
	}{
		{"bare tool", "Bash", Rule{Tool: "Bash"}, false},
		{"empty parens are the whole tool", "Bash()", Rule{Tool: "Bash"}, false},
		{"star is the whole tool", "Bash(*)", Rule{Tool: "Bash"}, false},
		{"exact command", "Bash(npm run build)", Rule{Tool: "Bash", Specifier: "npm run build"}, false},
		{"legacy prefix", "Bash(npm run test:*)", Rule{Tool: "Bash", Specifier: "npm run test:*"}, false},
		{"path", "Read(./.env)", Rule{Tool: "Read", Specifier: "./.env"}, false},
		{"absolute path", "Edit(//tmp/x/**)", Rule{Tool: "Edit", Specifier: "//tmp/x/**"}, false},
		{"domain", "WebFetch(domain:example.com)", Rule{Tool: "WebFetch", Specifier: "domain:example.com"}, false},
		{"mcp server", "mcp__puppeteer", Rule{Tool: "mcp__puppeteer"}, false},
		{"mcp server star", "mcp__puppeteer__*", Rule{Tool: "mcp__puppeteer__*"}, false},
		{"mcp tool", "mcp__puppeteer__navigate", Rule{Tool: "mcp__puppeteer__navigate"}, false},
		{"escaped parens", `Bash(echo \(hi\))`, Rule{Tool: "Bash", Specifier: "echo (hi)"}, false},
		{"surrounding space", "  Read( src/** ) ", Rule{Tool: "Read", Specifier: "src/**"}, false},
		{"param", "Agent(subagent_type:Explore)", Rule{Tool: "Agent", Specifier: "subagent_type:Explore"}, false},
		{"empty", "", Rule{}, true},
		{"missing close", "Bash(ls", Rule{}, true},
		{"unescaped paren inside", "Bash(echo (x))", Rule{}, true},
		{"no name", "(ls)", Rule{}, true},
		{"bad name", "Ba sh", Rule{}, true},
		{"star in a built-in name", "Ba*", Rule{}, true},
		{"escaped close at end", `Bash(ls\)`, Rule{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRule(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseRule(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("ParseRule(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if err == nil {
				back, err := ParseRule(got.String())
				if err != nil || back != got {
					t.Fatalf("round trip of %q through %q = %+v, %v", tt.in, got.String(), back, err)
				}
			}
		})
	}
}

func TestRuleNamesTool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, tool string
		want       bool
	}{
		{"Bash", "Bash", true},
		{"Bash", "BashOutput", false},
		{"mcp__srv", "mcp__srv__tool", true},
		{"mcp__srv__*", "mcp__srv__tool", true},
		{"mcp__srv", "mcp__srv2__tool", false},
		{"mcp__srv__tool", "mcp__srv__tool", true},
		{"mcp__srv__tool", "mcp__srv__other", false},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.NamesTool(tt.tool); got != tt.want {
			t.Errorf("%s names %s = %v, want %v", tt.rule, tt.tool, got, tt.want)
		}
	}
	r, _ := ParseRule("KillShell")
	if !r.NamesTool("TaskStop", "KillShell") {
		t.Error("a rule naming an alias must name the tool")
	}
}

func TestSplitRuleList(t *testing.T) {
	t.Parallel()
	got := SplitRuleList("Read,Bash(git log *) Edit(src/**),  WebFetch(domain:a.com)")
	want := []string{"Read", "Bash(git log *)", "Edit(src/**)", "WebFetch(domain:a.com)"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestCommandPattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec, cmd string
		want      bool
	}{
		{"npm run build", "npm run build", true},
		{"npm run build", "npm run build --watch", false},
		{"npm run test *", "npm run test", true},
		{"npm run test *", "npm run test -- --watch", true},
		{"npm run test:*", "npm run test unit", true},
		{"npm run test:*", "npm run testing", false},
		{"ls *", "ls -la", true},
		{"ls *", "lsof", false},
		{"ls*", "lsof", true},
		{"ls*", "ls -la", true},
		{"git * main", "git checkout main", true},
		{"git * main", "git checkout main2", false},
		{"* --version", "node --version", true},
		{"* --help *", "git --help commit", true},
		{`echo \*`, "echo *", true},
		{`echo \*`, "echo x", false},
		{"git commit *", "git commit -m 'a b'", true},
		{"rm -rf *", "rm -rf /", true},
	}
	for _, tt := range tests {
		if got := compileCommandPattern(tt.spec).match(tt.cmd); got != tt.want {
			t.Errorf("Bash(%s) matches %q = %v, want %v", tt.spec, tt.cmd, got, tt.want)
		}
	}
}
