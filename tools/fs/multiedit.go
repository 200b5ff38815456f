package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed multiedit.md
var multiEditDescription string

// MultiEditInput is MultiEdit's input.
type MultiEditInput struct {
	FilePath string          `json:"file_path" jsonschema:"Path of the file to change (absolute, or relative to the current directory)"`
	Edits    []MultiEditItem `json:"edits" jsonschema:"Edits to apply in order, each to the result of the one before; all apply or none does"`
}

// MultiEditItem is one edit of a MultiEdit.
type MultiEditItem struct {
	OldString  string `json:"old_string" jsonschema:"The exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place (must differ from old_string)"`
	ReplaceAll *bool  `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string instead of requiring exactly one (default false)"`
}

// MultiEditOutput is MultiEdit's structured output.
type MultiEditOutput struct {
	// The edits given are not echoed back (the caller has them); the
	// patch shows the change.
	FilePath string `json:"filePath"`
	// Replacements counts the places each edit changed, by index.
	Replacements    []int       `json:"replacements"`
	Created         bool        `json:"created,omitempty"`
	StructuredPatch []patchHunk `json:"structuredPatch,omitempty"`
	UnseenChanges   bool        `json:"unseenChanges,omitempty"`
	QuotesAdapted   bool        `json:"quotesAdapted,omitempty"`
}

// MultiEdit returns the MultiEdit tool; o adds language-server
// diagnostics to its results (the zero Options: none).
func MultiEdit(o Options) *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "MultiEdit",
		Description: multiEditDescription,
		SearchHint:  "several text replacements in one file at once",
		Core:        true,
	}, tools.Handler[MultiEditInput]{
		Schema: func(s *jsonschema.Schema) {
			edits := tools.Prop(s, "edits")
			edits.MinItems = tools.Ptr(1)
			tools.Default(edits.Items, "replace_all", false)
		},
		Validate: func(_ context.Context, in *MultiEditInput, uc *tools.UseContext) error {
			if err := validateEditPath(in.FilePath); err != nil {
				return err
			}
			if len(in.Edits) == 0 {
				return errors.New("edits is empty: give at least one {old_string, new_string} edit")
			}
			for i, e := range in.Edits {
				if e.OldString == e.NewString {
					return fmt.Errorf("edits[%d] (edit %d of %d): old_string and new_string are identical, so the edit would change nothing", i, i+1, len(in.Edits))
				}
			}
			specs := make([]editSpec, len(in.Edits))
			for i, e := range in.Edits {
				specs[i] = editSpec{Old: e.OldString, New: e.NewString, ReplaceAll: e.ReplaceAll != nil && *e.ReplaceAll}
			}
			return preflightWrite(uc, in.FilePath, specs, true)
		},
		Call: func(ctx context.Context, in *MultiEditInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			specs := make([]editSpec, len(in.Edits))
			for i, e := range in.Edits {
				specs[i] = editSpec{Old: e.OldString, New: e.NewString, ReplaceAll: e.ReplaceAll != nil && *e.ReplaceAll}
			}
			r, err := editFile(ctx, uc.Session, uc.Resolve(in.FilePath), specs, true)
			if err != nil {
				return nil, err
			}
			out := MultiEditOutput{
				FilePath: r.w.abs, Replacements: r.counts, Created: r.created,
				StructuredPatch: r.patch, UnseenChanges: r.unseen, QuotesAdapted: r.quotes,
			}
			text := r.text() + checkChange(ctx, o.Diagnostics, uc.Session, r.w.abs, r.before(), r.body)
			return &tools.Result{Output: out, Text: text}, nil
		},
	})
}
