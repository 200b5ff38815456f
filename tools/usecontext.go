package tools

import (
	"context"
	"log/slog"
)

// UseContext is what a tool call may use besides its input: the session,
// and ways to reach the person and the model behind the client.
type UseContext struct {
	Session *Session
	// Asker reaches the user (MCP elicitation, or the terminal in chat);
	// nil when nobody can be asked.
	Asker Asker
	// LaterAsker reaches the user after the call has returned, for work
	// the call left running (a background command's question about a
	// new host): MCP elicitation over the session outside any request,
	// or the terminal in chat. Nil when nothing can: the client cannot
	// be asked, or its protocol has no channel outside a call.
	LaterAsker Asker
	// Sampler reaches a language model (MCP sampling, or chat's model);
	// nil when none is available.
	Sampler Sampler
	// SubAgents runs sub-agents for the Agent tool (chat's model, or MCP
	// sampling with tools); nil when sub-agents cannot run.
	SubAgents SubAgentRunner
	// Logger goes to MCP logging in the server and to stderr in chat.
	Logger *slog.Logger
	// CallID identifies this call (the model's tool_use id or the request id).
	CallID string
	// Resolved maps each path the permission check judged for this call
	// (absolute and clean, as the call names it) to where it led at that
	// moment, every symbolic link resolved (permissions.Decision.Resolved).
	// Tools that open those paths afterwards pass it to
	// confine.OpenRead, which refuses a path that now leads elsewhere
	// outside the working directories. Nil when no check of paths ran.
	Resolved map[string]string
	// Cwd is the directory this call's relative paths resolve against,
	// fixed by the pipeline when it decides the call's permission (under
	// the session's gate), so that a concurrent cd cannot make the tool
	// open another file than the one judged. Empty means the session's
	// current directory.
	Cwd string
	// ReadDenied reports whether a Read deny rule covers a path (absolute
	// and clean) the call comes upon below what it was allowed to read:
	// Grep, Glob and LS skip such paths and say how many they skipped.
	// Nil when no rule denies reading.
	ReadDenied func(abs string, isDir bool) bool
	// Detach, when set, is called by a tool whose call goes on by itself
	// from now on (an upstream MCP server made it a task): the calls the
	// turn queued behind it may start while it runs, and the turn still
	// waits for its result. Calling it again does nothing; a detached
	// call's result changes no session state (its modifier is not
	// applied). Nil when nothing waits behind the call.
	Detach func()
}

// Dir is the directory the call's relative paths resolve against:
// [UseContext.Cwd] when the pipeline fixed it, else the session's.
func (uc *UseContext) Dir() string {
	if uc.Cwd != "" {
		return uc.Cwd
	}
	return uc.Session.Cwd()
}

// Resolve is [Session.Resolve] against [UseContext.Dir]: "~/" expands
// to the home directory and relative paths resolve against the call's
// directory.
func (uc *UseContext) Resolve(p string) string {
	return resolveIn(uc.Dir(), p)
}

// Log returns the context's logger, or a discarding one.
func (uc *UseContext) Log() *slog.Logger {
	if uc == nil || uc.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return uc.Logger
}

// Asker asks the user a structured question.
type Asker interface {
	// Ask shows message and a form described by schema (a JSON Schema object
	// of primitive properties, as MCP elicitation defines) and returns the
	// user's answer.
	Ask(ctx context.Context, message string, schema map[string]any) (Answer, error)
}

// Answer is the user's reply to Ask.
type Answer struct {
	// Action is "accept", "decline" or "cancel".
	Action  string
	Content map[string]any
}

// Sampler asks a language model for a completion.
type Sampler interface {
	// Sample sends a system prompt and one user message and returns the
	// model's text answer.
	Sample(ctx context.Context, system, user string, maxTokens int) (string, error)
}
