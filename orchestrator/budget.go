package orchestrator

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Persisted describes a result saved to disk because it was over budget.
type Persisted struct {
	// Path is the file holding the full text.
	Path string
	// URI names the same file as an MCP resource of the session.
	URI string
	// Name is the file's base name.
	Name string
	// Size is the full text's size in bytes.
	Size int64
}

// ResultURIPrefix starts the URI of every persisted result; the rest is the
// file's name inside the session's results directory.
const ResultURIPrefix = "agent-mcp://results/"

// previewChars is how much of a persisted result stays inline.
const previewChars = 2000

// resultsDir is where a session's persisted results live.
func resultsDir(s *tools.Session) string { return filepath.Join(s.StateDir(), "results") }

// ResultPath maps a result resource URI to its file in the session, or
// reports false for a URI that is not one of this session's results.
func ResultPath(s *tools.Session, uri string) (string, bool) {
	name, ok := strings.CutPrefix(uri, ResultURIPrefix)
	if !ok || name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return "", false
	}
	return filepath.Join(resultsDir(s), name), true
}

// applyBudget replaces a result whose text is longer than the tool's
// maxResultSizeChars with the <persisted-output> preview, saving the full
// text in the session's results directory. It reports what it saved, or
// nil when the result was within budget.
func applyBudget(s *tools.Session, t *tools.Tool, callID string, res *tools.Result) (*Persisted, error) {
	limit := t.MaxResultSizeChars
	if limit == tools.Unlimited || limit <= 0 || res.IsError || len(res.Text) <= limit {
		return nil, nil
	}
	if utf8.RuneCountInString(res.Text) <= limit {
		return nil, nil
	}
	dir := resultsDir(s)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("saving large result: %w", err)
	}
	name := safeName(t.Name) + "-" + safeName(callID)
	if callID == "" {
		name = safeName(t.Name) + "-" + tools.RandomID()[:12]
	}
	name += ".txt"
	path := filepath.Join(dir, name)
	size := int64(len(res.Text))
	if res.FullText != nil {
		n, err := copyFrom(path, res.FullText)
		if err != nil {
			return nil, fmt.Errorf("saving large result: %w", err)
		}
		size = n
	} else if err := os.WriteFile(path, []byte(res.Text), 0o600); err != nil {
		return nil, fmt.Errorf("saving large result: %w", err)
	}
	p := &Persisted{Path: path, URI: ResultURIPrefix + name, Name: name, Size: size}
	full := res.Text
	res.Text = persistedBlock(full, path, size, res.FullTextNote)
	if res.Output != nil {
		res.Output = persistedOutput(res.Output, p, full, limit)
	}
	return p, nil
}

// persistedOutput is the output object of a persisted result. The preview
// travels in it too: a host that shows the model the structured form
// instead of the text (Claude Code, Codex CLI) must not lose it. An object
// over the budget is replaced by where the full text is and the preview;
// a smaller one keeps its fields and gains the same under
// "persistedOutput".
func persistedOutput(out any, p *Persisted, full string, limit int) any {
	preview, _ := previewOf(full)
	b, err := json.Marshal(out)
	if err != nil {
		return out
	}
	if utf8.RuneCount(b) > limit {
		return map[string]any{
			"persistedOutputPath": p.Path,
			"persistedOutputUri":  p.URI,
			"originalSize":        p.Size,
			"truncated":           true,
			"preview":             preview,
		}
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return out
	}
	m["persistedOutput"] = map[string]any{
		"path": p.Path, "uri": p.URI, "originalSize": p.Size, "preview": preview,
	}
	return m
}

// persistedPreview renders the <persisted-output> block that stands in for
// text saved at path (docs/tools.md §1).
func persistedPreview(text, path string) string {
	return persistedBlock(text, path, int64(len(text)), "")
}

// persistedBlock renders the <persisted-output> block for an output of
// size bytes saved at path, text being its beginning; note, when set, says
// what the saved output lacks.
func persistedBlock(text, path string, size int64, note string) string {
	preview, more := previewOf(text)
	var b strings.Builder
	b.WriteString("<persisted-output>\n")
	fmt.Fprintf(&b, "Output too large (%s). Full output saved to: %s\n\n", tools.FormatSize(size), path)
	if note != "" {
		b.WriteString(note + "\n\n")
	}
	b.WriteString("Preview (first 2KB):\n")
	b.WriteString(preview)
	if more {
		if !strings.HasSuffix(preview, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("...\n")
	} else if !strings.HasSuffix(preview, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("</persisted-output>")
	return b.String()
}

// previewOf takes the first 2000 characters of text, cut back to the last
// newline when that newline lies past character 1000, and reports whether
// anything was left out.
func previewOf(text string) (string, bool) {
	if utf8.RuneCountInString(text) <= previewChars {
		return text, false
	}
	// Byte offset of the 2000th character.
	n, end := 0, len(text)
	for i := range text {
		if n == previewChars {
			end = i
			break
		}
		n++
	}
	head := text[:end]
	if nl := strings.LastIndexByte(head, '\n'); nl >= 0 && utf8.RuneCountInString(head[:nl]) > previewChars/2 {
		head = head[:nl]
	}
	return head, true
}

// copyFrom copies in to a new file dst (mode 0600), streaming,
// and returns how many bytes it copied.
func copyFrom(dst string, in io.Reader) (int64, error) {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return 0, err
	}
	return n, nil
}

func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() > 64 {
		return b.String()[:64]
	}
	return b.String()
}
