package cli

import (
	"os"
	"strings"
	"testing"
)

// TestPrivateRows_areTheDocsTable: what `sandbox check` and `doctor` say
// is private by default (privateRows) is docs/sandbox.md's table of it,
// row for row, each line saying how to open what it holds.
func TestPrivateRows_areTheDocsTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/sandbox.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "**What is private by default, and how to open it.**")
	if !ok {
		t.Fatal("docs/sandbox.md has no table of what is private by default")
	}
	var cells []string
	inTable := false
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if cell == "what" || strings.HasPrefix(cell, "---") {
			continue
		}
		cells = append(cells, cell)
	}
	rows := privateRows(nil)
	for _, c := range cells {
		if strings.HasPrefix(c, "the server's environment") {
			continue // envLine says it
		}
		found := false
		for _, r := range rows {
			found = found || strings.HasPrefix(c, r.doc)
		}
		if !found {
			t.Errorf("the table's row %q is said by neither sandbox check nor doctor (privateRows)", c)
		}
	}
	for _, r := range rows {
		found := false
		for _, c := range cells {
			found = found || strings.HasPrefix(c, r.doc)
		}
		if !found {
			t.Errorf("privateRows says %q, which the table in docs/sandbox.md has no row for", r.doc)
		}
		if r.line == "" {
			t.Errorf("row %q: no line", r.doc)
		}
	}
}
