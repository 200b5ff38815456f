package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed write.md
var writeDescription string

// WriteInput is Write's input.
type WriteInput struct {
	FilePath string `json:"file_path" jsonschema:"Path of the file to write (absolute, or relative to the current directory)"`
	Content  string `json:"content" jsonschema:"The complete content the file will hold"`
}

// WriteOutput is Write's structured output.
type WriteOutput struct {
	// Type is "create" for a new file, "update" for a replaced one.
	Type     string `json:"type"`
	FilePath string `json:"filePath"`
	// The text written is not echoed back: the caller has it, and a host
	// that shows the model this object would put it in the context twice.
	// StructuredPatch is the change to an updated file (absent when it is
	// too large to describe inline).
	StructuredPatch []patchHunk `json:"structuredPatch,omitempty"`
	// Lines and Bytes measure the file as written.
	Lines int   `json:"lines"`
	Bytes int64 `json:"bytes"`
}

// Write returns the Write tool; o adds language-server diagnostics to
// its results (the zero Options: none).
func Write(o Options) *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "Write",
		Description: writeDescription,
		SearchHint:  "create or overwrite a file",
		Core:        true,
	}, tools.Handler[WriteInput]{
		Validate: func(_ context.Context, in *WriteInput, uc *tools.UseContext) error {
			if strings.TrimSpace(in.FilePath) == "" {
				return errors.New("file_path must not be empty: give the path of the file to write")
			}
			return preflightWrite(uc, in.FilePath, nil, false)
		},
		Call: func(ctx context.Context, in *WriteInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
			return runWrite(ctx, in, uc, p, o.Diagnostics)
		},
	})
}

func runWrite(ctx context.Context, in *WriteInput, uc *tools.UseContext, _ tools.Progress, diags Diagnostics) (*tools.Result, error) {
	s := uc.Session
	w, err := openForWrite(ctx, s, uc.Resolve(in.FilePath))
	if err != nil {
		return nil, err
	}
	defer w.release()
	var content string
	var data []byte
	var kept []string
	for attempt := 0; ; attempt++ {
		content, data, kept, err = prepareWrite(w, in.Content)
		if err != nil {
			if attempt > 0 {
				return nil, changedMeanwhileError(w.abs, err)
			}
			return nil, err
		}
		err = w.commit(ctx, s, data)
		if !errors.Is(err, errFileChanged) {
			break
		}
		if attempt == maxCommitAttempts {
			return nil, conflictError(w.abs)
		}
	}
	if err != nil {
		return nil, err
	}

	out := WriteOutput{Type: "create", FilePath: w.abs, Lines: countLines(content), Bytes: int64(len(data))}
	verb := "Created"
	var before []byte
	if w.exists() {
		out.Type, verb = "update", "Updated"
		before = mustBody(w.data)
		out.StructuredPatch = structuredPatch(before, readOnlyBytes(content))
	}
	text := fmt.Sprintf("%s %s (%s, %s). Your view of the file is current: it holds exactly the content you wrote.",
		verb, w.abs, plural(out.Lines, "line"), tools.FormatSize(out.Bytes))
	if len(kept) > 0 {
		text += " The file's " + strings.Join(kept, " and ") + " were kept."
	}
	w.release() // the language server's wait holds no lock
	text += checkChange(ctx, diags, s, w.abs, before, readOnlyBytes(content))
	return &tools.Result{Output: out, Text: text}, nil
}

// prepareWrite checks that the caller may replace the file w holds and
// returns the text to write (in the file's own line endings), its encoded
// bytes, and the parts of the file's format that were kept.
func prepareWrite(w *writeFile, content string) (string, []byte, []string, error) {
	var format textFormat
	var kept []string
	if w.exists() {
		switch w.fresh {
		case notRead:
			return "", nil, nil, notReadError(w.abs)
		case changed:
			return "", nil, nil, changedError(w.abs)
		}
		// Keep the file's encoding, byte-order mark and line endings.
		if _, f, err := decodeText(w.data); err == nil {
			format = f
		}
		content = strings.TrimPrefix(content, "\ufeff")
		content = withLineEndings(content, format)
		kept = formatNotes(format)
	}
	// Plain UTF-8 is written straight from the content: no copy of it is
	// made, so a Write holds its content once (encodeText copies only to
	// add a byte-order mark or to re-encode).
	return content, encodeText(readOnlyBytes(content), format), kept, nil
}

// readOnlyBytes is the bytes of s without a copy. They must never be
// changed: the write path only reads them (to write, hash and diff).
func readOnlyBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// formatNotes names the parts of a file's format a write preserved that
// differ from plain UTF-8 with LF line endings.
func formatNotes(f textFormat) []string {
	var notes []string
	switch {
	case f.enc == encUTF16LE:
		notes = append(notes, "UTF-16LE encoding")
	case f.enc == encUTF16BE:
		notes = append(notes, "UTF-16BE encoding")
	case f.bom:
		notes = append(notes, "byte-order mark")
	}
	if f.crlf {
		notes = append(notes, "CRLF line endings")
	}
	return notes
}

// mustBody is a file's text for diffing: decoded when it is text, the raw
// bytes otherwise.
func mustBody(data []byte) []byte {
	if body, _, err := decodeText(data); err == nil {
		return body
	}
	return data
}

// countLines counts the lines of s: a final line without a newline counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// plural renders "1 line", "3 lines".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
