// MCP logging is deprecated by SEP-2577 (protocol version 2026-07-28): a
// server's diagnostics belong in its own log, which agent-mcp writes on
// stderr (serve --log-level). The capability is still declared and tools'
// diagnostics are still sent as notifications/message to clients that set a
// level, during the deprecation window (at least twelve months), because
// hosts show them beside the call. Every use of the deprecated API is in
// this file.
//
//lint:file-ignore SA1019 MCP logging is kept on purpose during SEP-2577's deprecation window; see above

package server

import (
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// declareLogging declares that clients may set a log level.
func declareLogging(c *mcp.ServerCapabilities) { c.Logging = &mcp.LoggingCapabilities{} }

// clientLogger sends a call's diagnostics to the client as log messages.
func clientLogger(ss *mcp.ServerSession) *slog.Logger {
	return slog.New(mcp.NewLoggingHandler(ss, &mcp.LoggingHandlerOptions{LoggerName: "agent-mcp"}))
}
