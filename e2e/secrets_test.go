package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/e2e/internal/sandboxenv"
	"github.com/agent-mcp/agent-mcp/internal/testbin"
)

// call runs one tool and returns its text.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return testbin.Text(t, res), res.IsError
}

// TestSecrets_envShowsNoToken: a command run by one HTTP client, in the
// foreground or as a background task, sees neither the server's tokens
// nor the provider and search keys in its environment.
func TestSecrets_envShowsNoToken(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"AGENT_MCP_TOKEN":         "tok-server-aaaa-0123456789",
		"AGENT_MCP_CLIENT_TOKENS": "other=tok-other-bbbb-0123456789",
		"ANTHROPIC_API_KEY":       "key-anthropic-cccc",
		"OPENAI_API_KEY":          "key-openai-dddd",
		"OPENROUTER_API_KEY":      "key-openrouter-eeee",
		"BRAVE_API_KEY":           "key-brave-ffff",
	}
	// KEEP_ME is an ordinary variable the settings name (sandbox.env.allow):
	// it reaches commands, while the secrets, named or not, stay out.
	cmd := testbin.ServeCmd(t, binary, "", "--http", "--addr", "127.0.0.1:0", "--settings", `{"sandbox":{"env":{"allow":["KEEP_ME"]}}}`)
	for k, v := range secrets {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "KEEP_ME=visible")
	url := testbin.StartHTTP(t, cmd)
	cs := httpClient(t, url, secrets["AGENT_MCP_TOKEN"])

	check := func(what, out string) {
		t.Helper()
		if !strings.Contains(out, "KEEP_ME=visible") {
			t.Fatalf("%s: the command's environment lost an ordinary variable: %q", what, out)
		}
		for k, v := range secrets {
			_, tok, found := strings.Cut(v, "=")
			if !found {
				tok = v
			}
			if strings.Contains(out, k+"=") || strings.Contains(out, tok) {
				t.Errorf("%s shows %s: %q", what, k, out)
			}
		}
	}
	out, isErr := call(t, cs, "Bash", map[string]any{"command": "env"})
	if isErr {
		t.Fatalf("env: %s", out)
	}
	check("env", out)

	out, isErr = call(t, cs, "Bash", map[string]any{"command": "env", "run_in_background": true})
	if isErr {
		t.Fatalf("env in the background: %s", out)
	}
	id := regexp.MustCompile(`as task (\S+?)\.`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no task id in %q", out)
	}
	out, _ = call(t, cs, "TaskOutput", map[string]any{"task_id": id[1], "block": true})
	check("a background env", out)
}

// TestSecrets_credentialsMasked: a credential file is refused to Read and
// to a Bash line that names it, and with the namespaces layer a program
// the parser cannot see into reads nothing of it either, nor another
// session's state; an allow rule naming it makes it readable.
func TestSecrets_credentialsMasked(t *testing.T) {
	t.Parallel()
	helper, err := sandboxenv.HelperBinary()
	if err != nil {
		t.Fatal(err)
	}
	const key = "PRIVATE-KEY-0451"
	sandboxenv.ForEachLayers(t, binary, []string{"namespaces", "namespaces,landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		id := filepath.Join(e.Home, ".ssh", "id_ed25519")
		if err := os.MkdirAll(filepath.Dir(id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(id, []byte(key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(e.State, "session-other")
		if err := os.MkdirAll(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, "out.txt"), []byte(key+"-STATE\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if e.User.UID != os.Getuid() {
			for _, p := range []string{filepath.Join(e.Home, ".ssh"), id, other, filepath.Join(other, "out.txt")} {
				if err := os.Lchown(p, e.User.UID, e.User.GID); err != nil {
					t.Fatal(err)
				}
			}
		}
		cs, _ := e.Serve(t, layers, nil)
		out, isErr := call(t, cs, "Read", map[string]any{"file_path": id})
		if !isErr || strings.Contains(out, key) || !strings.Contains(out, "Read(~/.ssh/**)") {
			t.Errorf("Read of the key: %q", out)
		}
		out, _ = testbin.Bash(t, cs, "cat "+id, false)
		if strings.Contains(out, key) || !strings.Contains(out, "Read(~/.ssh/**)") {
			t.Errorf("cat of the key: %q", out)
		}
		for _, p := range []string{id, filepath.Join(other, "out.txt")} {
			out, _ = testbin.Bash(t, cs, helper+" read "+p, false)
			if strings.Contains(out, key) {
				t.Errorf("a program the parser cannot see read %s: %q", p, out)
			}
		}

		allowed, _ := e.Serve(t, layers, nil, "--allowed-tools", "Read(~/.ssh/**)")
		if out, isErr := call(t, allowed, "Read", map[string]any{"file_path": id}); isErr || !strings.Contains(out, key) {
			t.Errorf("Read under Read(~/.ssh/**): %q", out)
		}
		if out, _ := testbin.Bash(t, allowed, "cat "+id, false); !strings.Contains(out, key) {
			t.Errorf("cat under Read(~/.ssh/**): %q", out)
		}
	})
}

// TestSecrets_tokenFileMasked: the server's --token-file is refused to Read
// and to a Bash line that names it, and with the namespaces layer a
// program the parser cannot see into reads nothing of it.
func TestSecrets_tokenFileMasked(t *testing.T) {
	t.Parallel()
	helper, err := sandboxenv.HelperBinary()
	if err != nil {
		t.Fatal(err)
	}
	const token = "token-file-secret-0123456789"
	sandboxenv.ForEachLayers(t, binary, []string{"namespaces,landlock"}, func(t *testing.T, e *sandboxenv.Env, layers string) {
		f := filepath.Join(e.Work, "token.txt")
		if err := os.WriteFile(f, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if e.User.UID != os.Getuid() {
			if err := os.Lchown(f, e.User.UID, e.User.GID); err != nil {
				t.Fatal(err)
			}
		}
		cs, _ := e.Serve(t, layers, nil, "--token-file", f)
		if out, isErr := call(t, cs, "Read", map[string]any{"file_path": f}); !isErr || strings.Contains(out, token) {
			t.Errorf("Read of the token file: %q", out)
		}
		if out, _ := testbin.Bash(t, cs, "cat token.txt", false); strings.Contains(out, token) {
			t.Errorf("cat of the token file: %q", out)
		}
		if out, _ := testbin.Bash(t, cs, helper+` read "$PWD/token.txt"`, false); strings.Contains(out, token) {
			t.Errorf("a program the parser cannot see read the token file: %q", out)
		}
	})
}
