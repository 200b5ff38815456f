package lsp_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agent-mcp/agent-mcp/tools/lsp"
)

// stubEnv, set in the environment, makes the test binary a language
// server that answers initialize and shutdown and never publishes
// diagnostics.
const stubEnv = "AGENT_MCP_LSP_TEST_STUB"

func TestMain(m *testing.M) {
	if os.Getenv(stubEnv) == "silent" {
		silentServer()
		return
	}
	os.Exit(m.Run())
}

func silentServer() {
	ctx := context.Background()
	stream := jsonrpc2.NewBufferedStream(stdio{}, jsonrpc2.VSCodeObjectCodec{})
	conn := jsonrpc2.NewConn(ctx, stream, jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		switch req.Method {
		case "initialize":
			return map[string]any{"capabilities": map[string]any{"textDocumentSync": 1}}, nil
		case "exit":
			os.Exit(0)
		}
		return nil, nil
	}))
	<-conn.DisconnectNotify()
}

type stdio struct{}

func (stdio) Read(b []byte) (int, error)  { return os.Stdin.Read(b) }
func (stdio) Write(b []byte) (int, error) { return os.Stdout.Write(b) }
func (stdio) Close() error                { return nil }

// A server that never reports costs an edit at most the bounded wait, and
// the result says it gave up.
func TestSilentServerGivesUpAfterTheWait(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	silent := lsp.ServerConfig{Name: "silent", Command: self, Path: self, Source: "test",
		ExtensionToLanguage: map[string]string{".txt": "plaintext"}, Env: map[string]string{stubEnv: "silent"}}
	const wait = 200 * time.Millisecond
	svc := lsp.New(lsp.Options{Servers: []lsp.ServerConfig{silent}, DiagnosticsWait: wait})
	e := lspEnv(t, svc)
	put(t, e.Dir(), "f.txt", "one\n")
	e.OK("Read", map[string]any{"file_path": "f.txt"})
	start := time.Now()
	res := e.OK("Edit", map[string]any{"file_path": "f.txt", "old_string": "one", "new_string": "two"})
	took := time.Since(start)
	if !strings.Contains(res.Text, "(Diagnostics not checked: the language server "+self+" had not reported on this change after 1s") {
		t.Errorf("the result does not say it gave up (cold: five times the wait):\n%s", res.Text)
	}
	if e.Session.Close() != nil || took < 5*wait {
		t.Errorf("took %s, less than the cold wait %s", took, 5*wait)
	}
}
