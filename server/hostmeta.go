package server

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// The _meta keys Claude Code reads on a listed tool (2.1.330 and later).
const (
	// metaAlwaysLoad true: the host offers the tool's schema to the model
	// from the first request instead of deferring it behind its
	// ToolSearch tool.
	metaAlwaysLoad = "anthropic/alwaysLoad"
	// metaSearchHint: words ToolSearch matches besides the name and
	// description.
	metaSearchHint = "anthropic/searchHint"
	// metaMaxResultSizeChars: the largest result the host keeps inline;
	// a longer one it saves to a file of its own and shows the model a
	// preview of (by default over 100,000 characters).
	metaMaxResultSizeChars = "anthropic/maxResultSizeChars"
)

// unboundedResultChars is what a tool without a result budget of
// agent-mcp's (Read: it bounds itself to 25,000 tokens of text) tells
// hosts: the largest value Claude Code accepts, so that it keeps Read's
// result whole as it keeps its own Read's.
const unboundedResultChars = 500_000

// toolMeta is t's _meta for tools/list: what hosts that defer tools and
// save long results need to know. deferTools leaves out alwaysLoad, so a
// host with many servers may defer agent-mcp's tools too.
func toolMeta(t *tools.Tool, deferTools bool) mcp.Meta {
	m := mcp.Meta{}
	if t.SearchHint != "" {
		m[metaSearchHint] = t.SearchHint
	}
	if t.Core && !deferTools {
		m[metaAlwaysLoad] = true
	}
	switch {
	case t.MaxResultSizeChars > 0:
		// agent-mcp already saved anything longer and sent the preview:
		// the host need not save the preview again.
		m[metaMaxResultSizeChars] = t.MaxResultSizeChars
	case t.MaxResultSizeChars == tools.Unlimited:
		m[metaMaxResultSizeChars] = unboundedResultChars
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
