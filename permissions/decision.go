package permissions

// Behavior is the outcome of a permission check.
type Behavior int

const (
	// Passthrough means the checker has no opinion; the general rules decide.
	Passthrough Behavior = iota
	// Allow lets the call run.
	Allow
	// Ask means a person must confirm the call before it runs.
	Ask
	// Deny refuses the call.
	Deny
)

// String returns the lower-case name used in settings and hook output.
func (b Behavior) String() string {
	switch b {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	default:
		return "passthrough"
	}
}

// Decision is what a permission check concluded and why.
type Decision struct {
	Behavior Behavior
	// Reason is a sentence for the model and the user saying why.
	Reason string
	// Rule is the rule that decided, in settings syntax (e.g. "Bash(rm *)"),
	// when a rule decided.
	Rule string
	// Suggestion is a rule that would allow this call, offered when the call
	// is asked about or refused for want of an allow rule.
	Suggestion string
	// Resolved maps each path the call touches, as the check judged it
	// (absolute and clean), to where it led then with every symbolic link
	// resolved. A check that judges paths sets it on an Allow; the pipeline
	// hands it to the tool (tools.UseContext.Resolved), so a tool opening a
	// path after the check can refuse one a symbolic link swapped in since
	// sends elsewhere. Nil when no paths were judged.
	Resolved map[string]string
	// ReadDenied, set on an Allow when read deny rules exist, reports
	// whether they cover a path the call may come upon below the paths it
	// was allowed (a search root): tools that walk directories skip such
	// paths (tools.UseContext.ReadDenied).
	ReadDenied func(abs string, isDir bool) bool
}

// Allowed reports whether the decision lets the call run.
func (d Decision) Allowed() bool { return d.Behavior == Allow }
