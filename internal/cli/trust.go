package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agent-mcp/agent-mcp/permissions/settings"
)

// cmdTrust records a directory as trusted, so that the settings inside it
// (.claude/settings.json, .claude/settings.local.json) may widen
// permissions: allow rules, defaultMode, additionalDirectories, hooks.
func cmdTrust(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("trust", "trust DIR",
		"Trusts DIR (and everything below it): its own .claude settings may then add allow rules, a defaultMode\n"+
			"other than default or plan, additionalDirectories and hooks. Until then agent-mcp reads only their deny\n"+
			"and ask rules. The list is kept in agent-mcp's configuration directory ("+settings.TrustFile+").", stdout, stderr)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "trust needs exactly one directory")
		fs.usage(stderr)
		return errUsage
	}
	dir := fs.Arg(0)
	file, err := settings.Trust(settings.DefaultLocations("", readEnviron().configDir).ConfigDir, dir)
	if err != nil {
		return err
	}
	if abs, err := filepath.Abs(dir); err == nil { // name what was recorded, not "."
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			dir = real
		}
	}
	fmt.Fprintf(stdout, "Trusted %s: its own settings may now widen permissions (recorded in %s).\n", dir, file)
	return nil
}
