package permit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/confine"
	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
	"github.com/agent-mcp/agent-mcp/tools"
)

// DefaultAskTimeout is how long the user has to answer a permission
// question; no answer in time is a refusal.
const DefaultAskTimeout = 5 * time.Minute

// Options configure a Permitter.
type Options struct {
	// Rules are the merged permission rules; nil means none.
	Rules *permissions.RuleSet
	// TrustHost lets calls inside the working directories run without
	// asking (writes included), for MCP hosts that confirm calls
	// themselves. Deny and ask rules, plan and dontAsk modes, protected
	// paths and paths outside the working directories still hold.
	TrustHost bool
	// AskTimeout bounds the wait for an answer; 0 is DefaultAskTimeout.
	AskTimeout time.Duration
	// Home is the user's home directory, where the credential paths are
	// (permissions.Credentials); empty means $HOME.
	Home string
	// StateHome is $XDG_STATE_HOME; empty means Home/.local/state.
	StateHome string
	// SecretFiles are the server's own secret files (--token-file), read
	// by no tool (permissions.Credentials).
	SecretFiles []string
	// Sandbox, when set, is Bash's kernel sandbox with
	// autoAllowBashIfSandboxed on: a command it confines runs without a
	// question when no rule asks or denies, as the kernel holds it to the
	// writable roots, where it also holds protected and Read-denied paths
	// (HoldsPaths); an excluded command is always asked about.
	Sandbox Sandbox
}

// Sandbox says which commands the kernel sandbox confines.
type Sandbox interface {
	// Confines reports whether command runs confined.
	Confines(command string) bool
	// Excluded reports whether command is configured to run outside.
	Excluded(command string) bool
	// HoldsPaths reports whether the kernel also keeps protected and
	// Edit-denied paths read-only and Read-denied ones unreadable.
	HoldsPaths() bool
	// HoldsNetwork reports whether a command's connections are held:
	// off, or through the egress proxy, which asks about a new host.
	HoldsNetwork() bool
}

// Permitter implements orchestrator.Permitter.
type Permitter struct {
	rules       *permissions.RuleSet
	trustHost   bool
	timeout     time.Duration
	sandbox     Sandbox
	home        string
	stateHome   string
	secretFiles []string
}

var _ orchestrator.Permitter = (*Permitter)(nil)

// New makes a Permitter.
func New(cfg Options) *Permitter {
	p := &Permitter{rules: cfg.Rules, trustHost: cfg.TrustHost, timeout: cfg.AskTimeout, sandbox: cfg.Sandbox,
		home: cfg.Home, stateHome: cfg.StateHome, secretFiles: cfg.SecretFiles}
	if p.rules == nil {
		p.rules = &permissions.RuleSet{}
	}
	if p.timeout <= 0 {
		p.timeout = DefaultAskTimeout
	}
	return p
}

// Filter hides from the pool every tool a deny rule names as a whole.
func (p *Permitter) Filter() orchestrator.Filter {
	return func(t *tools.Tool) bool {
		return p.rules.DeniesWholeTool(t.Name, t.Aliases...) == nil
	}
}

// need is one part of a call that is not allowed as it stands.
type need struct {
	reason string
	// suggestion is a rule that would meet it, naming exactly what the
	// call touches; nil when none can.
	suggestion *permissions.Rule
	// wider is a rule that would meet it and more (the directory of a
	// file outside the working directories); nil when none is offered.
	wider *permissions.Rule
	// waivable says which policies meet it without asking.
	byTrust, byAcceptEdits, byBypass bool
	// byHook is false only for what a hook's allow must not override.
	byHook bool
	// protected is set for a write to a protected path: only a rule naming
	// that path meets it, never a whole-tool allow.
	protected bool
	// refuseInBypass turns the question into a refusal in bypass mode,
	// where nobody is asked.
	refuseInBypass bool
	// bySandbox is set for what a kernel sandbox that confines the command
	// holds anyway (autoAllowBashIfSandboxed).
	bySandbox bool
}

// Decide makes the decision for one call; see the package documentation
// for the order.
func (p *Permitter) Decide(ctx context.Context, req orchestrator.PermissionRequest) (d permissions.Decision) {
	if req.UC == nil || req.UC.Session == nil || req.Tool == nil {
		return permissions.Decision{Behavior: permissions.Deny, Reason: "the call has no session"}
	}
	sess := req.UC.Session
	mode := sess.Mode()
	rules := p.rules.With(sessionGrants(sess).list()...)
	tg, unknownPaths, bashUnknown := buildTarget(req)
	// What is typed into a program that reads it as code is no command
	// line any analysis can read: where deny or ask rules name commands,
	// it is judged as one that does not parse, so they make it a
	// question.
	if oi, ok := req.Input.Value().(tools.OpaqueCommandInput); ok && tg.Bash != nil && tg.Bash.Err == nil &&
		(rules.HasCommandRules(permissions.Deny) || rules.HasCommandRules(permissions.Ask)) {
		if why := oi.CommandOpaque(); why != "" {
			tg.Bash.Err = errors.New(why)
		}
	}
	defer func() {
		// An allowed call's tool learns where the judged paths led, so it
		// can refuse one that a symbolic link swapped in since sends
		// elsewhere (confine.OpenRead).
		if d.Behavior == permissions.Allow {
			d.Resolved = make(map[string]string, len(tg.Accesses))
			for _, a := range tg.Accesses {
				d.Resolved[a.Path] = a.Real
			}
			// Tools that walk below their paths skip what a deny rule
			// covers there.
			d.ReadDenied = p.skipCredentials(sess, tg, rules, rules.ReadDenied(tg.Tool, tg.Aliases...))
		}
	}()

	// 1. Denials nothing overrides.
	if d := req.HookDecision; d.Behavior == permissions.Deny {
		if d.Reason == "" {
			d.Reason = "A PreToolUse hook denied the call."
		}
		return d
	}
	if m := rules.Find(permissions.Deny, tg); m != nil {
		return permissions.Decision{Behavior: permissions.Deny, Rule: m.Rule.String(),
			Reason: fmt.Sprintf("A deny rule from %s matches %s.", m.Rule.Source, quoteWhat(m.What))}
	}

	// Credential paths are read only under an allow rule naming them.
	if d := p.refuseCredential(sess, tg, rules); d != nil {
		return *d
	}

	// A recursive command reaching below a deny rule's paths is asked
	// about: it may read or change them, and nobody but a person can say.
	if m := rules.FindBelow(permissions.Deny, tg); m != nil {
		n := need{reason: fmt.Sprintf("%s reaches below %s, where the deny rule %s (from %s) applies", tg.Tool, quoteWhat(m.What), m.Rule, m.Rule.Source)}
		return p.resolve(ctx, req, tg, mode, []need{n}, false)
	}

	// 2. Ask rules.
	if m := rules.Find(permissions.Ask, tg); m != nil {
		n := need{reason: fmt.Sprintf("an ask rule (%s, from %s) matches %s", m.Rule, m.Rule.Source, quoteWhat(m.What))}
		return p.resolve(ctx, req, tg, mode, []need{n}, false)
	}

	// 3. Plan mode.
	if mode == permissions.ModePlan && !planAllows(req, tg, unknownPaths) {
		return permissions.Decision{Behavior: permissions.Deny,
			Reason: "The session is in plan mode, where only read-only calls run; present the plan and leave plan mode before changing anything."}
	}

	needs := p.partNeeds(req, tg, rules, unknownPaths, bashUnknown)
	hard := slices.ContainsFunc(needs, func(n need) bool { return !n.byHook || n.protected })

	// 4. Whole-tool allow.
	if r := rules.AllowsTool(tg); r != nil && !hard {
		return permissions.Decision{Behavior: permissions.Allow, Rule: r.String(), Reason: "Allowed by a rule from " + r.Source + "."}
	}

	// 5. Every part on its own.
	hookAllow := req.HookDecision.Behavior == permissions.Allow
	return p.resolve(ctx, req, tg, mode, needs, hookAllow)
}

// partNeeds lists what of the call is not allowed by a rule or by policy:
// its command line's parts, the paths it touches, and what else it names
// (a host, an MCP tool).
func (p *Permitter) partNeeds(req orchestrator.PermissionRequest, tg *permissions.Target, rules *permissions.RuleSet, unknownPaths bool, bashUnknown []shellcmd.Unknown) []need {
	var needs []need
	sandboxed := false
	if cl := tg.Bash; cl != nil {
		var excluded *need
		excluded, sandboxed = p.sandboxFacts(cl)
		if excluded != nil {
			needs = append(needs, *excluded)
		}
		needs = append(needs, commandNeeds(tg, cl, rules, bashUnknown, sandboxed)...)
	}
	needs = append(needs, accessNeeds(req, tg, rules, sandboxed)...)
	return append(needs, otherNeeds(req, tg, rules, unknownPaths)...)
}

// sandboxFacts is what the sandbox says of a command line: the need of a
// line it runs unconfined (sandbox.excludedCommands), or whether it holds
// all the line does (sandboxed), which waives some needs.
func (p *Permitter) sandboxFacts(cl *permissions.CommandLine) (excluded *need, sandboxed bool) {
	if p.sandbox == nil {
		return nil, false
	}
	if p.sandbox.Excluded(cl.Raw) {
		return &need{reason: "the command runs outside the sandbox (sandbox.excludedCommands)",
			byBypass: true, byHook: true}, false
	}
	// The sandbox answers a question only where the kernel holds
	// all it was about: what a command writes inside the working
	// directories, which the namespaces layer keeps to the
	// writable roots with protected and Edit-denied paths
	// read-only. Landlock alone cannot take part of a grant back:
	// there a command is asked about as it would be without a
	// sandbox. Reads outside the working directories, and
	// writes the parser cannot place, are judged by the rules
	// and the mode, sandbox or not.
	// An unrestricted network (sandbox.network true) would let
	// a waived command send what it reads anywhere.
	return nil, p.sandbox.Confines(cl.Raw) && p.sandbox.HoldsPaths() && p.sandbox.HoldsNetwork()
}

// commandNeeds lists what of a Bash command line no rule allows: a line
// that could not be analysed, its commands, the reads and writes the
// parser could not place, and the connections it opens.
func commandNeeds(tg *permissions.Target, cl *permissions.CommandLine, rules *permissions.RuleSet, bashUnknown []shellcmd.Unknown, sandboxed bool) []need {
	var needs []need
	unknownOK := !rules.HasCommandRules(permissions.Deny) && !rules.HasCommandRules(permissions.Ask)
	if cl.Err != nil {
		needs = append(needs, need{reason: "the command could not be analysed (" + cl.Err.Error() + ")",
			byBypass: unknownOK, byHook: unknownOK, bySandbox: sandboxed && unknownOK})
	}
	for _, c := range cl.Commands {
		switch {
		case rules.AllowsCommand(tg, c) != nil:
		case !c.Known:
			why := fmt.Sprintf("the program run by %q is only known when it runs", c.Cmd.Source)
			if c.Cmd.OpaqueWhy != "" {
				why = fmt.Sprintf("%q cannot be analysed: %s", c.Cmd.Source, c.Cmd.OpaqueWhy)
			}
			needs = append(needs, need{reason: why,
				byBypass: unknownOK, byHook: unknownOK, bySandbox: sandboxed && unknownOK})
		case c.Cmd.IsReadOnly():
		default:
			s := c.Suggestion()
			needs = append(needs, need{reason: fmt.Sprintf("no rule allows the command %q", c.Text),
				suggestion: &s, byTrust: true, byBypass: true, byHook: true, bySandbox: sandboxed})
		}
	}
	for _, u := range bashUnknown {
		// An unknown read could be a denied one; an unknown write
		// could change a protected path, which exist everywhere: in
		// bypass mode it is refused rather than allowed.
		// Neither is waived by a sandbox: an unknown read may lead
		// outside the working directories, an unknown write outside
		// them too, and both are judged as without one.
		n := need{reason: u.Why, byHook: true}
		if u.Write {
			n.refuseInBypass = true
		} else {
			n.byBypass = !rules.HasPathRules(permissions.Deny, false) && !rules.HasPathRules(permissions.Ask, false)
		}
		needs = append(needs, n)
	}
	for _, addr := range cl.Network {
		needs = append(needs, need{reason: fmt.Sprintf("the command opens a network connection (%s)", addr), byBypass: true, byHook: true})
	}
	return needs
}

// accessNeeds lists the paths the call reads or writes that no rule or
// grant allows: protected paths, paths outside the working directories,
// and writes that need confirmation.
func accessNeeds(req orchestrator.PermissionRequest, tg *permissions.Target, rules *permissions.RuleSet, sandboxed bool) []need {
	var needs []need
	conf := confine.New(req.UC.Session.WorkDirs())
	// The session's own state (persisted results, background task output)
	// is the server's output to this client: reading it needs no grant.
	state := confine.New([]string{req.UC.Session.StateDir()})
	for _, a := range tg.Accesses {
		verb, family := "reading", "Read"
		if a.Write {
			verb, family = "writing", "Edit"
		}
		// A protected path is written only under a rule that names it:
		// a wider allow rule or session grant does not reach it.
		prot, what := permissions.Protected(a.Path, a.Real)
		if !prot && a.Write && a.Subtree && a.IsDir {
			prot, what = permissions.ProtectedBelow(a.Real)
		}
		if prot && a.Write {
			if rules.AllowsProtected(tg, a) != nil {
				continue
			}
			s := permissions.Rule{Tool: "Edit", Specifier: absSpec(a.Path)}
			needs = append(needs, need{reason: fmt.Sprintf("%s %s changes a protected path (%s), which only a rule naming it allows", verb, a.Path, what),
				suggestion: &s, byHook: true, protected: true})
			continue
		}
		if rules.AllowsAccess(tg, a) != nil {
			continue
		}
		if !a.Write && state.Contains(a.Path) {
			continue
		}
		if !conf.Contains(a.Path) || !conf.Contains(a.Real) {
			// The rule offered names what the call touches: the file, or
			// the directory and what is below it; a file's directory is
			// offered as the wider grant.
			s := permissions.Rule{Tool: family, Specifier: absSpec(a.Path)}
			var wider *permissions.Rule
			if a.IsDir {
				s.Specifier += "/**"
			} else {
				wider = &permissions.Rule{Tool: family, Specifier: absSpec(filepath.Dir(a.Path)) + "/**"}
			}
			where := "outside the working directories (" + strings.Join(conf.Dirs(), ", ") + ")"
			if a.Real != a.Path {
				where += ", as it resolves to " + a.Real
			}
			needs = append(needs, need{reason: fmt.Sprintf("%s %s: it is %s", verb, a.Path, where),
				suggestion: &s, wider: wider, byBypass: true, byHook: true})
			continue
		}
		if a.Write && !a.Guessed {
			s := permissions.Rule{Tool: "Edit", Specifier: absSpec(a.Path)}
			needs = append(needs, need{reason: fmt.Sprintf("writing %s needs confirmation", a.Path),
				suggestion: &s, byTrust: true, byAcceptEdits: true, byBypass: true, byHook: true, bySandbox: sandboxed})
		}
	}
	return needs
}

// otherNeeds lists what else of the call no rule allows: a tool that
// does not say which files it touches, the host it fetches from, an MCP
// tool that changes something.
func otherNeeds(req orchestrator.PermissionRequest, tg *permissions.Target, rules *permissions.RuleSet, unknownPaths bool) []need {
	var needs []need
	name := req.Tool.Name
	if unknownPaths {
		s := permissions.Rule{Tool: name}
		needs = append(needs, need{reason: name + " does not say which files it touches", suggestion: &s, byBypass: true, byHook: true})
	}
	if tg.URL != nil && rules.AllowsDomain(tg) == nil {
		s := permissions.Rule{Tool: name, Specifier: "domain:" + tg.URL.Hostname()}
		needs = append(needs, need{reason: "fetching from " + tg.URL.Hostname() + " is not allowed by a rule",
			suggestion: &s, byTrust: true, byBypass: true, byHook: true})
	}
	if req.Tool.Upstream != "" && !req.Input.ReadOnly() {
		s := permissions.Rule{Tool: name}
		needs = append(needs, need{reason: "no rule allows the MCP tool " + name, suggestion: &s, byTrust: true, byBypass: true, byHook: true})
	}
	return needs
}

// resolve turns the unmet needs into a decision: allow when the mode, the
// host policy or a hook meets them all; otherwise refuse (dontAsk) or ask.
func (p *Permitter) resolve(ctx context.Context, req orchestrator.PermissionRequest, tg *permissions.Target, mode permissions.Mode, needs []need, hookAllow bool) permissions.Decision {
	var left []need
	for _, n := range needs {
		switch {
		case hookAllow && n.byHook:
		case n.bySandbox && mode != permissions.ModePlan:
		case mode == permissions.ModeBypassPermissions && n.byBypass:
		case mode == permissions.ModeAcceptEdits && n.byAcceptEdits:
		case p.trustHost && n.byTrust:
		default:
			left = append(left, n)
		}
	}
	for _, n := range left {
		if n.refuseInBypass && mode == permissions.ModeBypassPermissions {
			return permissions.Decision{Behavior: permissions.Deny,
				Reason: capitalize(n.reason) + ". In bypassPermissions mode a write to a path only known when the command runs is refused: it could change a protected path or one under an Edit deny rule."}
		}
	}
	if len(left) == 0 {
		reason := ""
		if hookAllow {
			reason = "Allowed by a PreToolUse hook."
		}
		return permissions.Decision{Behavior: permissions.Allow, Reason: reason}
	}
	reasons := make([]string, len(left))
	var exact, wide []permissions.Rule
	all := true
	for i, n := range left {
		reasons[i] = n.reason
		if n.suggestion == nil {
			all = false
			continue
		}
		exact = appendRule(exact, *n.suggestion)
		if n.wider != nil {
			wide = appendRule(wide, *n.wider)
		} else {
			wide = appendRule(wide, *n.suggestion)
		}
	}
	d := permissions.Decision{Behavior: permissions.Ask, Reason: capitalize(strings.Join(reasons, "; ")) + "."}
	if !all {
		exact, wide = nil, nil
	}
	d.Suggestion = ruleList(exact)
	if mode == permissions.ModeDontAsk {
		d.Behavior = permissions.Deny
		d.Reason += " The session is in dontAsk mode, so anything not allowed by a rule is refused."
		return d
	}
	return p.ask(ctx, req, tg, d, exact, wide)
}

func appendRule(list []permissions.Rule, r permissions.Rule) []permissions.Rule {
	s := r.String()
	if slices.ContainsFunc(list, func(x permissions.Rule) bool { return x.String() == s }) {
		return list
	}
	return append(list, r)
}

func ruleList(rules []permissions.Rule) string {
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

// ask puts the question to the user, failing closed: no asker, an error,
// a timeout, or any answer but an allow leaves the call refused. exact
// and wide are the rules the two "don't ask again" choices grant (nil
// when no rule can).
func (p *Permitter) ask(ctx context.Context, req orchestrator.PermissionRequest, tg *permissions.Target, d permissions.Decision, exact, wide []permissions.Rule) permissions.Decision {
	asker := req.UC.Asker
	if asker == nil {
		d.Reason += " Nobody can be asked: the client does not support elicitation."
		return d
	}
	q := question(req, tg, d, exact, wide)
	actx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	ans, err := tools.AskPermission(actx, asker, q)
	switch {
	case errors.Is(err, tools.ErrNobodyToAsk):
		d.Reason += " The user was not available to approve it (" + err.Error() + ")."
		return d
	case err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		return permissions.Decision{Behavior: permissions.Deny, Suggestion: d.Suggestion,
			Reason: fmt.Sprintf("%s No answer came within %s, so the call was refused.", d.Reason, p.timeout)}
	case err != nil:
		d.Reason += " Asking the user failed: " + err.Error()
		return d
	}
	switch ans.Choice {
	case tools.ChoiceAllowOnce:
		return permissions.Decision{Behavior: permissions.Allow, Reason: "Allowed once by the user."}
	case tools.ChoiceAllowSession:
		if len(exact) > 0 {
			sessionGrants(req.UC.Session).add(exact)
			return permissions.Decision{Behavior: permissions.Allow, Reason: "Allowed by the user for this session."}
		}
	case tools.ChoiceAllowSessionDir:
		if len(wide) > 0 {
			sessionGrants(req.UC.Session).add(wide)
			return permissions.Decision{Behavior: permissions.Allow, Reason: "Allowed by the user for this session."}
		}
	case tools.ChoiceDeny, tools.ChoiceDenyInstead:
		if fb := strings.TrimSpace(ans.Feedback); fb != "" {
			return permissions.Decision{Behavior: permissions.Deny, Reason: "The user denied the call and said what to do instead: " + fb}
		}
		return permissions.Decision{Behavior: permissions.Deny, Reason: "The user denied the call. Do not retry it; ask the user how to proceed."}
	case "":
		return permissions.Decision{Behavior: permissions.Deny, Reason: "The user declined the call. Do not retry it; ask the user how to proceed."}
	}
	return permissions.Decision{Behavior: permissions.Deny, Reason: fmt.Sprintf("The answer %q is not one of the choices offered, so the call was refused.", ans.Choice)}
}

// question is the permission question for the call: what it does, why it
// is asked about, and the choices (the "don't ask again" ones naming the
// rules they add).
func question(req orchestrator.PermissionRequest, tg *permissions.Target, d permissions.Decision, exact, wide []permissions.Rule) *tools.PermissionQuestion {
	q := &tools.PermissionQuestion{
		Tool: req.Tool.Name, CallID: req.UC.CallID, Input: req.Raw, Dir: req.UC.Dir(),
		Reason: d.Reason, Rule: ruleList(exact),
	}
	if tg.Bash != nil {
		q.Command = tg.Bash.Raw
	}
	if tg.URL != nil {
		q.URL = tg.URL.String()
	}
	for _, a := range tg.Accesses {
		q.Paths = append(q.Paths, tools.PathAccess{Path: a.Path, Write: a.Write})
	}
	q.Choices = append(q.Choices, tools.PermissionChoice{ID: tools.ChoiceAllowOnce, Label: "Yes"})
	if len(exact) > 0 {
		q.Choices = append(q.Choices, tools.PermissionChoice{ID: tools.ChoiceAllowSession,
			Label: "Yes, and don't ask again this session for " + ruleList(exact)})
		if w := ruleList(wide); w != q.Rule {
			q.Choices = append(q.Choices, tools.PermissionChoice{ID: tools.ChoiceAllowSessionDir,
				Label: "Yes, and don't ask again this session for " + w})
		}
	}
	q.Choices = append(q.Choices,
		tools.PermissionChoice{ID: tools.ChoiceDeny, Label: "No"},
		tools.PermissionChoice{ID: tools.ChoiceDenyInstead, Label: "No, and tell the model what to do instead", Feedback: true})
	return q
}

// planAllows reports whether a call may run in plan mode: it is read-only,
// or touches nothing but the session (TodoWrite, ExitPlanMode).
func planAllows(req orchestrator.PermissionRequest, tg *permissions.Target, unknownPaths bool) bool {
	if req.Input.ReadOnly() {
		return true
	}
	return tg.Bash == nil && !unknownPaths && len(tg.Accesses) == 0 &&
		!req.Input.Destructive() && !req.Tool.OpenWorld
}

// rawMembers is the members of the JSON object raw by name, each value a
// slice of raw: nothing is copied, so judging a Write does not duplicate
// its content. nil if raw is not an object.
func rawMembers(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]rawSlice
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = json.RawMessage(v)
	}
	return out
}

// rawSlice is a JSON value as the slice of the decoder's input it is
// (json.RawMessage copies it); json.Unmarshal's input is the caller's.
type rawSlice []byte

func (r *rawSlice) UnmarshalJSON(b []byte) error {
	*r = b[:len(b):len(b)]
	return nil
}

// buildTarget describes the call for the rules. unknownPaths is true when
// the call may touch files it does not name; bashUnknown are the paths a
// Bash line touches that are only known when it runs.
func buildTarget(req orchestrator.PermissionRequest) (tg *permissions.Target, unknownPaths bool, bashUnknown []shellcmd.Unknown) {
	t := req.Tool
	tg = &permissions.Target{Tool: t.Name, Aliases: t.Aliases}
	if s := t.InputSchema; s != nil {
		for k := range s.Properties {
			tg.Fields = append(tg.Fields, k)
		}
		slices.Sort(tg.Fields)
	}
	tg.Input = rawMembers(req.Raw)
	str := func(key string) (string, bool) {
		var v string
		raw, ok := tg.Input[key]
		if !ok || json.Unmarshal(raw, &v) != nil {
			return "", false
		}
		return v, true
	}
	var paths []tools.PathAccess
	if ci, ok := req.Input.Value().(tools.CommandInput); ok {
		// Bash rules are about command lines: a tool whose call runs one
		// (TaskInput types into a task running its command) answers to
		// them as Bash does, and to rules naming it.
		if t.Name != bashRuleTool && !slices.Contains(tg.Aliases, bashRuleTool) {
			tg.Aliases = append(slices.Clone(tg.Aliases), bashRuleTool)
		}
		tg.Bash = permissions.AnalyzeCommand(ci.CommandLine())
		home, _ := os.UserHomeDir()
		acc, unknown := tg.Bash.Accesses(req.UC.Dir(), home)
		tg.Accesses = append(tg.Accesses, acc...)
		bashUnknown = unknown
	} else if ps, ok := tools.Paths(req.Input, req.UC); ok {
		paths = ps
	} else {
		paths, unknownPaths = guessPaths(req, tg, str)
	}
	u, hasURL := str("url")
	if ui, ok := req.Input.Value().(tools.URLInput); ok {
		u, hasURL = ui.FetchURL(), true
	} else if !t.OpenWorld {
		hasURL = false // an upstream tool's url field is judged only when it reaches the world
	}
	if hasURL {
		if parsed, err := url.Parse(u); err == nil && parsed.Host != "" {
			tg.URL = parsed
		} else {
			unknownPaths = true
		}
	}
	for _, p := range paths {
		abs := req.UC.Resolve(p.Path)
		real, err := confine.ResolvePath(abs)
		if err != nil {
			real = abs
			unknownPaths = true
		}
		isDir := false
		if fi, err := os.Stat(real); err == nil {
			isDir = fi.IsDir()
		}
		tg.Accesses = append(tg.Accesses, permissions.Access{Path: abs, Real: real, Write: p.Write, IsDir: isDir})
	}
	return tg, unknownPaths, bashUnknown
}

// bashRuleTool is the name Bash rules are written with.
const bashRuleTool = "Bash"

// pathFields are the input fields that name a file or directory, for
// tools whose input does not implement tools.PathInput.
var pathFields = []string{"file_path", "notebook_path", "path"}

// guessPaths is the fallback for inputs that do not implement
// tools.PathInput: the usual path fields are taken as what the call
// touches (writes unless the call is read-only). A read-only call with a
// `path` property left out searches the current directory. A call naming
// no path is taken to touch none only when it is neither destructive nor
// open-world; otherwise its paths are unknown.
func guessPaths(req orchestrator.PermissionRequest, tg *permissions.Target, str func(string) (string, bool)) ([]tools.PathAccess, bool) {
	readOnly := req.Input.ReadOnly()
	var out []tools.PathAccess
	for _, f := range pathFields {
		if v, ok := str(f); ok && v != "" {
			out = append(out, tools.PathAccess{Path: v, Write: !readOnly})
		}
	}
	if len(out) > 0 {
		return out, false
	}
	if readOnly && slices.Contains(tg.Fields, "path") {
		return []tools.PathAccess{{Path: req.UC.Dir()}}, false
	}
	if readOnly || !req.Input.Destructive() || req.Tool.OpenWorld {
		return nil, false
	}
	return nil, true
}

// absSpec writes an absolute path as a `//` path specifier, with glob
// characters escaped.
func absSpec(abs string) string {
	esc := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(abs)
	return "/" + esc
}

func quoteWhat(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// grants are the rules a user allowed "for this session".
type grants struct {
	mu    sync.Mutex
	rules []*permissions.SourcedRule
}

type grantsKey struct{}

func sessionGrants(s *tools.Session) *grants {
	return s.Slot(grantsKey{}, func() any { return &grants{} }).(*grants)
}

func (g *grants) list() []*permissions.SourcedRule {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.rules)
}

func (g *grants) add(rules []permissions.Rule) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range rules {
		sr, err := permissions.NewSourcedRule(r, permissions.Allow, "this session", permissions.Anchors{Home: "/", Root: "/", Cwd: "/"})
		if err == nil {
			g.rules = append(g.rules, sr)
		}
	}
}
