package permissions

import (
	"net/url"
	"testing"
)

func TestPathRules(t *testing.T) {
	t.Parallel()
	a := Anchors{Home: "/home/u", Root: "/work/proj", Cwd: "/work/proj/sub"}
	tests := []struct {
		name, spec, path string
		dir              bool
		want             bool
	}{
		{"absolute anchor", "//etc/passwd", "/etc/passwd", false, true},
		{"absolute anchor other file", "//etc/passwd", "/etc/shadow", false, false},
		{"absolute dir glob", "//tmp/scratch/**", "/tmp/scratch/a/b.txt", false, true},
		{"home anchor", "~/.zshrc", "/home/u/.zshrc", false, true},
		{"home anchor elsewhere", "~/.zshrc", "/work/proj/.zshrc", false, false},
		{"project root anchor", "/src/**/*.ts", "/work/proj/src/a/b.ts", false, true},
		{"project root anchor not cwd", "/src/**/*.ts", "/work/proj/sub/src/a.ts", false, false},
		{"cwd relative dotslash", "./.env", "/work/proj/sub/.env", false, true},
		{"dotslash is anchored", "./.env", "/work/proj/sub/deeper/.env", false, false},
		{"bare name at any depth", ".env", "/work/proj/sub/deeper/.env", false, true},
		{"bare name not above cwd", ".env", "/work/proj/.env", false, false},
		{"bare glob at any depth", "*.key", "/work/proj/sub/a/b/c.key", false, true},
		{"star stays in a component", "docs/*.md", "/work/proj/sub/docs/a/b.md", false, false},
		{"star in a component", "docs/*.md", "/work/proj/sub/docs/b.md", false, true},
		{"double star crosses", "docs/**/*.md", "/work/proj/sub/docs/a/b.md", false, true},
		{"directory covers contents", "secrets", "/work/proj/sub/x/secrets/key.pem", false, true},
		{"trailing slash dir only, file", "build/", "/work/proj/sub/build", false, false},
		{"trailing slash dir only, dir", "build/", "/work/proj/sub/build", true, true},
		{"trailing slash covers contents", "build/", "/work/proj/sub/build/out.o", false, true},
		{"braces are literal", "{a,b}.txt", "/work/proj/sub/a.txt", false, false},
		{"sibling prefix", "//work/app/**", "/work/app-evil/x", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := compilePathPattern(tt.spec, a)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.match(tt.path, tt.dir); got != tt.want {
				t.Fatalf("%s matches %s = %v, want %v (glob %q under %s)", tt.spec, tt.path, got, tt.want, p.glob, p.base)
			}
		})
	}
}

func TestPathRules_readAndEditFamilies(t *testing.T) {
	t.Parallel()
	rs := ruleSet(t, []string{"Read(./secret/**)", "Edit(//etc/**)"}, nil, []string{"Edit(/src/**)"})
	grep := &Target{Tool: "Grep", Accesses: []Access{{Path: "/work/app/secret/k", Real: "/work/app/secret/k"}}}
	if rs.Find(Deny, grep) == nil {
		t.Error("a Read deny must cover the search tools")
	}
	write := &Target{Tool: "Write", Accesses: []Access{{Path: "/etc/hosts", Real: "/etc/hosts", Write: true}}}
	if rs.Find(Deny, write) == nil {
		t.Error("an Edit deny must cover every writing tool")
	}
	readEtc := &Target{Tool: "Read", Accesses: []Access{{Path: "/etc/hosts", Real: "/etc/hosts"}}}
	if m := rs.Find(Deny, readEtc); m != nil {
		t.Errorf("an Edit deny must not block reading, got %s", m.Rule)
	}
	src := Access{Path: "/work/app/src/a.go", Real: "/work/app/src/a.go", Write: true}
	if rs.AllowsAccess(&Target{Tool: "MultiEdit"}, src) == nil {
		t.Error("Edit(/src/**) must allow MultiEdit under src")
	}
	srcRead := src
	srcRead.Write = false
	if rs.AllowsAccess(&Target{Tool: "Read"}, srcRead) == nil {
		t.Error("an Edit allow also allows reading")
	}
	// A symlink inside src pointing outside is judged by its target.
	link := Access{Path: "/work/app/src/link", Real: "/etc/passwd", Write: true}
	if rs.AllowsAccess(&Target{Tool: "Write"}, link) != nil {
		t.Error("an allow must match where the path resolves to")
	}
	if rs.Find(Deny, &Target{Tool: "Write", Accesses: []Access{link}}) == nil {
		t.Error("a deny must match where the path resolves to")
	}
}

func TestDomainAndMCPRules(t *testing.T) {
	t.Parallel()
	rs := ruleSet(t, []string{"WebFetch(domain:evil.com)", "mcp__bad"}, nil, []string{"WebFetch(domain:*.example.com)", "mcp__good__read"})
	tg := func(u string) *Target { return &Target{Tool: "WebFetch", URL: mustURL(t, u)} }
	if rs.Find(Deny, tg("https://evil.com/x")) == nil {
		t.Error("domain deny")
	}
	if rs.Find(Deny, tg("https://notevil.com/x")) != nil {
		t.Error("domain deny must not match a longer host")
	}
	if rs.AllowsDomain(tg("https://docs.example.com/")) == nil {
		t.Error("*.example.com must allow a subdomain")
	}
	if rs.AllowsDomain(tg("https://example.com.evil.org/")) != nil {
		t.Error("*.example.com must not allow example.com.evil.org")
	}
	if rs.DeniesWholeTool("mcp__bad__anything") == nil {
		t.Error("mcp__bad must deny all of the server's tools")
	}
	if rs.AllowsTool(&Target{Tool: "mcp__good__read"}) == nil || rs.AllowsTool(&Target{Tool: "mcp__good__write"}) != nil {
		t.Error("mcp__good__read allows that tool only")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
