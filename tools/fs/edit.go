package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed edit.md
var editDescription string

// EditInput is Edit's input.
type EditInput struct {
	FilePath   string `json:"file_path" jsonschema:"Path of the file to change (absolute, or relative to the current directory)"`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace; empty to create a file that does not exist yet"`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place (must differ from old_string)"`
	ReplaceAll *bool  `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string instead of requiring exactly one (default false)"`
}

// EditOutput is Edit's structured output.
type EditOutput struct {
	// The strings given are not echoed back (the caller has them); the
	// patch shows the change.
	FilePath   string `json:"filePath"`
	ReplaceAll bool   `json:"replaceAll"`
	// Replacements counts the places changed.
	Replacements int `json:"replacements"`
	// Created is true when an empty old_string created the file.
	Created bool `json:"created,omitempty"`
	// StructuredPatch is the change (absent when too large to describe).
	StructuredPatch []patchHunk `json:"structuredPatch,omitempty"`
	// UnseenChanges is true when the file had changed since it was read
	// and the edit applied anyway (it still matched exactly once).
	UnseenChanges bool `json:"unseenChanges,omitempty"`
	// QuotesAdapted is true when old_string matched only once curly and
	// straight quotes were treated alike.
	QuotesAdapted bool `json:"quotesAdapted,omitempty"`
}

// Edit returns the Edit tool; o adds language-server diagnostics to
// its results (the zero Options: none).
func Edit(o Options) *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "Edit",
		Description: editDescription,
		SearchHint:  "replace exact text in a file",
		Core:        true,
	}, tools.Handler[EditInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Default(s, "replace_all", false)
		},
		Validate: func(_ context.Context, in *EditInput, uc *tools.UseContext) error {
			if err := validateEditPath(in.FilePath); err != nil {
				return err
			}
			if in.OldString == in.NewString {
				return errors.New("old_string and new_string are identical, so the edit would change nothing: give the new text in new_string")
			}
			spec := editSpec{Old: in.OldString, New: in.NewString, ReplaceAll: in.ReplaceAll != nil && *in.ReplaceAll}
			return preflightWrite(uc, in.FilePath, []editSpec{spec}, false)
		},
		Call: func(ctx context.Context, in *EditInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			spec := editSpec{Old: in.OldString, New: in.NewString, ReplaceAll: in.ReplaceAll != nil && *in.ReplaceAll}
			r, err := editFile(ctx, uc.Session, uc.Resolve(in.FilePath), []editSpec{spec}, false)
			if err != nil {
				return nil, err
			}
			out := EditOutput{
				FilePath: r.w.abs, ReplaceAll: spec.ReplaceAll,
				Replacements: r.counts[0], Created: r.created, StructuredPatch: r.patch,
				UnseenChanges: r.unseen, QuotesAdapted: r.quotes,
			}
			text := r.text() + checkChange(ctx, o.Diagnostics, uc.Session, r.w.abs, r.before(), r.body)
			return &tools.Result{Output: out, Text: text}, nil
		},
	})
}

// validateEditPath checks the file_path of Edit and MultiEdit.
func validateEditPath(p string) error {
	if strings.TrimSpace(p) == "" {
		return errors.New("file_path must not be empty: give the path of the file to edit")
	}
	if strings.EqualFold(filepath.Ext(p), ".ipynb") {
		return fmt.Errorf("%s is a Jupyter notebook: edit its cells with NotebookEdit instead", p)
	}
	return nil
}

// editResult is what editFile did.
type editResult struct {
	w       *writeFile
	counts  []int // replacements per edit
	created bool
	unseen  bool
	quotes  bool
	patch   []patchHunk
	// original and body are the text before and after the edits.
	original, body []byte
}

// editFile applies edits in order to the file at path, each to the result
// of the one before, and writes the outcome atomically: all edits apply or
// the file is untouched. multi selects MultiEdit's error wording, which
// names the failing edit's index.
//
// The file must have been read in the session. If it changed on disk
// since, the edits still apply when each matches exactly once, exactly as
// given (see applyEdit's strict mode); the result then says so.
func editFile(ctx context.Context, s *tools.Session, path string, edits []editSpec, multi bool) (*editResult, error) {
	w, err := openForWrite(ctx, s, path)
	if err != nil {
		return nil, err
	}
	defer w.release()
	for attempt := 0; ; attempt++ {
		r, data, err := computeEdits(ctx, w, s, edits, multi)
		if err != nil {
			if attempt > 0 && ctx.Err() == nil {
				return nil, changedMeanwhileError(w.abs, err)
			}
			return nil, err
		}
		err = w.commit(ctx, s, data)
		switch {
		case err == nil:
			r.patch = structuredPatch(r.original, r.body)
			return r, nil
		case !errors.Is(err, errFileChanged):
			return nil, err
		case attempt == maxCommitAttempts:
			return nil, conflictError(w.abs)
		}
		// Another program changed the file under the edit: w now holds
		// its new content, to which the edits apply again, strictly.
	}
}

// computeEdits applies edits to the content w holds and returns the
// result and the bytes to write.
func computeEdits(ctx context.Context, w *writeFile, s *tools.Session, edits []editSpec, multi bool) (*editResult, []byte, error) {
	where := func(i int) string {
		if !multi {
			return ""
		}
		return fmt.Sprintf("edits[%d] (edit %d of %d): ", i, i+1, len(edits))
	}
	r := &editResult{w: w, counts: make([]int, len(edits))}

	var body []byte
	var format textFormat
	first := 0
	switch {
	case !w.exists() && edits[0].Old == "":
		// An empty old_string creates the file.
		body = []byte(edits[0].New)
		r.created, r.counts[0], first = true, 1, 1
	case !w.exists():
		return nil, nil, fmt.Errorf("%s%v To create a new file, give an empty old_string (or use Write)", where(0), missingFileError(w.abs, s.Cwd()))
	default:
		switch w.fresh {
		case notRead:
			return nil, nil, notReadError(w.abs)
		case changed:
			r.unseen = true
		}
		var err error
		body, format, err = decodeText(w.data)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot edit %s: %w", w.abs, err)
		}
		if edits[0].Old == "" {
			if len(strings.TrimSpace(string(body))) > 0 {
				return nil, nil, fmt.Errorf("%sold_string is empty, which creates a new file, but %s already exists and is not empty: put the text to replace in old_string", where(0), w.abs)
			}
			if r.unseen {
				return nil, nil, changedError(w.abs)
			}
			body = []byte(withLineEndings(edits[0].New, format))
			r.counts[0], first = 1, 1
		}
	}
	if w.exists() {
		r.original = mustBody(w.data)
	}

	for i := first; i < len(edits); i++ {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		e := edits[i]
		if e.Old == "" {
			return nil, nil, fmt.Errorf("%sold_string is empty; only the first edit may have an empty old_string, to create a file", where(i))
		}
		applied, err := applyEdit(body, format, e, r.unseen)
		if err != nil {
			return nil, nil, fmt.Errorf("%s%w", where(i), describeMatchError(err, w.abs, body, e.Old))
		}
		body = applied.body
		r.counts[i] = applied.count
		r.quotes = r.quotes || applied.quotes
	}
	r.body = body
	return r, encodeText(body, format), nil
}

// before is the file's text before the edits; nil when the edit created
// it.
func (r *editResult) before() []byte {
	if r.created {
		return nil
	}
	return r.original
}

// text renders an edit's result for the model: what changed, a numbered
// snippet of the new text, and a note when the file held unseen changes.
func (r *editResult) text() string {
	var b strings.Builder
	total := 0
	for _, c := range r.counts {
		total += c
	}
	if r.created {
		fmt.Fprintf(&b, "Created %s.", r.w.abs)
	} else {
		fmt.Fprintf(&b, "Edited %s: %s.", r.w.abs, plural(total, "replacement"))
	}
	if r.quotes {
		b.WriteString(" old_string matched once curly and straight quotes were treated alike; the new text uses the file's quote style.")
	}
	if snip := snippet(r.patch); snip != "" {
		b.WriteString(" The lines around the change now read:\n")
		b.WriteString(snip)
	}
	if r.unseen {
		b.WriteString("\n\n" + unseenChangesNote(r.w.abs))
	}
	return b.String()
}

// snippetMaxLines bounds the numbered excerpt shown after an edit.
const snippetMaxLines = 40

// snippet renders the new side of a patch as Read does: line number, tab,
// text.
func snippet(hunks []patchHunk) string {
	if len(hunks) == 0 {
		return ""
	}
	h := hunks[0]
	var lines []string
	n := h.NewStart
	if h.NewLines == 0 {
		return ""
	}
	for _, l := range h.Lines {
		if l[0] == '-' {
			continue
		}
		if len(lines) == snippetMaxLines {
			lines = append(lines, fmt.Sprintf("... (%d more lines)", h.NewLines-snippetMaxLines))
			break
		}
		lines = append(lines, fmt.Sprintf("%d\t%s", n, strings.TrimSuffix(l[1:], "\r")))
		n++
	}
	return strings.Join(lines, "\n")
}
