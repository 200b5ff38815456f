package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agent-mcp/agent-mcp/internal/cli"
	// The sandbox's launcher: its init runs before anything else, and when the binary is re-executed as a command's launcher it never returns.
	_ "github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

func main() {
	// SIGHUP (the terminal closing) ends the program as SIGTERM does, so a
	// session's processes are ended with it rather than left behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	os.Exit(cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
