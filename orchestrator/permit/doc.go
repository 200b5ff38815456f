// Package permit is agent-mcp's orchestrator.Permitter: it decides whether
// a tool call runs, from the tool's own opinion, the PreToolUse hooks'
// decision, the permission rules of every settings source, the session's
// mode, and the confinement to the working directories; and when the
// answer is "ask", it asks the user through req.UC.Asker (MCP elicitation
// in the server, the terminal in chat). The question is data, a
// tools.PermissionQuestion: the tool, the call's id, its input, command,
// URL and paths, why it is asked, and the choices: allow once; allow for
// this session what the question names exactly (the file, the command);
// for a file outside the working directories, allow its directory for
// this session; deny; deny and say what the model should do instead. The
// answer names a choice by its ID; nothing is parsed back from text.
//
// The order is fixed and fails closed:
//
//  1. The tool's deny, a hook's deny, and any deny rule matching any part
//     of the call (the whole tool, a parameter, any simple command of a
//     Bash line, any path as written or resolved, the fetched domain)
//     refuse the call. Nothing overrides them. A read of a credential path
//     (permissions.Credentials: ~/.ssh, cloud and registry keys,
//     agent-mcp's own state and the other sessions') is refused unless an
//     allow rule names it. A recursive command reaching below what a deny
//     rule covers (`grep -r x .` over a denied directory) is asked about.
//  2. An ask rule matching any part asks.
//  3. Plan mode refuses what is not read-only.
//  4. A whole-tool allow rule (or a parameter allow rule) allows the call.
//  5. Otherwise every part must be allowed on its own: each simple command
//     by an allow rule or by being read-only; each path by an allow rule,
//     or by being inside the working directories (writes there need
//     acceptEdits, bypassPermissions or a trusting host); protected paths
//     (.git/, .claude/, shell rc files, ...) only by an allow rule. What is
//     left unmet is asked about, or refused in dontAsk mode. A hook's
//     allow meets everything but a Bash line that cannot be checked
//     against the deny rules. With Options.Sandbox (autoAllowBashIfSandboxed)
//     and a sandbox that also holds protected and denied paths (the
//     namespaces layer; Landlock alone waives nothing), a confined Bash
//     line needs no question for its commands and its writes inside the
//     working directories; a command configured to run outside the sandbox
//     is always asked about, and reads outside the working directories and
//     writes the parser cannot place are judged as without one.
//
// Options.TrustHost is the policy of `serve` when no mode is given
// (permissions.DecidePolicy): MCP hosts confirm calls themselves, so
// everything inside the working directories runs, and only what is
// outside, protected, under an ask rule, or cannot be analysed is asked
// about. A Bash line's paths (redirections, known programs' arguments,
// after its cd) are judged like a Read's or Write's; a path only known
// when the line runs is always asked about, and refused in
// bypassPermissions mode when it is written.
//
// What it is not: it does not run hooks (orchestrator/hooks does; the
// pipeline hands it their decision), does not read settings files
// (permissions/settings does; it is given the merged rules), and does not
// confine anything itself (permissions/confine and the Bash sandbox do).
package permit
