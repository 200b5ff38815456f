package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// startTasksHTTP serves the built-in tools over HTTP with Bash calls made
// tasks after 100ms and the given task TTL.
func startTasksHTTP(t *testing.T, ttl time.Duration) (*HTTPServer, string) {
	t.Helper()
	dir := t.TempDir()
	pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Name: "agent-mcp", Version: "test",
		Pipeline: &orchestrator.Pipeline{Pool: pool, Permit: permit.New(permit.Options{TrustHost: true})},
		Session:  tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir(), Mode: "bypassPermissions"},
		Tasks:    TaskOptions{TTL: ttl, PollInterval: 50 * time.Millisecond, Tools: map[string]TaskPolicy{"Bash": {Inline: 100 * time.Millisecond}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := serveHTTP(t, srv, HTTPOptions{Addr: "127.0.0.1:0", Token: testToken})
	return h, dir
}

// taskRPC posts one request of a client that accepts tasks and returns the
// JSON-RPC response.
func taskRPC(t *testing.T, h *HTTPServer, method, name string, params map[string]any) map[string]any {
	t.Helper()
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp := newRaw(t, h).request(context.Background(), "POST", string(body),
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name})
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = []byte(strings.TrimSpace(d))
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatalf("%s: %s %q", method, resp.Status, data)
	}
	return msg
}

// TestTasks_lifecycle_in_process: the task layer in the server's own
// process, under the race detector: a Bash call past its window becomes a
// task that completes while several clients poll it, tasks/cancel ends a
// task, and a task past its TTL is forgotten.
func TestTasks_lifecycle_in_process(t *testing.T) {
	t.Parallel()
	h, dir := startTasksHTTP(t, 5*time.Second)
	get := func(id string) map[string]any {
		res, _ := taskRPC(t, h, "tasks/get", id, map[string]any{"taskId": id})["result"].(map[string]any)
		return res
	}
	bash := func(command string) string {
		t.Helper()
		res, _ := taskRPC(t, h, "tools/call", "Bash", map[string]any{"name": "Bash", "arguments": map[string]any{"command": command}})["result"].(map[string]any)
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" {
			t.Fatalf("%s: not a task: %v", command, res)
		}
		return id
	}
	gate := filepath.Join(dir, "gate")
	id := bash(fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done; echo through", gate))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					_ = get(id)
				}
			}
		}()
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var done map[string]any
	testbin.WaitFor(t, "the task to complete", func() bool { done = get(id); return done["status"] == "completed" })
	close(stop)
	wg.Wait()
	if !strings.Contains(fmt.Sprint(done["result"]), "through") {
		t.Fatalf("the completed task: %v", done)
	}

	id = bash("sleep 30")
	if ack := taskRPC(t, h, "tasks/cancel", id, map[string]any{"taskId": id}); ack["result"] == nil {
		t.Fatalf("tasks/cancel: %v", ack)
	}
	if got := get(id); got["status"] != "cancelled" {
		t.Fatalf("after tasks/cancel: %v", got)
	}

	id = bash("sleep 30")
	testbin.WaitFor(t, "the task's TTL to pass", func() bool {
		return taskRPC(t, h, "tasks/get", id, map[string]any{"taskId": id})["error"] != nil
	})
}
