package shell

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/sandbox"
	"github.com/agent-mcp/agent-mcp/sandbox/egress"
	"github.com/agent-mcp/agent-mcp/tools"
)

// networkAskTimeout bounds a question about a host; no answer refuses.
const networkAskTimeout = 5 * time.Minute

type egressGrantsKey struct{}

type proxiedKey struct{}

// proxied are the session's commands whose network goes through the
// egress proxy, each in a network namespace of its own: a connection to
// localhost is looked for in the connecting command's namespace, then in
// theirs, newest first.
type proxied struct {
	mu       sync.Mutex
	launches []*sandbox.Launch
}

func proxiedOf(s *tools.Session) *proxied {
	return s.Slot(proxiedKey{}, func() any { return &proxied{} }).(*proxied)
}

// add records l, dropping the commands that have ended.
func (p *proxied) add(l *sandbox.Launch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	live := p.launches[:0]
	for _, x := range p.launches {
		if x.Alive() {
			live = append(live, x)
		}
	}
	p.launches = append(live, l)
}

// dial connects to port on the loopback of own, else of the newest other
// running command that has something listening there.
func (p *proxied) dial(ctx context.Context, own *sandbox.Launch, port int) (net.Conn, error) {
	p.mu.Lock()
	order := []*sandbox.Launch{own}
	for i := len(p.launches) - 1; i >= 0; i-- {
		if l := p.launches[i]; l != own && l.Alive() {
			order = append(order, l)
		}
	}
	p.mu.Unlock()
	var err error
	for _, l := range order {
		if l == nil {
			continue
		}
		var c net.Conn
		if c, err = l.DialLoopback(ctx, port); err == nil {
			return c, nil
		}
	}
	if err == nil {
		err = errors.New("no command is running")
	}
	return nil, err
}

// egressGrants are the hosts the session's user allowed for the session.
func egressGrants(s *tools.Session) *egress.Grants {
	return s.Slot(egressGrantsKey{}, func() any { return &egress.Grants{} }).(*egress.Grants)
}

// laterKey holds a session's context for questions put after the call
// that started a command has returned.
type laterKey struct{}

// sessionContext lives as long as its session (the session's Close
// cancels it, as it does every slot with a Close method). A question put
// outside a call must not derive from the call's context: that one names
// the finished request, and MCP would route the question to its closed
// stream.
type sessionContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (c *sessionContext) Close() { c.cancel() }

func laterContext(s *tools.Session) context.Context {
	return s.Slot(laterKey{}, func() any {
		ctx, cancel := context.WithCancel(context.Background())
		return &sessionContext{ctx: ctx, cancel: cancel}
	}).(*sessionContext).ctx
}

// egressFor is the egress proxy's handler for one command, when its
// network goes through the proxy: the sandbox's domain rules, the
// session's grants, and a question to the user through the call's asker
// (MCP elicitation, or the terminal in chat). While the call that started
// the command runs the question goes with the call; once it has returned
// (a background task) it goes to the session through uc.LaterAsker, and
// where there is none the connection is refused, naming the rule.
func egressFor(ctx context.Context, sb *sandbox.Sandbox, uc *tools.UseContext, command string) *egress.Handler {
	if sb.Network() != sandbox.NetProxy {
		return nil
	}
	h := &egress.Handler{Rules: sb.EgressRules(), Hosts: sb.EgressHosts(), Session: egressGrants(uc.Session)}
	asker, later := uc.Asker, uc.LaterAsker
	if asker == nil {
		return h
	}
	callID, dir, sess := uc.CallID, uc.Dir(), uc.Session
	h.Ask = func(_ context.Context, host string, port int) (egress.Answer, error) {
		a, qctx, when := asker, ctx, ""
		if ctx.Err() != nil {
			if later == nil {
				return egress.Refuse, errors.New("the call that started the command has returned, and this client cannot be asked outside a call")
			}
			a, qctx, when = later, laterContext(sess), " (a background command: the call that started it has returned)"
		}
		q := &tools.PermissionQuestion{
			Tool: "Bash", CallID: callID, Command: command, Dir: dir,
			URL:    net.JoinHostPort(host, strconv.Itoa(port)),
			Reason: fmt.Sprintf("The command connects to %s port %d, which no rule allows (sandbox.network.allowedDomains or WebFetch(domain:%s))%s.", host, port, host, when),
			Rule:   "WebFetch(domain:" + host + ")",
			Choices: []tools.PermissionChoice{
				{ID: tools.ChoiceAllowOnce, Label: "Yes, for this command"},
				{ID: tools.ChoiceAllowSession, Label: "Yes, and don't ask again this session for " + host},
				{ID: tools.ChoiceDeny, Label: "No"},
			},
		}
		ans, err := askWithin(qctx, a, q)
		if err != nil && when == "" && ctx.Err() != nil && later != nil {
			// The call returned while its question was open, which ended
			// the question: put it again to the session.
			q.Reason = strings.TrimSuffix(q.Reason, ".") + " (a background command: the call that started it has returned)."
			ans, err = askWithin(laterContext(sess), later, q)
		}
		if err != nil {
			return egress.Refuse, err
		}
		switch ans.Choice {
		case tools.ChoiceAllowOnce:
			return egress.AllowOnce, nil
		case tools.ChoiceAllowSession:
			return egress.AllowSession, nil
		}
		return egress.Refuse, nil
	}
	return h
}

// askWithin puts q to a, waiting at most networkAskTimeout.
func askWithin(ctx context.Context, a tools.Asker, q *tools.PermissionQuestion) (tools.PermissionAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, networkAskTimeout)
	defer cancel()
	return tools.AskPermission(ctx, a, q)
}

// networkSentence is the Bash description's sentence on the network, so
// that the model expects a question (or a refusal) for a new host.
func networkSentence(sb *sandbox.Sandbox) string {
	switch sb.Network() {
	case sandbox.NetProxy:
		return "Network: commands reach the network only through a proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set; programs that ignore them get no network): allowed domains connect, and a connection to any other host is put to the user, or refused with the rule that would allow it, which the output then names in one line. The host's own loopback (a local database or dev server) is reached only on the ports sandbox.network.allowedDomains names (\"localhost:5432\"); localhost otherwise reaches servers this session's own commands run."
	case sandbox.NetOff:
		return "Network: commands have no network access (only a private loopback)."
	}
	return ""
}

// loopbackFor is the egress handler's Loopback for the command l of sess:
// connections to localhost reach its own loopback, or another running
// command's.
func loopbackFor(sess *tools.Session, l *sandbox.Launch) func(context.Context, int) (net.Conn, error) {
	reg := proxiedOf(sess)
	return func(ctx context.Context, port int) (net.Conn, error) { return reg.dial(ctx, l, port) }
}
