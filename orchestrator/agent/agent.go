package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Events receive what happens during a turn; every field is optional.
// ToolStart, ToolProgress and ToolEnd may be called from several
// goroutines at once (parallel calls).
type Events struct {
	// Text receives streamed assistant text.
	Text func(delta string)
	// ToolStart is called when a call starts running.
	ToolStart func(call orchestrator.Call)
	// ToolProgress receives a running call's progress.
	ToolProgress func(callID string, u tools.ProgressUpdate)
	// ToolEnd is called with each call's outcome.
	ToolEnd func(out orchestrator.Outcome)
	// Message is called with each message added to the conversation (the
	// assistant's responses and the tool results), for stream-json.
	Message func(m llm.Message)
	// Notice receives remarks for the user (context cleared, pool changed).
	Notice func(msg string)
	// Retry is told about each retry of a failed model call, before its
	// wait ("Retrying in 4s, attempt 3/10").
	Retry func(llm.RetryInfo)
	// Thinking receives the model's extended thinking as it streams.
	Thinking func(delta string)
	// Usage receives the tokens of the run (one Run: the prompt's model
	// calls) so far, each time the provider reports a call's usage while
	// it streams: the finished calls' totals plus the current call's
	// report.
	Usage func(run llm.Usage)
	// CallUsage receives the current model call's own usage, each time
	// the provider reports it: what the context holds now (a gauge of the
	// context window reads this, not the run's sum).
	CallUsage func(call llm.Usage)
}

// defaultContextWindow is the context size assumed when Options sets none.
const defaultContextWindow = 128_000

// Options configure an Agent.
type Options struct {
	// Model answers the agent's turns: a provider client in chat, the MCP
	// client's model (through sampling) for the server's sub-agents.
	Model llm.Model
	// Pipeline runs the tool calls; its Pool is what the model is offered.
	Pipeline *orchestrator.Pipeline
	// UseContext is the template for each call: Session, Asker, Sampler,
	// SubAgents, Logger.
	UseContext tools.UseContext
	// System is the system prompt.
	System string
	// MaxTurns bounds the model calls of one Run; 0 means no limit.
	MaxTurns int
	// MaxTokens is each call's output budget; 0 means the provider's default.
	MaxTokens int
	// ContextWindow is the model's context size in tokens; 0 means
	// defaultContextWindow.
	ContextWindow int
	// Refresh, if set, is called before each model call; it returns a new
	// pool when the upstream tools changed, else nil.
	Refresh func() *orchestrator.Pool
	// ThinkingBudget, when positive, asks models that support it for
	// extended thinking with this many tokens (see SetThinking).
	ThinkingBudget int
	// Store, if set, receives every message (conversation persistence).
	Store  *Conversation
	Events Events
	Logger *slog.Logger
}

// Agent runs a conversation: it sends the history and the pool's tools to
// the model, runs the tool calls through the pipeline while the response
// streams, and sends the results back until the model ends its turn.
type Agent struct {
	cfg Options

	mu       sync.Mutex
	messages []llm.Message
	usage    llm.Usage
	// runUsage sums the finished model calls of the current Run.
	runUsage llm.Usage
	// context is the tokens of the last model call's context: its input
	// (cached or not) and its output, which the next call's input holds.
	context int64
}

// ContextWindow is the model's context size in tokens.
func (a *Agent) ContextWindow() int { return a.cfg.ContextWindow }

// ContextUsed is how many tokens of the context window the conversation
// filled at the last model call (its input and output, as the provider
// reported them); 0 before the first.
func (a *Agent) ContextUsed() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.context
}

// New makes an agent with an empty conversation.
func New(cfg Options) (*Agent, error) {
	if cfg.Model == nil || cfg.Pipeline == nil || cfg.Pipeline.Pool == nil {
		return nil, errors.New("agent: a model and a pipeline with a pool are required")
	}
	if cfg.UseContext.Session == nil {
		return nil, errors.New("agent: a session is required")
	}
	if cfg.ContextWindow <= 0 {
		cfg.ContextWindow = defaultContextWindow
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Agent{cfg: cfg}, nil
}

// Messages returns a copy of the conversation.
func (a *Agent) Messages() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]llm.Message(nil), a.messages...)
}

// SetMessages replaces the conversation (resuming a saved one); how full
// the context is stays unknown until the next model call.
func (a *Agent) SetMessages(ms []llm.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.context = 0
	a.messages = append([]llm.Message(nil), ms...)
}

// Usage is the token usage summed over the agent's model calls.
func (a *Agent) Usage() llm.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage
}

// SetModel switches the model for the calls that follow (/model).
func (a *Agent) SetModel(m llm.Model) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg.Model = m
}

// SetThinking sets the extended thinking budget of the calls that follow
// (0 turns it off).
func (a *Agent) SetThinking(budget int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg.ThinkingBudget = budget
}

// Thinking is the extended thinking budget (0: off).
func (a *Agent) Thinking() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.ThinkingBudget
}

func (a *Agent) model() llm.Model {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.Model
}

// Pipeline is the pipeline the agent runs calls through.
func (a *Agent) Pipeline() *orchestrator.Pipeline { return a.cfg.Pipeline }

// SetStore switches persistence to c (after /clear starts a new one).
func (a *Agent) SetStore(c *Conversation) { a.cfg.Store = c }

// Store is the conversation being persisted, or nil.
func (a *Agent) Store() *Conversation { return a.cfg.Store }

// Result is the outcome of one Run.
type Result struct {
	// Text is the assistant's text in its last response.
	Text string
	// Turns is how many model calls the run made.
	Turns int
	// Usage sums the run's model calls.
	Usage llm.Usage
	// Stop is the last response's stop reason.
	Stop llm.StopReason
}

// ErrMaxTurns is returned (wrapped) when a run reaches MaxTurns while the
// model still wants to call tools.
var ErrMaxTurns = errors.New("reached the maximum number of turns")

// Run adds prompt as a user message and runs the loop until the model
// ends its turn, MaxTurns is reached, or ctx is cancelled. On cancellation
// the conversation stays consistent: every tool call gets a result.
func (a *Agent) Run(ctx context.Context, prompt string) (*Result, error) {
	if err := a.append(llm.Message{Role: llm.User, Content: []llm.Block{llm.Text(prompt)}}); err != nil {
		return nil, err
	}
	res := &Result{}
	a.mu.Lock()
	a.runUsage = llm.Usage{}
	a.mu.Unlock()
	compacted := false
	for {
		if a.cfg.MaxTurns > 0 && res.Turns >= a.cfg.MaxTurns {
			return res, fmt.Errorf("%w (%d)", ErrMaxTurns, a.cfg.MaxTurns)
		}
		if a.cfg.Refresh != nil {
			if pool := a.cfg.Refresh(); pool != nil {
				a.cfg.Pipeline.Pool = pool
			}
		}
		if err := a.manageContext(ctx); err != nil {
			a.cfg.Logger.Warn("managing the context", "err", err)
		}
		res.Turns++
		resp, outs, err := a.step(ctx)
		if errors.Is(err, llm.ErrContextTooLong) && !compacted && ctx.Err() == nil {
			// Once per run: make room and make the call again.
			compacted = true
			changed, cerr := a.compactForRetry(ctx)
			if cerr != nil {
				a.cfg.Logger.Warn("compacting after a context-length error", "err", cerr)
			}
			if changed {
				resp, outs, err = a.step(ctx)
			}
		}
		if resp != nil {
			res.Usage = res.Usage.Add(resp.Usage)
			res.Stop = resp.Stop
			res.Text = resp.Message.TextOf()
		}
		if err != nil {
			if resp == nil {
				// A call cut short counts what the provider reported.
				a.mu.Lock()
				res.Usage = a.runUsage
				a.mu.Unlock()
			}
			return res, err
		}
		if len(outs) == 0 {
			return res, nil
		}
		if ctx.Err() != nil {
			// The tools' results end the conversation: an assistant turn
			// follows, so the next prompt does not make two user messages
			// in a row.
			_ = a.append(llm.Message{Role: llm.Assistant, Content: []llm.Block{llm.Text(interruptedMarker)}})
			return res, ctx.Err()
		}
	}
}

// interruptedMarker ends an assistant turn the user interrupted.
const interruptedMarker = "[Interrupted by the user]"

// step makes one model call and runs its tool calls. It returns the
// outcomes (none when the model ended its turn).
func (a *Agent) step(ctx context.Context) (*llm.Response, []orchestrator.Outcome, error) {
	req := a.request()
	uc := a.cfg.UseContext
	ex := a.cfg.Pipeline.NewExecutor(ctx, &uc, orchestrator.CallEvents{
		Start: a.cfg.Events.ToolStart, Progress: a.cfg.Events.ToolProgress, End: a.cfg.Events.ToolEnd,
	})
	var seen int
	var partial strings.Builder
	// reported is the call's usage as the provider last reported it while
	// streaming: all that is known of a call cut short.
	var reported llm.Usage
	h := llm.Handler{
		OnText: func(d string) {
			partial.WriteString(d)
			if a.cfg.Events.Text != nil {
				a.cfg.Events.Text(d)
			}
		},
		OnThinking: a.cfg.Events.Thinking,
		OnUsage: func(u llm.Usage) {
			reported = u
			if a.cfg.Events.CallUsage != nil {
				a.cfg.Events.CallUsage(u)
			}
			if a.cfg.Events.Usage != nil {
				a.mu.Lock()
				run := a.runUsage.Add(u)
				a.mu.Unlock()
				a.cfg.Events.Usage(run)
			}
		},
		OnRetry: func(r llm.RetryInfo) {
			if r.Discarded {
				partial.Reset()
			}
			if a.cfg.Events.Retry != nil {
				a.cfg.Events.Retry(r)
			}
		},
		OnToolUse: func(b llm.Block) {
			seen++
			ex.Add(orchestrator.Call{ID: b.ID, Name: b.Name, Input: b.Input})
		},
	}
	resp, err := a.model().Stream(ctx, req, h)
	if err != nil {
		// The tokens the provider reported were spent all the same: they
		// count in the totals (and /cost).
		a.mu.Lock()
		a.usage = a.usage.Add(reported)
		a.runUsage = a.runUsage.Add(reported)
		a.mu.Unlock()
		// The response is lost: stop what it started and drop it.
		if seen > 0 {
			ex.Wait()
		}
		if ctx.Err() != nil {
			// Interrupted: what the user saw of the reply is kept, marked.
			text := strings.TrimSpace(partial.String())
			if text != "" {
				text += "\n\n"
			}
			if aerr := a.append(llm.Message{Role: llm.Assistant, Content: []llm.Block{llm.Text(text + interruptedMarker)}}); aerr != nil {
				a.cfg.Logger.Warn("saving the interrupted reply", "err", aerr)
			}
		}
		return nil, nil, err
	}
	a.mu.Lock()
	a.usage = a.usage.Add(resp.Usage)
	a.runUsage = a.runUsage.Add(resp.Usage)
	u := resp.Usage
	a.context = u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens
	a.mu.Unlock()
	if err := a.append(resp.Message); err != nil {
		return resp, nil, err
	}
	// Calls the stream did not report one by one (a provider that only
	// knows them at the end) are added now, in order.
	uses := resp.Message.ToolUses()
	for _, b := range uses[min(seen, len(uses)):] {
		ex.Add(orchestrator.Call{ID: b.ID, Name: b.Name, Input: b.Input})
	}
	if len(uses) == 0 {
		return resp, nil, nil
	}
	outs := ex.Wait()
	results := llm.Message{Role: llm.User}
	for i, b := range uses {
		var out orchestrator.Outcome
		if i < len(outs) {
			out = outs[i]
		}
		results.Content = append(results.Content, toolResult(b, out))
	}
	if err := a.append(results); err != nil {
		return resp, outs, err
	}
	return resp, outs, nil
}

func (a *Agent) append(m llm.Message) error {
	a.mu.Lock()
	a.messages = append(a.messages, m)
	a.mu.Unlock()
	if a.cfg.Events.Message != nil {
		a.cfg.Events.Message(m)
	}
	if a.cfg.Store != nil {
		if err := a.cfg.Store.Append(m); err != nil {
			return fmt.Errorf("saving the conversation: %w", err)
		}
	}
	return nil
}

// request builds the model call: the pool's tools with a cache breakpoint
// after the built-ins and after the MCP tools.
func (a *Agent) request() llm.Request {
	pool := a.cfg.Pipeline.Pool
	ts := pool.Tools()
	defs := make([]llm.Tool, len(ts))
	for i, t := range ts {
		schema := t.InputSchemaJSON
		if len(schema) == 0 {
			schema, _ = json.Marshal(t.InputSchema)
		}
		defs[i] = llm.Tool{Name: t.Name, Description: t.Description, Schema: schema}
	}
	if n := pool.Builtins(); n > 0 && n <= len(defs) {
		defs[n-1].CacheBreakpoint = true
	}
	if len(defs) > pool.Builtins() {
		defs[len(defs)-1].CacheBreakpoint = true
	}
	return llm.Request{
		System:         a.cfg.System,
		Messages:       a.Messages(),
		Tools:          defs,
		MaxTokens:      a.cfg.MaxTokens,
		ThinkingBudget: a.Thinking(),
	}
}

// toolResult renders an outcome as the tool_result block for call b.
func toolResult(b llm.Block, out orchestrator.Outcome) llm.Block {
	tr := llm.Block{Type: llm.ToolResultBlock, ToolUseID: b.ID}
	switch {
	case out.Err != nil && errors.Is(out.Err, orchestrator.ErrUnknownTool):
		tr.IsError = true
		tr.Content = []llm.Block{llm.Text(fmt.Sprintf("No tool named %s is available. Use one of the tools you were given.", b.Name))}
		return tr
	case out.Err != nil:
		tr.IsError = true
		tr.Content = []llm.Block{llm.Text(out.Err.Error())}
		return tr
	case out.Result == nil:
		tr.IsError = true
		tr.Content = []llm.Block{llm.Text(fmt.Sprintf("%s did not run.", b.Name))}
		return tr
	}
	r := out.Result
	tr.IsError = r.IsError
	if r.Text != "" {
		tr.Content = append(tr.Content, llm.Text(r.Text))
	}
	for _, c := range r.Extra {
		switch c.Kind {
		case tools.TextContent:
			tr.Content = append(tr.Content, llm.Text(c.Text))
		case tools.ImageContent:
			tr.Content = append(tr.Content, llm.Block{Type: llm.ImageBlock, MIMEType: c.MIMEType, Data: c.Data})
		case tools.LinkContent:
			tr.Content = append(tr.Content, llm.Text(fmt.Sprintf("[resource %s: %s]", c.Name, c.URI)))
		}
	}
	if len(tr.Content) == 0 {
		tr.Content = []llm.Block{llm.Text(fmt.Sprintf("(%s completed with no output)", b.Name))}
	}
	return tr
}
