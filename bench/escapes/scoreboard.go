//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"

	"github.com/agent-mcp/agent-mcp/e2e/attackcorpus"
)

// families are the scoreboard's rows, in order, each with the case name
// prefixes that belong to it.
var families = []struct {
	name     string
	prefixes []string
}{
	{"writes", []string{"write-", "output-file-", "private-tmp-", "state-", "build-cache-"}},
	{"reads", []string{"read-", "mask-"}},
	{"protected names", []string{"protected-", "build-config-", "mandatory-"}},
	{"git", []string{"git-"}},
	{"network", []string{"egress-", "network-", "unix-socket-"}},
	{"credentials", []string{"credential-", "env-"}},
	{"processes", []string{"lockdown-", "nested-", "excluded-command-", "process-", "limits-"}},
	{"the terminal", []string{"terminal-"}},
	{"what is typed", []string{"typed-"}},
}

// family names a case's family by its name; "other" for a name no family
// claims.
func family(name string) string {
	for _, f := range families {
		for _, p := range f.prefixes {
			if strings.HasPrefix(name, p) {
				return f.name
			}
		}
	}
	return "other"
}

type caseRow struct {
	c       *attackcorpus.Case
	results []result // one a tool, in the scoreboard's order
}

type scoreboard struct {
	tools []tool
	rows  []caseRow
}

// count is held/applicable of the rows of a family ("" for all) in tool
// i, and how many of the applicable ones did not run.
func (b *scoreboard) count(fam string, i int) (held, applicable, notRun int) {
	for _, r := range b.rows {
		if fam != "" && family(r.c.Name) != fam {
			continue
		}
		if res := r.results[i]; res.na == "" {
			applicable++
			switch {
			case res.held():
				held++
			case res.ranNot():
				notRun++
			}
		}
	}
	return
}

// summary is the scoreboard table: held / applicable per family and tool.
func (b *scoreboard) summary() string {
	var s strings.Builder
	s.WriteString("| family |")
	for _, t := range b.tools {
		s.WriteString(" " + t.name() + " |")
	}
	s.WriteString("\n|---|" + strings.Repeat("---|", len(b.tools)) + "\n")
	names := []string{}
	for _, f := range families {
		names = append(names, f.name)
	}
	names = append(names, "other")
	for _, f := range append(names, "") {
		any := false
		for _, r := range b.rows {
			if f == "" || family(r.c.Name) == f {
				any = true
			}
		}
		if !any {
			continue
		}
		label := f
		if f == "" {
			label = "**all**"
		}
		s.WriteString("| " + label + " |")
		for i := range b.tools {
			h, a, n := b.count(f, i)
			cell := fmt.Sprintf(" %d / %d", h, a)
			if n > 0 {
				cell += fmt.Sprintf(" (%d not run)", n)
			}
			s.WriteString(cell + " |")
		}
		s.WriteString("\n")
	}
	return s.String()
}

// cases is the table of every case: its family and what became of it in
// each tool.
func (b *scoreboard) cases() string {
	var s strings.Builder
	s.WriteString("| case | family |")
	for _, t := range b.tools {
		s.WriteString(" " + t.name() + " |")
	}
	s.WriteString("\n|---|---|" + strings.Repeat("---|", len(b.tools)) + "\n")
	for _, r := range b.rows {
		s.WriteString(fmt.Sprintf("| %s | %s |", r.c.Name, family(r.c.Name)))
		for _, res := range r.results {
			m := res.mark()
			if res.na != "" {
				m = "n/a: " + res.na
			}
			s.WriteString(" " + m + " |")
		}
		s.WriteString("\n")
	}
	return s.String()
}

// open lists the cases a peer holds and agent-mcp does not.
func (b *scoreboard) open() string {
	var s strings.Builder
	for _, r := range b.rows {
		if r.results[0].held() || r.results[0].na != "" {
			continue
		}
		var by []string
		for i, res := range r.results[1:] {
			if res.held() {
				by = append(by, b.tools[i+1].name())
			}
		}
		if len(by) > 0 {
			s.WriteString(fmt.Sprintf("- open: `%s` (%s) is held by %s and not by agent-mcp: %s\n",
				r.c.Name, family(r.c.Name), strings.Join(by, " and "), strings.Join(r.results[0].failed, "; ")))
		}
	}
	if s.Len() == 0 {
		s.WriteString("No case a peer holds escapes agent-mcp.\n")
	}
	var declared strings.Builder
	for _, r := range b.rows {
		if r.c.Open != "" {
			declared.WriteString(fmt.Sprintf("- declared open in the corpus: `%s` (%s): %s\n", r.c.Name, family(r.c.Name), r.c.Open))
		}
	}
	if declared.Len() > 0 {
		s.WriteString("\nCases the corpus itself declares open (`open:`), held by no layer of agent-mcp yet:\n\n" + declared.String())
	}
	return s.String()
}

// machine says where the run was made and what ran.
func machine(tools []tool, cred *syscall.Credential) string {
	uid := os.Getuid()
	if cred != nil {
		uid = int(cred.Uid)
	}
	var s strings.Builder
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	load, _ := os.ReadFile("/proc/loadavg")
	s.WriteString(fmt.Sprintf("- machine: %s/%s, Linux %s, %d CPUs, run as uid %d; load average at the end of the run: %s\n",
		runtime.GOOS, runtime.GOARCH, strings.TrimSpace(string(kernel)), runtime.NumCPU(), uid,
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " ")))
	for _, t := range tools {
		s.WriteString(fmt.Sprintf("- %s: %s\n", t.name(), t.version()))
	}
	if out, err := runLimited([]string{"bwrap", "--version"}, "/", os.Environ(), nil); err == nil {
		s.WriteString("- floor: " + strings.TrimSpace(out) + " (Debian's)\n")
	}
	for _, t := range tools {
		s.WriteString("\n**" + t.name() + "**: " + t.config() + "\n")
	}
	return s.String()
}

// The markers around each generated part of the document.
const (
	markScore   = "scoreboard"
	markCases   = "cases"
	markOpen    = "open"
	markCost    = "cost"
	markMachine = "machine"
)

func begin(name string) string {
	return "<!-- escapes:" + name + " begin (written by go run ./bench/escapes) -->\n"
}
func end(name string) string { return "<!-- escapes:" + name + " end -->" }

// replaceBetween puts text between a marker pair of doc.
func replaceBetween(doc []byte, name, text string) ([]byte, error) {
	b, e := []byte(begin(name)), []byte(end(name))
	i := bytes.Index(doc, b)
	j := bytes.Index(doc, e)
	if i < 0 || j < i {
		return nil, fmt.Errorf("the document lacks the markers %q … %q", strings.TrimSpace(begin(name)), end(name))
	}
	out := append([]byte{}, doc[:i+len(b)]...)
	out = append(out, text...)
	return append(out, doc[j:]...), nil
}

// writeDoc rewrites the generated parts of the document.
func writeDoc(path string, b *scoreboard, costs *costTable, mach string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	parts := map[string]string{markScore: b.summary(), markCases: b.cases(), markOpen: b.open()}
	if mach != "" {
		parts[markMachine] = mach
	}
	if costs != nil {
		parts[markCost] = costs.markdown()
	}
	for _, name := range []string{markScore, markCases, markOpen, markCost, markMachine} {
		text, ok := parts[name]
		if !ok {
			continue
		}
		if doc, err = replaceBetween(doc, name, text); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return os.WriteFile(path, doc, 0o644)
}

// docCases reads the case names of the document's case table.
func docCases(doc []byte) ([]string, error) {
	b, e := []byte(begin(markCases)), []byte(end(markCases))
	i, j := bytes.Index(doc, b), bytes.Index(doc, e)
	if i < 0 || j < i {
		return nil, fmt.Errorf("the document lacks the case table's markers")
	}
	var names []string
	for _, l := range strings.Split(string(doc[i+len(b):j]), "\n") {
		f := strings.Split(l, "|")
		if len(f) < 3 {
			continue
		}
		n := strings.TrimSpace(f[1])
		if n == "case" || strings.HasPrefix(n, "---") || n == "" {
			continue
		}
		names = append(names, n)
	}
	return names, nil
}

// docRows reads the document's case table: each case's family-less row
// of marks, one a tool, for the tools of its header.
func docRows(doc []byte) (tools []string, rows map[string][]string, err error) {
	b, e := []byte(begin(markCases)), []byte(end(markCases))
	i, j := bytes.Index(doc, b), bytes.Index(doc, e)
	if i < 0 || j < i {
		return nil, nil, fmt.Errorf("the document lacks the case table's markers")
	}
	rows = map[string][]string{}
	for _, l := range strings.Split(string(doc[i+len(b):j]), "\n") {
		f := strings.Split(l, "|")
		if len(f) < 4 {
			continue
		}
		for k := range f {
			f[k] = strings.TrimSpace(f[k])
		}
		cells := f[1 : len(f)-1]
		switch {
		case cells[0] == "case":
			tools = cells[2:]
		case strings.HasPrefix(cells[0], "---"):
		default:
			rows[cells[0]] = cells[2:]
		}
	}
	return tools, rows, nil
}

// resultOf reads back a mark of the case table.
func resultOf(mark string) (result, error) {
	switch {
	case mark == "held":
		return result{}, nil
	case mark == "ESCAPED":
		return result{failed: []string{"escaped (in the earlier run: see its outputs there)"}}, nil
	case mark == "not run":
		return result{failed: []string{"the command did not run (did the command run?)"}}, nil
	case strings.HasPrefix(mark, "n/a: "):
		return result{na: strings.TrimPrefix(mark, "n/a: ")}, nil
	}
	return result{}, fmt.Errorf("mark %q: want held, ESCAPED, not run or n/a: REASON", mark)
}

// mergeDoc completes the board with the earlier run's rows of the
// document for the corpus's cases this run did not run, in the corpus's
// order; a corpus case in neither is an error naming it.
func (b *scoreboard) mergeDoc(path string, corpus []*attackcorpus.Case) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	tools, rows, err := docRows(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for i, t := range b.tools {
		if i >= len(tools) || tools[i] != t.name() {
			return fmt.Errorf("%s: its case table's tools are %v, this run's differ: run them all", path, tools)
		}
	}
	ran := map[string]caseRow{}
	for _, r := range b.rows {
		ran[r.c.Name] = r
	}
	var merged []caseRow
	for _, c := range corpus {
		if r, ok := ran[c.Name]; ok {
			merged = append(merged, r)
			continue
		}
		marks, ok := rows[c.Name]
		if !ok {
			return fmt.Errorf("%s is in neither this run nor %s: add it to -cases", c.Name, path)
		}
		row := caseRow{c: c}
		for _, m := range marks {
			r, err := resultOf(m)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", path, c.Name, err)
			}
			row.results = append(row.results, r)
		}
		merged = append(merged, row)
	}
	b.rows = merged
	return nil
}
