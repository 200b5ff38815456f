package tools

// PathAccess is one file-system path a call reads or writes, as the caller
// gave it (relative paths resolve against the session's current directory).
type PathAccess struct {
	Path string
	// Write is true when the call may create, change or remove the path.
	Write bool
}

// PathInput is implemented by tool inputs that can say which paths a call
// touches. The permission check matches Read/Edit rules and the working
// directory confinement against these paths; an input that does not
// implement it is treated as touching unknown paths, so its calls are never
// allowed on the strength of being inside the working directories.
//
// Implement it on the input struct's pointer (the value [Input.Value]
// returns).
// Return every path the call may touch, and nil for a call that touches
// none (TodoWrite); Write is true for every path a writing tool may change.
type PathInput interface {
	Paths(uc *UseContext) []PathAccess
}

// Paths returns what in says it touches; ok is false when in does not
// implement [PathInput].
func Paths(in *Input, uc *UseContext) (paths []PathAccess, ok bool) {
	p, ok := in.Value().(PathInput)
	if !ok {
		return nil, false
	}
	return p.Paths(uc), true
}

// CommandInput is implemented by tool inputs that run a shell command
// line (Bash, and TaskInput, which types into a task running one): the
// permission check analyses the line with package shellcmd — the commands
// it runs for Bash rules, and the paths it reads and writes for Read/Edit
// rules and confinement. Bash rules apply to every such tool.
type CommandInput interface {
	CommandLine() string
}

// OpaqueCommandInput is implemented by command inputs whose text may be
// read as code no shell analysis can see (TaskInput typing into an
// interpreter, or into a shell in a way its line editor acts on):
// CommandOpaque says why, or is empty when the command line is all there
// is. The permission check then treats the call as a command line that
// does not parse: deny and ask rules on commands make it a question.
type OpaqueCommandInput interface {
	CommandInput
	CommandOpaque() string
}

// URLInput is implemented by tool inputs that fetch a URL (WebFetch):
// `domain:` rules apply to its host, and one that does not parse is asked
// about.
type URLInput interface {
	FetchURL() string
}
