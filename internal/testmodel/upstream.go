package testmodel

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// UpstreamEnv is the variable that makes a test binary run the upstream
// MCP test server on stdio instead of its tests (see [RunUpstreamIfAsked]).
const UpstreamEnv = "AGENT_MCP_TEST_UPSTREAM"

// EchoIn is the input of the upstream "echo" tool.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// AddIn is the input of the upstream "add" tool.
type AddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// SlowIn is the input of the upstream "slow" tool.
type SlowIn struct {
	Ms int `json:"ms"`
}

type empty struct{}

// UpstreamServer builds the upstream MCP test server. Its tools:
//   - echo {text}: read-only, answers "echo: <text>"
//   - pid {}: read-only, answers the server's process id
//   - add {a, b}: not read-only, answers the sum
//   - slow {ms}: read-only, sleeps (honouring cancellation), answers "slept"
//   - crash {}: ends the server process (meant for stdio)
//   - grow {}: adds a tool "extra" and so sends tools/list_changed
func UpstreamServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream-test", Version: "1.0.0"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Report the server's process id.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two integers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in AddIn) (*mcp.CallToolResult, map[string]int, error) {
			return nil, map[string]int{"sum": in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sleep for ms milliseconds.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SlowIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "End the server process."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "upstream-test: crashing on request")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Add the tool extra."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "extra", Description: "A tool added at run time.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				func(_ context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
					return text("extra"), nil, nil
				})
			return text("grown"), nil, nil
		})
	return s
}

// RunUpstreamIfAsked runs the upstream test server on stdin/stdout and
// exits when [UpstreamEnv] is set; otherwise it returns at once. Call it
// first thing in TestMain so a test can start its own binary as a stdio
// MCP server.
func RunUpstreamIfAsked() {
	if os.Getenv(UpstreamEnv) != "1" {
		return
	}
	err := UpstreamServer().Run(context.Background(), &mcp.StdioTransport{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream-test:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// UpstreamStdio returns the command, arguments and environment that start
// the upstream test server over stdio from the running test binary.
func UpstreamStdio() (command string, args []string, env map[string]string) {
	return os.Args[0], []string{"-test.run=^$"}, map[string]string{UpstreamEnv: "1"}
}

// NewUpstreamHTTP serves the upstream test server over streamable HTTP on
// 127.0.0.1 and returns its URL; it stops when the test ends.
func NewUpstreamHTTP(t TB) string {
	t.Helper()
	srv := UpstreamServer()
	return serveLocal(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

// NewUpstreamSSE serves the upstream test server over the older SSE
// transport on 127.0.0.1 and returns its URL.
func NewUpstreamSSE(t TB) string {
	t.Helper()
	srv := UpstreamServer()
	return serveLocal(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

func serveLocal(t TB, h http.Handler) string {
	hs := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Errorf("testmodel: listen: %v", err)
		return ""
	}
	hs.Listener = l
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL
}
