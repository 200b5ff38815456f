package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/sandbox"
)

// tlsSite is an HTTPS server on 127.0.0.1 with a CA of its own: it
// answers "hello from PATH" and serves a git repository over smart HTTP
// under /git/, and records every path asked for.
type tlsSite struct {
	port   int
	caFile string
	mu     sync.Mutex
	paths  []string
}

func (s *tlsSite) saw(prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.paths {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

func newTLSSite(t *testing.T, dir string, names ...string) *tlsSite {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agent-mcp test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &tlsSite{caFile: filepath.Join(dir, "ca.pem")}
	if err := os.WriteFile(s.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	repos := filepath.Join(dir, "repos")
	for _, args := range [][]string{{"init", "-q", "--bare", filepath.Join(repos, "r.git")},
		{"init", "-q", filepath.Join(dir, "src")}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("through the proxy\n"), 0o644); err != nil {
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
	mux := http.NewServeMux()
	mux.Handle("/git/", backend)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hello from " + r.URL.Path)) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { srv.Close() })
	s.port = ln.Addr().(*net.TCPAddr).Port
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEgress_proxy: with the default network, a sandboxed command reaches
// an allowed domain through the egress proxy with curl, Python's urllib
// and git over HTTPS; an unlisted domain is asked about (accepted: it
// goes through; declined: refused naming the rule); a denied domain is
// refused without a question; IP literals, direct sockets, UDP and DNS
// reach nothing.
func TestEgress_proxy(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"curl", "git", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	for _, layers := range []string{"namespaces,landlock", "landlock"} {
		for _, u := range sandboxenv.Users(t) {
			t.Run(layers+"/"+u.Name, func(t *testing.T) {
				t.Parallel()
				sandboxenv.RequireLayers(t, binary, layers)
				if layers == "landlock" && supervisorMissing() != "" {
					t.Skipf("no supervised egress proxy with Landlock alone here: %s", supervisorMissing())
				}
				egressProxy(t, layers, u)
			})
		}
	}
}

// supervisorMissing is what `sandbox check` says keeps the egress proxy
// from Landlock alone here; empty when nothing does.
func supervisorMissing() string {
	cmd := exec.Command(binary, "sandbox", "check")
	cmd.Env = append(os.Environ(), sandbox.LayersEnv+"=landlock")
	out, _ := cmd.CombinedOutput()
	if strings.Contains(string(out), "network through the egress proxy (Landlock alone") {
		return ""
	}
	return string(out)
}

func egressProxy(t *testing.T, layers string, u sandboxenv.User) {
	e := sandboxenv.New(t, binary, u)
	site := newTLSSite(t, filepath.Join(e.Root, "site"), "allowed.test", "asked.test", "declined.test", "denied.test", "other.allowed.test")
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()

	var asked sync.Map
	answer := map[string]string{"asked.test": "accept", "declined.test": "decline", "denied.test": "accept"}
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		for host, action := range answer {
			if strings.Contains(req.Params.Message, host+" port") {
				asked.Store(host, req.Params.Message)
				if action == "accept" {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
				}
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	settings := `{"sandbox":{"network":{"allowedDomains":["*.allowed.test","allowed.test","127.0.0.1"],"deniedDomains":["denied.test"]}}}`
	argv := append(append([]string{}, e.User.Wrap...), e.Bin, "serve", "--cwd", e.Work, "--state-dir", e.State, "--permission-mode", "bypassPermissions",
		"--settings", sandboxenv.AllowEverythingHook, "--settings", settings)
	cmd := exec.Command(argv[0], argv[1:]...)
	env := testbin.HermeticEnv(t)
	cmd.Env = append(env, "HOME="+e.Home, sandbox.LayersEnv+"="+layers, "XDG_CONFIG_HOME="+filepath.Join(e.Home, ".config"),
		"AGENT_MCP_CONFIG_DIR="+filepath.Join(e.Home, ".config", "agent-mcp"), "XDG_CACHE_HOME="+filepath.Join(e.Home, ".cache"),
		sandbox.HostsEnv+"=allowed.test=127.0.0.1,other.allowed.test=127.0.0.1,asked.test=127.0.0.1,declined.test=127.0.0.1,denied.test=127.0.0.1")
	cs := testbin.Stdio(t, cmd, opts)

	port := strconv.Itoa(site.port)
	url := func(host, path string) string { return "https://" + host + ":" + port + path }
	curl := "curl -sS --max-time 20 --cacert " + site.caFile + " "
	reached := func(name, command, path string) {
		t.Helper()
		out, _ := testbin.Bash(t, cs, command, false)
		if !strings.Contains(out, "hello from "+path) {
			t.Errorf("%s: %q", name, out)
		}
	}
	reached("curl to an allowed domain", curl+url("allowed.test", "/curl"), "/curl")
	reached("curl to a wildcard-allowed domain", curl+url("other.allowed.test", "/wild"), "/wild")
	reached("curl through SOCKS5", "curl -sS --max-time 20 --cacert "+site.caFile+" --proxy \"$ALL_PROXY\" "+url("allowed.test", "/socks"), "/socks")
	reached("python urllib", `python3 -c "import ssl,urllib.request; c=ssl.create_default_context(cafile='`+site.caFile+`'); print(urllib.request.urlopen('`+url("allowed.test", "/urllib")+`', context=c).read().decode())"`, "/urllib")
	// From a thread other than the main one: with Landlock alone its
	// calls reach the supervisor under the thread's own id.
	reached("python urllib from a thread", `python3 -c "
import ssl, threading, urllib.request
c = ssl.create_default_context(cafile='`+site.caFile+`')
t = threading.Thread(target=lambda: print(urllib.request.urlopen('`+url("allowed.test", "/thread")+`', context=c).read().decode()))
t.start(); t.join()"`, "/thread")
	goClient, err := goHTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	reached("a Go program (net/http)", "SSL_CERT_FILE="+site.caFile+" "+goClient+" "+url("allowed.test", "/go"), "/go")
	out, _ := testbin.Bash(t, cs, "GIT_SSL_CAINFO="+site.caFile+" git clone -q -b main "+url("allowed.test", "/git/r.git")+" cloned && cat cloned/README", false)
	if !strings.Contains(out, "through the proxy") {
		t.Errorf("git clone over HTTPS: %q", out)
	}

	reached("an unlisted domain, accepted", curl+url("asked.test", "/asked"), "/asked")
	if _, ok := asked.Load("asked.test"); !ok {
		t.Error("asked.test went through without a question")
	}
	out, _ = testbin.Bash(t, cs, curl+url("declined.test", "/declined"), false)
	if site.saw("/declined") || !strings.Contains(out, "refused declined.test:"+port) || !strings.Contains(out, "WebFetch(domain:declined.test)") {
		t.Errorf("an unlisted domain, declined: %q", out)
	}
	out, _ = testbin.Bash(t, cs, curl+url("denied.test", "/denied"), false)
	if site.saw("/denied") || !strings.Contains(out, "refused denied.test:"+port) || !strings.Contains(out, `deny rule "denied.test"`) {
		t.Errorf("a denied domain: %q", out)
	}
	if _, ok := asked.Load("denied.test"); ok {
		t.Error("a denied domain was asked about")
	}

	for name, command := range map[string]string{
		"an IP literal, no proxy":       "curl -sS --max-time 5 --noproxy '*' -k https://127.0.0.1:" + port + "/direct-ip",
		"a name, no proxy":              curl + "--max-time 5 --noproxy '*' " + url("allowed.test", "/direct-name"),
		"a direct socket":               `python3 -c "import socket; s=socket.create_connection(('127.0.0.1', ` + port + `), 5); s.sendall(b'GET /direct-socket HTTP/1.0\r\n\r\n'); print(s.recv(100))"`,
		"a direct socket to the world":  `python3 -c "import socket; socket.create_connection(('1.1.1.1', 80), 5); print('CONNECTED')"`,
		"UDP to the host":               `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'leak', ('127.0.0.1', ` + strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port) + `)); print('SENT')"`,
		"DNS":                           `python3 -c "import socket; print(socket.gethostbyname('example.com'))"`,
		"an IP literal through a proxy": "curl -sS --max-time 5 http://1.1.1.1/",
	} {
		out, _ := testbin.Bash(t, cs, command, false)
		if strings.Contains(out, "CONNECTED") || strings.Contains(out, "hello from") || strings.Contains(out, "<html") {
			t.Errorf("%s reached something: %q", name, out)
		}
		if name == "an IP literal through a proxy" && !strings.Contains(out, "WebFetch(domain:1.1.1.1)") {
			t.Errorf("%s: the refusal does not name the rule: %q", name, out)
		}
	}
	if site.saw("/direct") {
		t.Error("a direct connection reached the host's server")
	}
	_ = udp.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _, err := udp.ReadFrom(make([]byte, 16)); err == nil {
		t.Errorf("UDP reached the host: %d bytes", n)
	}
}

// TestEgress_noElicitation: a client that cannot be asked gets a refusal
// naming the rule to add, in the Bash result, and the host sees nothing.
func TestEgress_noElicitation(t *testing.T) {
	t.Parallel()
	sandboxenv.RequireLayers(t, binary, "namespaces")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
	site := newTLSSite(t, filepath.Join(e.Root, "site"), "unlisted.test")
	cs, _ := e.Serve(t, "namespaces,landlock", []string{sandbox.HostsEnv + "=unlisted.test=127.0.0.1"},
		"--settings", `{"sandbox":{"network":{"allowedDomains":["127.0.0.1"]}}}`)
	out, _ := testbin.Bash(t, cs, "curl -sS --max-time 20 --cacert "+site.caFile+" https://unlisted.test:"+strconv.Itoa(site.port)+"/nobody", false)
	if site.saw("/nobody") || !strings.Contains(out, "refused unlisted.test:") || !strings.Contains(out, "nobody can be asked") ||
		!strings.Contains(out, "WebFetch(domain:unlisted.test)") {
		t.Errorf("an unlisted domain without elicitation: %q", out)
	}
}

// TestEgress_backgroundAsks: a background task that connects to an
// unlisted host after its Bash call has returned is asked about through
// the session (MCP elicitation outside any request, over stdio and over
// streamable HTTP's standalone stream): accepted, the request goes
// through; declined, it is refused with the rule named in the task's
// output. On protocol 2026-07-28, which has no channel outside a call,
// it is refused naming the rule.
func TestEgress_backgroundAsks(t *testing.T) {
	t.Parallel()
	sandboxenv.RequireLayers(t, binary, "namespaces")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	for _, c := range []struct {
		name, version string
		http, asked   bool
	}{
		{"stdio", "2025-11-25", false, true},
		{"http", "2025-11-25", true, true},
		{"stdio 2026-07-28", "2026-07-28", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			backgroundAsks(t, c.version, c.http, c.asked)
		})
	}
}

func backgroundAsks(t *testing.T, version string, overHTTP, canAsk bool) {
	e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
	site := newTLSSite(t, filepath.Join(e.Root, "site"), "later-yes.test", "later-no.test")
	var asked sync.Map
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		switch {
		case strings.Contains(req.Params.Message, "later-yes.test port"):
			asked.Store("later-yes.test", req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
		case strings.Contains(req.Params.Message, "later-no.test port"):
			asked.Store("later-no.test", req.Params.Message)
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	argv := []string{"serve", "--cwd", e.Work, "--state-dir", e.State, "--permission-mode", "bypassPermissions",
		"--settings", sandboxenv.AllowEverythingHook, "--settings", `{"sandbox":{"network":{"allowedDomains":["127.0.0.1"]}}}`}
	if overHTTP {
		argv = append(argv, "--http", "--addr", "127.0.0.1:0", "--no-auth")
	}
	cmd := exec.Command(e.Bin, argv...)
	cmd.Env = append(testbin.HermeticEnv(t), "HOME="+e.Home, sandbox.LayersEnv+"=namespaces,landlock",
		sandbox.HostsEnv+"=later-yes.test=127.0.0.1,later-no.test=127.0.0.1")
	var cs *mcp.ClientSession
	if overHTTP {
		cs = testbin.HTTPVersion(t, testbin.StartHTTP(t, cmd), "", opts, version)
	} else {
		cmd.Stderr = os.Stderr
		var err error
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "agent-mcp-test", Version: "1"}, opts).Connect(context.Background(),
			&mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
	}

	curl := "curl -sS --max-time 20 --cacert " + site.caFile + " https://"
	port := strconv.Itoa(site.port)
	// The task waits for the file the test writes once the call has
	// returned: its connections come after the call, never during it.
	command := "while [ ! -e go ]; do sleep 0.05; done; " + curl + "later-yes.test:" + port + "/later-yes; echo; " +
		curl + "later-no.test:" + port + "/later-no"
	out, isErr := call(t, cs, "Bash", map[string]any{"command": command, "run_in_background": true})
	id := regexp.MustCompile(`as task (\S+?)\.`).FindStringSubmatch(out)
	if isErr || id == nil {
		t.Fatalf("no task started: %q", out)
	}
	if err := os.WriteFile(filepath.Join(e.Work, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = call(t, cs, "TaskOutput", map[string]any{"task_id": id[1], "block": true, "timeout": 120000})
	if !canAsk {
		if _, ok := asked.Load("later-yes.test"); ok || site.saw("/later-yes") || !strings.Contains(out, "refused later-yes.test:"+port) ||
			!strings.Contains(out, "cannot be asked outside a call") || !strings.Contains(out, "WebFetch(domain:later-yes.test)") {
			t.Errorf("an unlisted host after the call returned, without a channel to ask (asked: %v): %q", ok, out)
		}
		return
	}
	if _, ok := asked.Load("later-yes.test"); !ok || !strings.Contains(out, "hello from /later-yes") {
		t.Errorf("an unlisted host after the call returned, accepted (asked: %v): %q", ok, out)
	}
	if _, ok := asked.Load("later-no.test"); !ok || site.saw("/later-no") ||
		!strings.Contains(out, "refused later-no.test:"+port) || !strings.Contains(out, "WebFetch(domain:later-no.test)") {
		t.Errorf("an unlisted host after the call returned, declined (asked: %v): %q", ok, out)
	}
}

// TestEgress_chatAsksAtTheTerminal: in chat's terminal UI a command's
// connection to an unlisted host is put to the user, naming the host and
// the port: allowed once, the request goes through; refused, the command
// is told, naming the rule.
func TestEgress_chatAsksAtTheTerminal(t *testing.T) {
	t.Parallel()
	sandboxenv.RequireLayers(t, binary, "namespaces")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	c := newChatRun(t)
	// The site lives outside the home, which is private to commands.
	site := newTLSSite(t, filepath.Join(t.TempDir(), "site"), "chat-yes.test", "chat-no.test")
	port := strconv.Itoa(site.port)
	curl := func(host string) string {
		in, _ := json.Marshal(map[string]string{"command": "curl -sS --max-time 20 --cacert " + site.caFile + " https://" + host + ":" + port + "/" + host})
		return string(in)
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "b1", Name: "Bash", Input: curl("chat-yes.test")}),
		testmodel.Call(testmodel.ToolCall{ID: "b2", Name: "Bash", Input: curl("chat-no.test")}),
		testmodel.Say("Both tried."))
	c.env = append(c.env, sandbox.LayersEnv+"=namespaces,landlock", sandbox.HostsEnv+"=chat-yes.test=127.0.0.1,chat-no.test=127.0.0.1")
	u := startTUI(t, c, "openai", srv, "--permission-mode", "bypassPermissions",
		"--settings", `{"sandbox":{"network":{"allowedDomains":["127.0.0.1"]}}}`)
	u.keys("fetch both\r")
	u.wait("chat-yes.test port " + port)
	u.wait("Choose 1-")
	u.keys("1\r") // yes, for this command
	u.wait("chat-no.test port " + port)
	u.wait("Choose 1-")
	u.keys("3\r") // no
	u.wait("Both tried.")
	msgs := decodeRequest(srv.Requests()[2])
	if out, _, _ := msgs.toolResult("b1"); !strings.Contains(out, "hello from /chat-yes.test") {
		t.Errorf("allowed at the terminal: %q", out)
	}
	if out, _, _ := msgs.toolResult("b2"); site.saw("/chat-no.test") || !strings.Contains(out, "refused chat-no.test:"+port) ||
		!strings.Contains(out, "WebFetch(domain:chat-no.test)") {
		t.Errorf("refused at the terminal: %q", out)
	}
	u.exit()
}

// goHTTPClient is a compiled Go program that GETs its argument with
// net/http (which honours HTTPS_PROXY and SSL_CERT_FILE) and prints the
// body: a client that makes its sockets non-blocking, connects from any
// thread and asks for IPv6 first where it can.
var goHTTPClient = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "agent-mcp-egress-goclient-")
	if err != nil {
		return "", err
	}
	src := `package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	r, err := http.Get(os.Args[1])
	if err != nil {
		fmt.Println("GET failed:", err)
		os.Exit(1)
	}
	b, _ := io.ReadAll(r.Body)
	fmt.Println(string(b))
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module goclient\n\ngo 1.21\n"), 0o644); err != nil {
		return "", err
	}
	gobin, err := sandboxenv.GoBinary()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "goclient")
	cmd := exec.Command(gobin, "build", "-o", out, ".")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the Go client: %v\n%s", err, b)
	}
	return out, os.Chmod(dir, 0o755)
})

// TestEgress_supervisorEndsWithItsCommand: with Landlock alone each
// command's supervisor holds the seccomp listener while the command
// runs and lets it go once every process of it has ended: after many
// commands the server holds no more descriptors than after one.
func TestEgress_supervisorEndsWithItsCommand(t *testing.T) {
	t.Parallel()
	sandboxenv.RequireLayers(t, binary, "landlock")
	if m := supervisorMissing(); m != "" {
		t.Skipf("no supervised egress proxy with Landlock alone here: %s", m)
	}
	e := sandboxenv.New(t, binary, sandboxenv.Users(t)[0])
	cs, cmd := e.Serve(t, "landlock", nil)
	fds := func() int {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	// Each command makes a socket through the supervisor (and a child
	// that outlives the shell a moment holds the filter too).
	const command = `python3 -c "import socket; socket.socket()" && (sleep 0.01 &)`
	if out, isErr := testbin.Bash(t, cs, command, false); isErr {
		t.Fatalf("the first command failed: %s", out)
	}
	after1 := fds()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// Say what the server holds: which kind of descriptor leaked.
		dir := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
		entries, _ := os.ReadDir(dir)
		var held []string
		for _, e := range entries {
			target, _ := os.Readlink(filepath.Join(dir, e.Name()))
			held = append(held, e.Name()+" → "+target)
		}
		t.Logf("the server holds:\n%s", strings.Join(held, "\n"))
	})
	const n = 10
	for range n {
		if out, isErr := testbin.Bash(t, cs, command, false); isErr {
			t.Fatalf("a command failed: %s", out)
		}
	}
	testbin.WaitFor(t, fmt.Sprintf("the supervisors to end: the server to hold fewer than %d descriptors after %d more commands (%d after the first)", after1+n/2, n, after1),
		func() bool {
			// A command's output file is let go when the next one starts,
			// once every process of it has let the output go.
			testbin.Bash(t, cs, "true", false)
			return fds() < after1+n/2
		})
}
