//go:build !windows

package upstream

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
	"github.com/agent-mcp/agent-mcp/tools"
)

// TestManager_stdio_server_has_its_own_process_group: Ctrl-C at chat's
// terminal signals the foreground process group; a stdio server started
// in chat's group would get that SIGINT and die with the cancelled turn.
func TestManager_stdio_server_has_its_own_process_group(t *testing.T) {
	t.Parallel()
	cmd, args, env := testmodel.UpstreamStdio()
	m := Start(context.Background(), []ServerConfig{{Name: "s", Type: "stdio", Command: cmd, Args: args, Env: env}},
		Options{ConnectTimeout: 20 * time.Second})
	defer m.Close()
	var pidTool *tools.Tool
	for _, tl := range m.Tools() {
		if tl.Name == "mcp__s__pid" {
			pidTool = tl
		}
	}
	if pidTool == nil {
		t.Fatalf("no pid tool; status %+v", m.Status())
	}
	in, _ := pidTool.Decode(json.RawMessage(`{}`))
	res, err := in.Call(context.Background(), &tools.UseContext{}, nil)
	if err != nil || res.IsError {
		t.Fatalf("pid = %+v, %v", res, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Text))
	if err != nil {
		t.Fatalf("pid answer %q: %v", res.Text, err)
	}
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if pgid == syscall.Getpgrp() || pgid != pid {
		t.Errorf("the server (pid %d) is in process group %d, ours is %d; want a group of its own", pid, pgid, syscall.Getpgrp())
	}
}
