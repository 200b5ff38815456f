package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/agent-mcp/agent-mcp/permissions/settings"
	"github.com/agent-mcp/agent-mcp/sandbox"
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve the tools over MCP (stdio, or streamable HTTP with --http)", cmdServe},
		{"chat", "run the bundled coding agent in the terminal, or once with -p PROMPT", cmdChat},
		{"tools", "list the tool pool: name, read-only, what it does (--json: schemas and annotations)", cmdTools},
		{"trust", "trust a directory's own settings to widen permissions (allow rules, modes, hooks)", cmdTrust},
		{"sandbox", "print what Bash's kernel sandbox can use here and run its self-test (sandbox check)", cmdSandbox},
		{"doctor", "check the settings, the sandbox, each host's config and chat's upstream MCP servers", cmdDoctor},
		{"version", "print the version", cmdVersion},
	}
}

// errUsage marks an error already explained by printed usage.
var errUsage = errors.New("usage")

// Run runs the agent-mcp command line args (without the program name) and
// returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == sandbox.HiddenCommand {
		// The sandbox launcher: agent-mcp re-executed to confine a command.
		return sandbox.Main(args[1:])
	}
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		fmt.Fprint(stdout, versionLine())
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return runCommand(ctx, c, args[1:], stdout, stderr)
		}
	}
	unknownCommand(stderr, args[0])
	return 2
}

// runCommand runs one subcommand and returns its exit code: 0 for success
// or help, 2 for a usage error (already explained), the code a command's
// error carries (chat: max turns, interrupted), else 1 with the error.
func runCommand(ctx context.Context, c command, args []string, stdout, stderr io.Writer) int {
	err := c.run(ctx, args, stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(stderr, "agent-mcp %s: %s\n", c.name, msg)
		}
		return coded.ExitCode()
	}
	fmt.Fprintf(stderr, "agent-mcp %s: %v\n", c.name, err)
	return 1
}

// unknownCommand says, in at most three lines, that word is no command
// (or no top-level flag), which one it may have meant, and where the list
// is.
func unknownCommand(w io.Writer, word string) {
	var known []string
	what := "command"
	if strings.HasPrefix(word, "-") {
		what, known = "flag", []string{"--help", "--version"}
	} else {
		for _, c := range commands() {
			known = append(known, c.name)
		}
	}
	fmt.Fprintf(w, "agent-mcp: unknown %s %q\n", what, word)
	if c := settings.Closest(word, known); c != "" {
		fmt.Fprintf(w, "Did you mean %q?\n", c)
	}
	fmt.Fprintf(w, "Run 'agent-mcp --help' for the commands.\n")
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "agent-mcp %s: the coding-agent tool suite over MCP\n\nUsage:\n  agent-mcp <command> [flags]\n\nCommands:\n", version())
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'agent-mcp <command> --help' for a command's flags.\n")
}

// cmdFlags is a command's flag set: --help prints the command's purpose and
// every flag on stdout; a bad flag prints the error and the same text on
// stderr.
type cmdFlags struct {
	*flag.FlagSet
	usage          func(w io.Writer)
	stdout, stderr io.Writer
}

// newFlagSet makes a command's flag set.
func newFlagSet(name, synopsis, about string, stdout, stderr io.Writer) *cmdFlags {
	fs := flag.NewFlagSet("agent-mcp "+name, flag.ContinueOnError)
	// The flag package's own messages are replaced by parse's.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // printed by parse, where it knows whether help was asked for
	return &cmdFlags{FlagSet: fs, stdout: stdout, stderr: stderr, usage: func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent-mcp %s\n\n%s\n", synopsis, about)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}}
}

// parse parses args: flag.ErrHelp after printing the usage on stdout,
// errUsage after saying what is wrong with a flag on stderr, in at most
// three lines (the flag, the closest one, where the list is): the usage
// would bury the one line that matters.
func (fs *cmdFlags) parse(args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.usage(fs.stdout)
			return err
		}
		fs.badFlag(err)
		return errUsage
	}
	return nil
}

// badFlag explains a flag error of the flag package.
func (fs *cmdFlags) badFlag(err error) {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		name = strings.TrimPrefix(name, "-")
		fmt.Fprintf(fs.stderr, "%s: unknown flag --%s\n", fs.Name(), name)
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		if c := settings.Closest(name, known); c != "" {
			fmt.Fprintf(fs.stderr, "Did you mean --%s?\n", c)
		}
	} else {
		fmt.Fprintf(fs.stderr, "%s: %v\n", fs.Name(), err)
	}
	fs.helpHint()
}

// helpHint is the last line of a usage error: where the flags are listed.
func (fs *cmdFlags) helpHint() {
	fmt.Fprintf(fs.stderr, "Run '%s --help' for every flag.\n", fs.Name())
}

// parseFlags parses args, mapping bad flags to errUsage and refusing
// stray arguments.
func parseFlags(fs *cmdFlags, args []string) error {
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.helpHint()
		return errUsage
	}
	return nil
}

func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", "Prints the version of agent-mcp.", stdout, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprint(stdout, versionLine())
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return fmt.Sprint([]string(*l)) }
func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
