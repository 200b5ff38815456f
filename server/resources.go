package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Persisted results as resources.
//
// A result too large to return inline is saved in its session's results
// directory and linked from the call's content. Each one is also
// registered as a resource of the go-sdk server, so that resources/list
// shows it (with its name, size and MIME type) and the SDK tells clients
// the list changed: a host that listed the resources when it connected,
// as Claude Code does, lists them again and can offer the new one to the
// model. The registrations are the server's, but a result belongs to one
// session: resources/list shows each session only its own, resources/read
// serves only the caller's (readResult resolves the URI inside the calling
// session's directory), and a session's results are unregistered when it
// ends, with its files.

// publishResult registers a persisted result of ts as a resource.
func (s *Server) publishResult(ts *tools.Session, p *orchestrator.Persisted, tool string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.resultOwner == nil {
		s.resultOwner = map[string]*tools.Session{}
		s.resultsOf = map[*tools.Session][]string{}
	}
	s.resultOwner[p.URI] = ts
	s.resultsOf[ts] = append(s.resultsOf[ts], p.URI)
	s.mu.Unlock()
	s.mcp.AddResource(&mcp.Resource{
		URI: p.URI, Name: p.Name, MIMEType: "text/plain", Size: p.Size,
		Title:       "Full output of a " + tool + " call",
		Description: "The full text of a " + tool + " result that was too large to return inline; readable until the session ends.",
	}, s.readResult)
}

// unpublishResults unregisters every persisted result of ts.
func (s *Server) unpublishResults(ts *tools.Session) {
	s.mu.Lock()
	uris := s.resultsOf[ts]
	delete(s.resultsOf, ts)
	for _, u := range uris {
		delete(s.resultOwner, u)
	}
	s.mu.Unlock()
	if len(uris) > 0 {
		s.mcp.RemoveResources(uris...)
	}
}

// listResults narrows the answer of resources/list to the calling
// session's persisted results (besides any resource that is not one). The
// list is per session, so it is marked private to caches.
func (s *Server) listResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "resources/list" || err != nil {
			return res, err
		}
		list, ok := res.(*mcp.ListResourcesResult)
		if !ok {
			return res, err
		}
		var mine *tools.Session
		if name := principalOf(req.GetExtra()); name != "" {
			mine = s.principalState(name)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		s.mu.Lock()
		if mine == nil {
			mine = s.sessions[ss]
		}
		kept := []*mcp.Resource{}
		for _, r := range list.Resources {
			if owner, isResult := s.resultOwner[r.URI]; !isResult || (mine != nil && owner == mine) {
				kept = append(kept, r)
			}
		}
		s.mu.Unlock()
		list.Resources = kept
		list.CacheScope = "private"
		return list, nil
	}
}
