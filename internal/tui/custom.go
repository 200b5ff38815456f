package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Custom slash commands: Markdown files in .claude/commands/ of the
// project and of the home directory (the project's win). The file
// commands/NAME.md is /NAME, commands/DIR/NAME.md is /DIR:NAME. Its text,
// without a YAML front matter, is sent as the prompt with $ARGUMENTS
// replaced by what follows the command (appended when the text has no
// $ARGUMENTS). The front matter's description (else the first line) is
// what /help shows.

// customCommand is one command file.
type customCommand struct {
	name, path, description string
}

// customCommands lists the commands of the project dir and of home.
func customCommands(dir, home string) []customCommand {
	found := map[string]customCommand{}
	for _, root := range []string{home, dir} { // the project's last, so they win
		if root == "" {
			continue
		}
		base := filepath.Join(root, ".claude", "commands")
		_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return nil
			}
			rel, _ := filepath.Rel(base, p)
			name := strings.ReplaceAll(strings.TrimSuffix(rel, ".md"), string(filepath.Separator), ":")
			found[name] = customCommand{name: name, path: p}
			return nil
		})
	}
	out := make([]customCommand, 0, len(found))
	for _, c := range found {
		if body, err := readCommand(c.path); err == nil {
			c.description = body.description
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

type commandBody struct {
	text, description string
}

// maxCommandFile bounds a command file.
const maxCommandFile = 256 << 10

var frontMatter = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)\A---\r?\n(.*?)\r?\n---\r?\n?`) })

func readCommand(path string) (commandBody, error) {
	info, err := os.Stat(path)
	if err != nil {
		return commandBody{}, err
	}
	if info.Size() > maxCommandFile {
		return commandBody{}, fmt.Errorf("%s is larger than %d KiB", path, maxCommandFile>>10)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return commandBody{}, err
	}
	text := string(b)
	var body commandBody
	if m := frontMatter().FindStringSubmatch(text); m != nil {
		text = text[len(m[0]):]
		for _, l := range strings.Split(m[1], "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "description:"); ok {
				body.description = strings.Trim(strings.TrimSpace(v), `"'`)
			}
		}
	}
	body.text = strings.TrimSpace(text)
	if body.description == "" {
		body.description = firstLine(strings.TrimLeft(body.text, "# "))
	}
	return body, nil
}

// expandCommand is the prompt custom command c sends with args.
func expandCommand(c customCommand, args string) (string, error) {
	body, err := readCommand(c.path)
	if err != nil {
		return "", err
	}
	if strings.Contains(body.text, "$ARGUMENTS") {
		return strings.ReplaceAll(body.text, "$ARGUMENTS", args), nil
	}
	if args != "" {
		return body.text + "\n\nARGUMENTS: " + args, nil
	}
	return body.text, nil
}

// Attaching files: a prompt's @path words that name a file of the working
// directory (or an absolute path) bring the file's text along.
const maxAttach = 256 << 10

var atPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@([^\s]+)`) })

// attachFiles appends the files the prompt names with @path, returning
// the prompt to send and the paths attached.
func attachFiles(prompt, cwd string) (string, []string) {
	var b strings.Builder
	var attached []string
	seen := map[string]bool{}
	for _, m := range atPath().FindAllStringSubmatch(prompt, -1) {
		rel := strings.TrimRight(m[1], ".,;:!?)")
		if seen[rel] {
			continue
		}
		seen[rel] = true
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		info, err := os.Stat(p)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(data) {
			continue
		}
		note := ""
		if len(data) > maxAttach {
			data, note = data[:maxAttach], fmt.Sprintf(" (first %d KiB of %d)", maxAttach>>10, info.Size()>>10)
		}
		fmt.Fprintf(&b, "\n\n<file path=%q%s>\n%s\n</file>", rel, note, strings.TrimRight(string(data), "\n"))
		attached = append(attached, rel)
	}
	return prompt + b.String(), attached
}
