package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// listResults adds the calling session's persisted results to the answer
// of resources/list: each is readable with resources/read until the
// session ends, so a host can offer it to the model or the user. They come
// on the first page, after the server's own resources.
func (s *Server) listResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "resources/list" || err != nil {
			return res, err
		}
		list, ok := res.(*mcp.ListResourcesResult)
		ss, isServer := req.GetSession().(*mcp.ServerSession)
		if !ok || !isServer {
			return res, err
		}
		if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p.Cursor != "" {
			return res, err
		}
		if ts := s.existingSession(ss); ts != nil {
			list.Resources = append(list.Resources, persistedResults(ts)...)
		}
		return list, nil
	}
}

// existingSession returns the tools.Session of an MCP session that has
// made a call, or nil: listing must not create state.
func (s *Server) existingSession(ss *mcp.ServerSession) *tools.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[ss]
}

// persistedResults describes the files in a session's results directory,
// oldest first.
func persistedResults(ts *tools.Session) []*mcp.Resource {
	dir := orchestrator.ResultsDir(ts)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type result struct {
		res *mcp.Resource
		mod int64
	}
	var found []result
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		uri := orchestrator.ResultURIPrefix + e.Name()
		if _, ok := orchestrator.ResultPath(ts, uri); !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		found = append(found, result{&mcp.Resource{
			URI: uri, Name: e.Name(), MIMEType: "text/plain", Size: info.Size(),
			Title:       "Persisted tool result " + strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())),
			Description: "The full text of a tool result that was too large to return inline.",
		}, info.ModTime().UnixNano()})
	}
	slices.SortStableFunc(found, func(a, b result) int {
		if a.mod != b.mod {
			if a.mod < b.mod {
				return -1
			}
			return 1
		}
		return strings.Compare(a.res.Name, b.res.Name)
	})
	out := make([]*mcp.Resource, len(found))
	for i, r := range found {
		out[i] = r.res
	}
	return out
}
