package lsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func diag(line, col uint32, sev DiagnosticSeverity, msg string) Diagnostic {
	return Diagnostic{Range: Range{Start: Position{Line: line, Character: col}}, Severity: sev, Message: msg, Source: "compiler"}
}

func TestIntroducedFollowsTheEdit(t *testing.T) {
	t.Parallel()
	before := "a\nb\nc\nd\n"
	after := "a\nX\nY\nc\nd\n" // b replaced by two lines
	old := []Diagnostic{diag(0, 0, DiagnosticSeverityError, "at a"), diag(1, 0, DiagnosticSeverityError, "at b"), diag(3, 2, DiagnosticSeverityError, "at d")}
	now := []Diagnostic{
		diag(0, 0, DiagnosticSeverityError, "at a"),   // unchanged line: old
		diag(4, 2, DiagnosticSeverityError, "at d"),   // moved down one line with the edit: old
		diag(1, 0, DiagnosticSeverityError, "at b"),   // inside the changed lines: new
		diag(3, 0, DiagnosticSeverityError, "at d"),   // same message, line the edit did not move it to: new
		diag(0, 0, DiagnosticSeverityWarning, "at a"), // another severity: new
	}
	got := introduced(old, now, before, after)
	if len(got) != 3 || got[0].Message != "at b" || got[1].Range.Start.Line != 3 || got[2].Severity != DiagnosticSeverityWarning {
		t.Errorf("introduced: %+v", got)
	}
}

func TestFormatNew(t *testing.T) {
	t.Parallel()
	// 𝄞 is two UTF-16 code units: y is at offset 13, the 13th character.
	text := "package main\n\nfunc main() {\n\tx := \"𝄞\" + y\n}\n"
	ds := []Diagnostic{
		diag(3, 13, DiagnosticSeverityWarning, "a warning"),
		{Range: Range{Start: Position{Line: 3, Character: 13}}, Severity: DiagnosticSeverityError, Message: "undefined:\n y", Source: "compiler", Code: json.RawMessage(`"UndeclaredName"`)},
		diag(0, 0, DiagnosticSeverityHint, "a hint"),
	}
	got := formatNew("main.go", ds, text)
	want := "\n\n<new-diagnostics>The following new diagnostic issues were detected:\n\nmain.go:\n" +
		"  ✘ [Line 4:13] undefined: y [UndeclaredName] (compiler)\n" +
		"  ⚠ [Line 4:13] a warning (compiler)\n" +
		"</new-diagnostics>"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if formatNew("main.go", []Diagnostic{diag(0, 0, DiagnosticSeverityHint, "h")}, text) != "" {
		t.Error("hints alone make a block")
	}
	// At most ten lines, and within 4,000 characters.
	var many []Diagnostic
	for i := range 25 {
		many = append(many, diag(uint32(i), 0, DiagnosticSeverityError, fmt.Sprintf("error %d %s", i, strings.Repeat("x", 20))))
	}
	got = formatNew("f.go", many, "")
	if strings.Count(got, "✘") != 10 || !strings.Contains(got, "… and 15 more") {
		t.Errorf("ten of 25:\n%s", got)
	}
	long := []Diagnostic{}
	for i := range 10 {
		long = append(long, diag(uint32(i), 0, DiagnosticSeverityError, strings.Repeat("y", 900)))
	}
	if got = formatNew("f.go", long, ""); len(got) > maxBlockSize || !strings.Contains(got, "more") {
		t.Errorf("%d characters, want at most %d with a count of the rest", len(got), maxBlockSize)
	}
}
