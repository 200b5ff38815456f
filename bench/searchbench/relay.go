package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayCall is one line relay reads: a tool call to make.
type relayCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// relayAnswer is one line relay writes: the first, once the server has
// answered initialize, gives only PID; each later one a call's result and
// the time the client took for it, from CallTool's start to its return
// (the request written, the response read and decoded).
type relayAnswer struct {
	PID    int                 `json:"pid,omitempty"`
	MS     float64             `json:"ms,omitempty"`
	Result *mcp.CallToolResult `json:"result,omitempty"`
	Error  string              `json:"error,omitempty"`
}

// relay starts `bin serve --cwd tree` under a go-sdk client (as a host
// built on that SDK starts it) and makes the tool calls read from in, one
// JSON object a line, writing each result and its time to out: the go-sdk
// client's view for bench/scale.py, which times the server beside ripgrep
// and its own raw client.
func relay(bin, tree string, in io.Reader, out io.Writer) error {
	ctx := context.Background()
	server := exec.Command(bin, "serve", "--cwd", tree)
	server.Dir = tree
	server.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "searchbench-relay", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		return fmt.Errorf("starting %s serve: %w", bin, err)
	}
	defer cs.Close()
	enc := json.NewEncoder(out)
	if err := enc.Encode(relayAnswer{PID: server.Process.Pid}); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var call relayCall
		if err := json.Unmarshal(sc.Bytes(), &call); err != nil {
			return fmt.Errorf("relay: a line that is no call: %w", err)
		}
		t := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.Name, Arguments: call.Arguments})
		ans := relayAnswer{MS: float64(time.Since(t).Microseconds()) / 1000, Result: res}
		if err != nil {
			ans.Error = err.Error()
		}
		if err := enc.Encode(ans); err != nil {
			return err
		}
	}
	return sc.Err()
}
