package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines bounds the README: it is the entry page, the reference
// lives in docs/.
const readmeMaxLines = 300

// TestReadmeIsAnEntryPage holds the README to its promise: the two commands
// first, at most readmeMaxLines lines, and a link to every page of docs/.
func TestReadmeIsAnEntryPage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference text to docs/", len(lines), readmeMaxLines)
	}
	if len(lines) < 4 || lines[2] != "Serve the tools from a fresh clone: `go run . serve`" ||
		lines[3] != "Run the tests: `go test -race -count=1 ./...`" {
		t.Errorf("README.md's lines 3 and 4 must be the two commands, `go run . serve` and `go test -race -count=1 ./...`; got %q", lines[:min(4, len(lines))])
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md: is the test run from the module root?")
	}
	linked := map[string]bool{}
	for _, l := range markdownLinks(text) {
		file, _, _ := strings.Cut(l.target, "#")
		linked[path.Clean(file)] = true
	}
	for _, p := range pages {
		if !linked[filepath.ToSlash(p)] {
			t.Errorf("README.md does not link %s", p)
		}
	}
}

// TestDocLinksResolve checks every relative link of README.md and
// docs/*.md: the file it names exists, and its #anchor is a heading there.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md")
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			file, anchor, hasAnchor := strings.Cut(l.target, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s:%d: link %q: %s does not exist", page, l.line, l.target, target)
				continue
			}
			if !hasAnchor {
				continue
			}
			tb, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
				continue
			}
			if !headingAnchors(string(tb))[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", page, l.line, l.target, target, anchor)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d relative links read: is the test run from the module root?", checked)
	}
}

// TestMarkdownHelpers pins the link reader and the anchor rule to cases
// whose answers GitHub gives.
func TestMarkdownHelpers(t *testing.T) {
	t.Parallel()
	doc := "# Title\n\n## 3. Write, Edit, MultiEdit\n\n## The bundled agent: `agent-mcp chat`\n\n## Title\n\n" +
		"See [a](x.md#y) and `[not](code.md)`.\n\n```\n[not](fenced.md)\n```\n\n[b](https://example.com) [c](#title-1)\n"
	anchors := headingAnchors(doc)
	for _, want := range []string{"title", "3-write-edit-multiedit", "the-bundled-agent-agent-mcp-chat", "title-1"} {
		if !anchors[want] {
			t.Errorf("anchor %q missing from %v", want, anchors)
		}
	}
	var got []string
	for _, l := range markdownLinks(doc) {
		got = append(got, l.target)
	}
	if want := []string{"x.md#y", "https://example.com", "#title-1"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("links = %q, want %q", got, want)
	}
}

type mdLink struct {
	target string
	line   int
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

// markdownLinks returns the inline links of a Markdown text, outside fenced
// code blocks and code spans.
func markdownLinks(text string) []mdLink {
	var links []mdLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			links = append(links, mdLink{target: m[1], line: i + 1})
		}
	}
	return links
}

// headingAnchors returns the anchors GitHub gives a text's headings:
// lowercased, spaces to hyphens, punctuation other than hyphens and
// underscores dropped, and -1, -2, ... on repeats.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a] = n + 1
			a = a + "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}
