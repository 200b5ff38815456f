package e2e

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// TestRedact_seededSecrets: thirty secrets in the server's environment
// (handed to commands by sandbox.env.allow), ten of them in the
// workspace's .env and three in its git configuration, printed by
// commands in a dozen encodings, read, searched, run in the background
// and saved as a large result: no tool result, structured output or
// persisted file a result points at holds one, as written or encoded.
func TestRedact_seededSecrets(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"python3", "xxd", "od", "base64", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	rng := rand.New(rand.NewPCG(38, 2))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secrets := map[string]string{}
	var names []string
	for i := range 30 {
		v := make([]byte, 24+rng.IntN(24))
		for j := range v {
			v[j] = alnum[rng.IntN(len(alnum))]
		}
		if i%5 == 0 {
			// URL and JSON special characters.
			v = append(v, `/+=@"&?`[i%7], '%', 'x', '/')
		}
		name := fmt.Sprintf("SEED_%02d_TOKEN", i)
		secrets[name] = string(v)
		names = append(names, name)
	}

	ws := t.TempDir()
	var dotenv strings.Builder
	for _, n := range names[:10] {
		fmt.Fprintf(&dotenv, "%s=%s\n", n, secrets[n])
	}
	gitCmds := [][]string{
		{"init", "-q"},
		{"config", "http.extraHeader", "Authorization: Bearer " + secrets[names[10]]},
		{"config", "remote.origin.url", "https://bot:" + secrets[names[11]] + "@git.example.com/r.git"},
		{"config", "user.signingkey", secrets[names[12]]},
	}
	for _, args := range gitCmds {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	writeFiles(t, map[string]string{filepath.Join(ws, ".env"): dotenv.String()})

	cmd := testbin.ServeCmd(t, binary, ws)
	home := ""
	for _, kv := range cmd.Env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	writeFiles(t, map[string]string{filepath.Join(home, ".claude", "settings.json"): `{"sandbox": {"env": {"allow": ["SEED_*"]}}}`})
	for _, n := range names {
		cmd.Env = append(cmd.Env, n+"="+secrets[n])
	}
	cs := testbin.Stdio(t, cmd, nil)

	forms := secretForms(secrets)
	check := func(what, text string) {
		t.Helper()
		flat := strings.Join(strings.Fields(text), "")
		for _, f := range forms {
			if strings.Contains(text, f.form) || strings.Contains(flat, f.form) {
				t.Errorf("%s shows %s (%s): %.300q", what, f.name, f.enc, text)
				return
			}
		}
	}
	run := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", tool, args, err)
		}
		text := testbin.Text(t, res)
		what := fmt.Sprintf("%s %v", tool, args)
		if res.IsError {
			t.Errorf("%s failed: %.500s", what, text)
		}
		check(what, text)
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			check(what+" (structured)", string(b))
		}
		// A persisted result's file.
		if m := regexp.MustCompile(`Full output saved to: (\S+)`).FindStringSubmatch(text); m != nil {
			b, err := os.ReadFile(m[1])
			if err != nil {
				t.Fatalf("%s: the persisted file: %v", what, err)
			}
			check(what+" (persisted file)", string(b))
		}
		return text
	}

	bash := func(c string) string { return run("Bash", map[string]any{"command": c}) }
	var loop strings.Builder
	for _, n := range names {
		fmt.Fprintf(&loop, "%s ", n)
	}
	each := func(body string) string {
		return "for n in " + loop.String() + "; do v=$(printenv $n); " + body + "; echo; done"
	}
	out := bash("env | sort")
	if !strings.Contains(out, "[redacted: SEED_00_TOKEN]") || !strings.Contains(out, "redacted secret values") {
		t.Errorf("env shows no marker or no notice: %.2000s", out)
	}
	bash("env | base64")
	bash("env | base64 -w0")
	bash(each(`printf 'x%s' "$v" | base64 -w0`))
	bash(each(`printf 'xy%s' "$v" | base64 -w0`))
	bash(each(`printf '%s' "$v" | xxd -p`))
	bash(each(`printf '%s' "$v" | xxd -p -u`))
	bash(each(`printf '%s' "$v" | od -An -tx1`))
	bash(each(`python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$v"`))
	bash(each(`python3 -c 'import sys,urllib.parse; print(urllib.parse.quote_plus(sys.argv[1]))' "$v"`))
	bash(each(`python3 -c 'import sys,json; print(json.dumps({"v": sys.argv[1]}))' "$v"`))
	bash(each(`python3 -c 'import sys,base64; print(base64.urlsafe_b64encode(b"z"+sys.argv[1].encode()).decode())' "$v"`))
	bash("cat .env; git config --list --local")
	// Over the result budget: persisted, the secrets past the preview.
	bash("head -c 200000 /dev/zero | tr '\\0' 'a'; echo; env | base64")
	run("Read", map[string]any{"file_path": filepath.Join(ws, ".env")})
	run("Read", map[string]any{"file_path": filepath.Join(ws, ".git", "config")})
	if out := run("Grep", map[string]any{"pattern": "SEED_", "path": filepath.Join(ws, ".env"), "output_mode": "content"}); !strings.Contains(out, "[redacted: SEED_0") {
		t.Errorf("Grep of .env shows no marker: %.1000s", out)
	}

	out = run("Bash", map[string]any{"command": "env | base64; cat .env", "run_in_background": true})
	id := regexp.MustCompile(`as task (\S+?)\.`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no task id in %q", out)
	}
	run("TaskOutput", map[string]any{"task_id": id[1], "block": true})
}

type secretForm struct{ name, enc, form string }

// secretForms are the secrets' encoded forms the redactor claims to
// catch, each cut to a stretch (24 characters from its middle) that only
// the secret produces, whatever surrounded it when it was encoded.
func secretForms(secrets map[string]string) []secretForm {
	var out []secretForm
	for n, v := range secrets {
		add := func(enc, f string) {
			if len(f) > 24 {
				f = f[len(f)/2-12 : len(f)/2+12]
			}
			out = append(out, secretForm{n, enc, f})
		}
		add("plain", v)
		add("hex", hex.EncodeToString([]byte(v)))
		add("HEX", strings.ToUpper(hex.EncodeToString([]byte(v))))
		add("url", url.QueryEscape(v))
		add("url path", url.PathEscape(v))
		j, _ := json.Marshal(v)
		add("json", string(j))
		for _, pre := range []string{"", "x", "xy"} {
			add("base64+"+pre, base64.StdEncoding.EncodeToString([]byte(pre+v)))
			add("base64url+"+pre, base64.URLEncoding.EncodeToString([]byte(pre+v)))
		}
	}
	return out
}

// TestRedact_chatShowsAndSendsTheSameRedactedResult: in chat, a Read of a
// .env holding the value of a secret variable shows the user (the
// stream-json tool result line) and sends the provider the marker, never
// the value.
func TestRedact_chatShowsAndSendsTheSameRedactedResult(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	const secret = "npm_R4sT6vW1yB3dF5hJ7kM0aZx9Kq2"
	if err := os.WriteFile(filepath.Join(c.dir, ".env"), []byte("NPM_TOKEN="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":".env"}`}),
		testmodel.Say("read it"))
	out, errOut, code := c.run(t, "", append(anthropicEnv(), "NPM_TOKEN="+secret),
		"-p", "read .env", "--output-format", "stream-json", "--model", "anthropic/test-model", "--base-url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	sent, _ := json.Marshal(reqs[1].Body["messages"])
	for what, got := range map[string]string{"the terminal": out, "the provider": string(sent)} {
		if strings.Contains(got, secret) || !strings.Contains(got, "[redacted: NPM_TOKEN]") {
			t.Errorf("%s gets %s", what, got)
		}
	}
}
