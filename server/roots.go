// MCP roots are deprecated by SEP-2577 (protocol version 2026-07-28): a
// server should take its paths from tool parameters or its configuration,
// which agent-mcp does (--cwd, --add-dir, additionalDirectories). Roots still
// narrow those directories for clients that send them, so a client can keep
// a session inside the folders it has open; they stay during the deprecation
// window (at least twelve months). Every use of the deprecated API is in
// this file.
//
//lint:file-ignore SA1019 MCP roots are kept on purpose during SEP-2577's deprecation window; see above

package server

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/tools"
)

// watchRoots has the server hear when a client's roots change.
func (s *Server) watchRoots(o *mcp.ServerOptions) { o.RootsListChangedHandler = s.rootsChanged }

// rootsTimeout bounds the wait for a client's roots/list answer.
const rootsTimeout = 10 * time.Second

// rootsState remembers the operator's working directories of a session
// (the widest it may ever have) and whether the client's roots must be
// read again.
type rootsState struct {
	mu    sync.Mutex
	base  []string
	stale bool
}

type rootsKey struct{}

func sessionRoots(ts *tools.Session) *rootsState {
	base := ts.WorkDirs() // read outside Slot, which holds the session's lock
	return ts.Slot(rootsKey{}, func() any { return &rootsState{base: base, stale: true} }).(*rootsState)
}

// applyRoots narrows the session's working directories to the client's
// roots when the client offers roots and they were not read since they
// last changed. It runs in the tools/call handler, before the call, so a
// call never runs with roots the client has withdrawn. Roots only narrow
// the operator's directories: a root outside them is ignored, and if no
// root is inside them the operator's directories stay.
func (s *Server) applyRoots(ctx context.Context, ss *mcp.ServerSession, ts *tools.Session) {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return
	}
	st := sessionRoots(ts)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.stale {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := listRoots(rctx, ss)
	if err != nil {
		s.cfg.Logger.Warn("reading the client's roots", "session", ts.ID(), "err", err)
		return
	}
	st.stale = false
	var paths []string
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			continue
		}
		paths = append(paths, filepath.Clean(u.Path))
	}
	dirs := narrowDirs(st.base, paths)
	ts.SetWorkDirs(dirs)
	conf := confine.New(dirs)
	if !conf.Contains(ts.Cwd()) {
		ts.SetCwd(dirs[0])
	}
	s.cfg.Logger.Info("working directories narrowed to the client's roots", "session", ts.ID(), "dirs", dirs)
}

// narrowDirs intersects the operator's directories with the client's
// roots: a root inside an operator directory is kept, an operator
// directory inside a root is kept, anything else is dropped. With nothing
// in common the operator's directories stay as they are.
func narrowDirs(base, roots []string) []string {
	var out []string
	add := func(d string) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	baseConf := confine.New(base)
	for _, r := range roots {
		real, err := confine.ResolvePath(r)
		if err != nil {
			continue
		}
		if baseConf.Contains(real) {
			add(real)
			continue
		}
		for _, b := range base {
			if confine.Inside(real, b) {
				add(b)
			}
		}
	}
	if len(out) == 0 {
		return slices.Clone(base)
	}
	return out
}

// rootsChanged marks the session's roots to be read again before its next
// call.
func (s *Server) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	s.mu.Lock()
	ts, ok := s.sessions[req.Session]
	s.mu.Unlock()
	if !ok {
		return
	}
	st := sessionRoots(ts)
	st.mu.Lock()
	st.stale = true
	st.mu.Unlock()
}

// listRoots asks the client for its roots: as an input request of the
// call's round trips from protocol 2026-07-28 on, directly before.
func listRoots(ctx context.Context, ss *mcp.ServerSession) (*mcp.ListRootsResult, error) {
	resp, handled, err := viaRoundTrip(ctx, &mcp.ListRootsParams{})
	if !handled {
		return ss.ListRoots(ctx, nil)
	}
	if err != nil {
		return nil, err
	}
	res, ok := resp.(*mcp.ListRootsResult)
	if !ok {
		return nil, fmt.Errorf("the client answered roots/list with %T", resp)
	}
	return res, nil
}
