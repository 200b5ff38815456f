package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Limits of the diagnostics block after a change.
const (
	maxPerFile   = 10
	maxInAll     = 30
	maxBlockSize = 4000
	// maxDocument is the largest text given to a server after a change.
	maxDocument = 8 << 20
)

// Check reports the diagnostics a change of the file at path introduced:
// it gives the server the text before (nil when the file did not exist)
// and takes its diagnostics, then the text after, and returns the block
// to end the tool's result with: the new errors and warnings in Claude
// Code's <new-diagnostics> wrapper, or a sentence saying the server did
// not answer in time or could not start, or "" when nothing is new or no
// server handles the file (then nothing is waited for).
//
// The wait is bounded: [Options.DiagnosticsWait] in all once the server
// is warm, coldFactor times that while it loads the workspace.
func (s *Service) Check(ctx context.Context, sess *tools.Session, path string, before, after []byte) string {
	if len(after) > maxDocument || len(before) > maxDocument {
		return "" // a server is not given files this large
	}
	if strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return s.checkNotebook(ctx, sess, path, before, after)
	}
	return s.check(ctx, sess, path, before, after, func(ds []Diagnostic) string {
		return formatNew(filepath.Base(path), ds, string(after))
	})
}

// check gives the server of path the text before and after, and renders
// the diagnostics introduced with render.
func (s *Service) check(ctx context.Context, sess *tools.Session, path string, before, after []byte, render func([]Diagnostic) string) string {
	c, lang, ok := s.clientFor(sess, path)
	if !ok {
		return ""
	}
	wait := s.waitFor(c)
	deadline := time.Now().Add(wait)
	sctx, cancel := until(ctx, deadline)
	defer cancel()
	gaveUp := func() string {
		return fmt.Sprintf("\n\n(Diagnostics not checked: the language server %s had not reported on this change after %s; run the build to see them.)",
			c.cfg.Command, wait.Round(100*time.Millisecond))
	}
	var out string
	err := c.withProcess(sctx, func(p *process) error {
		var old []Diagnostic
		if before != nil {
			v, seq, err := c.sync(sctx, p, path, lang, string(before))
			if err == nil {
				old, err = c.waitDiagnostics(sctx, p, path, v, seq, deadline)
			}
			if err != nil {
				return err
			}
		}
		v, seq, err := c.sync(sctx, p, path, lang, string(after))
		if err != nil {
			return err
		}
		c.saved(sctx, p, path)
		now, err := c.waitDiagnostics(sctx, p, path, v, seq, deadline)
		if err != nil {
			return err
		}
		out = render(introduced(old, now, string(before), string(after)))
		return nil
	})
	if err != nil {
		return failed(ctx, err, gaveUp)
	}
	return out
}

// failed words an error of Check: the caller's cancellation says
// nothing, a timeout says it gave up.
func failed(ctx context.Context, err error, gaveUp func() string) string {
	switch {
	case ctx.Err() != nil:
		return ""
	case errors.Is(err, errGaveUp), errors.Is(err, context.DeadlineExceeded):
		return gaveUp()
	default:
		return fmt.Sprintf("\n\n(Diagnostics not checked: %v.)", err)
	}
}

// introduced returns the diagnostics of now that old lacks: matched by
// severity, message, source and code, at the line old's diagnostic moved
// to with the edit (lines before the changed region stay, lines after it
// move by the change in line count; a diagnostic inside it is new).
func introduced(old, now []Diagnostic, before, after string) []Diagnostic {
	move := lineMover(before, after)
	used := make([]bool, len(old))
	var out []Diagnostic
	for _, d := range now {
		found := false
		for i, o := range old {
			if used[i] || o.Message != d.Message || o.Severity != d.Severity || o.Source != d.Source || string(o.Code) != string(d.Code) {
				continue
			}
			if l, ok := move(o.Range.Start.Line); ok && l == d.Range.Start.Line {
				used[i], found = true, true
				break
			}
		}
		if !found {
			out = append(out, d)
		}
	}
	return out
}

// lineMover maps a line of before to its line in after: the lines both
// texts share at their start stay, those they share at their end move by
// the difference in length; the lines between changed (ok false).
func lineMover(before, after string) func(uint32) (uint32, bool) {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	pre := 0
	for pre < len(b) && pre < len(a) && b[pre] == a[pre] {
		pre++
	}
	suf := 0
	for suf < len(b)-pre && suf < len(a)-pre && b[len(b)-1-suf] == a[len(a)-1-suf] {
		suf++
	}
	return func(l uint32) (uint32, bool) {
		switch n := int(l); {
		case n < pre:
			return l, true
		case n >= len(b)-suf:
			return uint32(n + len(a) - len(b)), true
		}
		return 0, false
	}
}

// group is the diagnostics of one file (or notebook cell): its name,
// the text's lines, and the line the group starts at in them.
type group struct {
	name   string
	diags  []Diagnostic
	lines  []string
	offset int
}

// formatNew renders the new errors and warnings of one file; see
// formatGroups.
func formatNew(name string, ds []Diagnostic, text string) string {
	return formatGroups([]group{{name: name, diags: ds, lines: strings.Split(text, "\n")}})
}

// formatGroups renders new errors and warnings in Claude Code's wrapper:
// per group its name, then errors first and warnings, each by position;
// at most maxPerFile lines a group, maxInAll in all, and maxBlockSize
// characters. Lines are 1-based from the group's start, columns in
// characters. Information and hints are left out; "" when nothing
// remains.
func formatGroups(groups []group) string {
	head := "\n\n<new-diagnostics>The following new diagnostic issues were detected:\n"
	tailS := "</new-diagnostics>"
	var b strings.Builder
	b.WriteString(head)
	shown, found := 0, false
	for _, g := range groups {
		var keep []Diagnostic
		for _, d := range g.diags {
			if sev(d) <= DiagnosticSeverityWarning {
				keep = append(keep, d)
			}
		}
		if len(keep) == 0 {
			continue
		}
		sort.SliceStable(keep, func(i, j int) bool {
			a, b := keep[i], keep[j]
			if sev(a) != sev(b) {
				return sev(a) < sev(b)
			}
			if a.Range.Start.Line != b.Range.Start.Line {
				return a.Range.Start.Line < b.Range.Start.Line
			}
			return a.Range.Start.Character < b.Range.Start.Character
		})
		found = true
		b.WriteString("\n" + g.name + ":\n")
		n := 0
		for _, d := range keep {
			if n == maxPerFile || shown == maxInAll {
				break
			}
			l := diagLine(d, g.lines, g.offset)
			if b.Len()+len(l)+len(tailS)+40 > maxBlockSize {
				break
			}
			b.WriteString(l)
			n++
			shown++
		}
		if rest := len(keep) - n; rest > 0 {
			fmt.Fprintf(&b, "  … and %d more\n", rest)
		}
	}
	if !found {
		return ""
	}
	b.WriteString(tailS)
	return b.String()
}

func sev(d Diagnostic) DiagnosticSeverity {
	if d.Severity == 0 {
		return DiagnosticSeverityError // a server that leaves it out means an error
	}
	return d.Severity
}

// diagLine is `  ✘ [Line L:C] message [code] (source)`, 1-based, the
// line counted from offset.
func diagLine(d Diagnostic, lines []string, offset int) string {
	sym := "✘"
	switch sev(d) {
	case DiagnosticSeverityWarning:
		sym = "⚠"
	case DiagnosticSeverityInformation:
		sym = "ℹ"
	case DiagnosticSeverityHint:
		sym = "★"
	}
	line := int(d.Range.Start.Line)
	col := int(d.Range.Start.Character)
	if line < len(lines) {
		col = runeColumn(lines[line], d.Range.Start.Character)
	}
	msg := strings.Join(strings.Fields(d.Message), " ")
	var b strings.Builder
	fmt.Fprintf(&b, "  %s [Line %d:%d] %s", sym, line-offset+1, col+1, msg)
	if code := codeText(d); code != "" {
		fmt.Fprintf(&b, " [%s]", code)
	}
	if d.Source != "" {
		fmt.Fprintf(&b, " (%s)", d.Source)
	}
	b.WriteByte('\n')
	return b.String()
}

func codeText(d Diagnostic) string {
	c := strings.TrimSpace(string(d.Code))
	if c == "" || c == "null" {
		return ""
	}
	if s, err := strconv.Unquote(c); err == nil {
		return s
	}
	return c
}

// runeColumn converts a UTF-16 offset in line to a count of characters.
func runeColumn(line string, units uint32) int {
	n, u := 0, uint32(0)
	for _, r := range line {
		if u >= units {
			break
		}
		u += uint32(utf16.RuneLen(r))
		n++
	}
	return n
}

// utf16Offset converts a character count in line to UTF-16 units.
func utf16Offset(line string, chars int) uint32 {
	u := uint32(0)
	for i := 0; i < chars && line != ""; i++ {
		r, size := utf8.DecodeRuneInString(line)
		line = line[size:]
		u += uint32(utf16.RuneLen(r))
	}
	return u
}
