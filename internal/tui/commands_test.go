package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// TestSlashCommands_one_table: every built-in command of the table is
// offered by the menu, listed by /help with its arguments, reserved from
// custom commands (a .claude/commands file of its name does not take it),
// and dispatched by its name and aliases; a name outside it is unknown.
func TestSlashCommands_one_table(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sess, err := tools.NewSession(tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	var out bytes.Buffer
	r := &REPL{UI: New(strings.NewReader(""), &out), Session: sess}
	help := helpText()
	menu := menuCommands()
	if len(menu) != len(slashCommands) {
		t.Fatalf("the menu offers %d commands, the table has %d", len(menu), len(slashCommands))
	}
	for i, c := range slashCommands {
		if menu[i].Name != c.name || menu[i].Desc != c.brief {
			t.Errorf("menu row %d = %+v, want %s: %s", i, menu[i], c.name, c.brief)
		}
		use := strings.TrimSpace("/" + c.name + " " + c.args)
		if !strings.Contains(help, "  "+use+"  ") || !strings.Contains(help, c.help+"\n") {
			t.Errorf("/help does not list %q with %q:\n%s", use, c.help, help)
		}
		for _, name := range append([]string{c.name}, c.aliases...) {
			if got, ok := builtinCommand(name); !ok || got.name != c.name {
				t.Errorf("builtinCommand(%q) = %q, %v; want %q", name, got.name, ok, c.name)
			}
			if err := os.MkdirAll(filepath.Join(dir, ".claude", "commands"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".claude", "commands", name+".md"), []byte("custom "+name), 0o600); err != nil {
				t.Fatal(err)
			}
			if p, ok, err := r.custom("/" + name); ok || err != nil {
				t.Errorf("a custom command took the built-in /%s: %q %v", name, p, err)
			}
		}
	}
	if _, ok := builtinCommand("nosuch"); ok {
		t.Error("builtinCommand found a command outside the table")
	}

	// Dispatch: by name and by alias, with arguments.
	for _, c := range []struct {
		line     string
		quit     bool
		wantErr  string
		wantOut  string
		wantMode permissions.Mode
	}{
		{line: "/mode plan", wantOut: "Mode: plan", wantMode: permissions.ModePlan},
		{line: "/permissions", wantOut: "Mode: plan", wantMode: permissions.ModePlan},
		{line: "/mode nonsense", wantErr: "nonsense", wantMode: permissions.ModePlan},
		{line: "/mode default", wantOut: "Mode: default", wantMode: permissions.ModeDefault},
		{line: "/help", wantOut: "Custom commands"},
		{line: "/exit", quit: true},
		{line: "/quit", quit: true},
		{line: "/nosuch arg", wantErr: "unknown command /nosuch"},
	} {
		out.Reset()
		quit, err := r.command(c.line)
		if quit != c.quit {
			t.Errorf("%s: quit = %v, want %v", c.line, quit, c.quit)
		}
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one naming %q", c.line, err, c.wantErr)
			}
		} else if err != nil {
			t.Errorf("%s: %v", c.line, err)
		}
		if !strings.Contains(out.String(), c.wantOut) {
			t.Errorf("%s: printed %q, want %q in it", c.line, out.String(), c.wantOut)
		}
		if c.wantMode != "" && sess.Mode() != c.wantMode {
			t.Errorf("%s: mode %s, want %s", c.line, sess.Mode(), c.wantMode)
		}
	}
}
