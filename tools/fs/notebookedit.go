package fs

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed notebookedit.md
var notebookEditDescription string

// NotebookEditInput is NotebookEdit's input.
type NotebookEditInput struct {
	NotebookPath string  `json:"notebook_path" jsonschema:"Path of the Jupyter notebook (.ipynb) to change (absolute, or relative to the current directory)"`
	CellID       *string `json:"cell_id,omitempty" jsonschema:"Id of the cell to replace or delete, or to insert after; omit it to insert at the top. Read shows each cell's id (cell-N, the position from 0, for notebooks without ids)"`
	NewSource    string  `json:"new_source" jsonschema:"The new source of the cell (ignored when deleting)"`
	CellType     *string `json:"cell_type,omitempty" jsonschema:"Type of the cell: code or markdown. Required when inserting; when replacing, defaults to the cell's current type"`
	EditMode     *string `json:"edit_mode,omitempty" jsonschema:"replace (default), insert or delete"`
}

// NotebookEditOutput is NotebookEdit's structured output.
type NotebookEditOutput struct {
	NotebookPath string `json:"notebookPath"`
	// CellID is the cell replaced, inserted or deleted.
	CellID   string `json:"cellId"`
	CellType string `json:"cellType"`
	EditMode string `json:"editMode"`
	// Language is the notebook's kernel language.
	Language string `json:"language"`
	// Cells is the number of cells after the edit.
	Cells int `json:"cells"`
}

const (
	editReplace = "replace"
	editInsert  = "insert"
	editDelete  = "delete"
)

// NotebookEdit returns the NotebookEdit tool; o adds language-server
// diagnostics of the code cells to its results (the zero Options: none).
func NotebookEdit(o Options) *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "NotebookEdit",
		Description: notebookEditDescription,
		SearchHint:  "edit, insert or delete a Jupyter notebook cell",
	}, tools.Handler[NotebookEditInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "cell_type").Enum = []any{"code", "markdown"}
			tools.Prop(s, "edit_mode").Enum = []any{editReplace, editInsert, editDelete}
			tools.Default(s, "edit_mode", editReplace)
		},
		Validate: func(_ context.Context, in *NotebookEditInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.NotebookPath) == "" {
				return errors.New("notebook_path must not be empty: give the path of the .ipynb file")
			}
			if !strings.EqualFold(filepath.Ext(in.NotebookPath), ".ipynb") {
				return fmt.Errorf("notebook_path %s is not a Jupyter notebook (.ipynb): use Edit for other files", in.NotebookPath)
			}
			switch mode := deref(in.EditMode, editReplace); mode {
			case editInsert:
				if in.CellType == nil {
					return errors.New(`cell_type is required when edit_mode is "insert": give "code" or "markdown"`)
				}
			case editReplace, editDelete:
				if in.CellID == nil || *in.CellID == "" {
					return fmt.Errorf("cell_id is required when edit_mode is %q: give the id of the cell (Read shows them)", mode)
				}
			}
			return nil
		},
		Call: func(ctx context.Context, in *NotebookEditInput, uc *tools.UseContext, p tools.Progress) (*tools.Result, error) {
			return runNotebookEdit(ctx, in, uc, p, o.Diagnostics)
		},
	})
}

func deref(p *string, dflt string) string {
	if p == nil {
		return dflt
	}
	return *p
}

// parseNotebook parses the notebook at abs, whose text is body: the
// notebook object (its members' order kept) and its cells.
func parseNotebook(abs string, body []byte) (*jsonObject, []any, error) {
	root, err := parseOrderedJSON(body)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot edit notebook %s: it is not valid JSON: %w", abs, err)
	}
	nb, ok := root.(*jsonObject)
	if !ok {
		return nil, nil, fmt.Errorf("cannot edit notebook %s: its JSON is not an object", abs)
	}
	cellsV, _ := nb.get("cells")
	cells, ok := cellsV.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("cannot edit notebook %s: it has no \"cells\" list", abs)
	}
	return nb, cells, nil
}

func runNotebookEdit(ctx context.Context, in *NotebookEditInput, uc *tools.UseContext, _ tools.Progress, diags Diagnostics) (*tools.Result, error) {
	s := uc.Session
	mode := deref(in.EditMode, editReplace)
	w, err := openForWrite(ctx, s, uc.Resolve(in.NotebookPath))
	if err != nil {
		return nil, err
	}
	defer w.release()
	if !w.exists() {
		return nil, fmt.Errorf("%v Create a notebook with Write first", missingFileError(w.abs, s.Cwd()))
	}
	switch w.fresh {
	case notRead:
		return nil, notReadError(w.abs)
	case changed:
		return nil, changedError(w.abs)
	}
	body, format, err := decodeText(w.data)
	if err != nil {
		return nil, fmt.Errorf("cannot edit notebook %s: %w", w.abs, err)
	}
	nb, cells, err := parseNotebook(w.abs, body)
	if err != nil {
		return nil, err
	}

	idx := -1 // index of the cell named by cell_id
	if in.CellID != nil && *in.CellID != "" {
		if idx = findCell(cells, *in.CellID); idx < 0 {
			return nil, fmt.Errorf("%s has no cell with id %q; its cells are: %s. Read the notebook to see them", w.abs, *in.CellID, cellIDList(cells))
		}
	}

	out := NotebookEditOutput{NotebookPath: w.abs, EditMode: mode, Language: notebookLanguage(nb)}
	var text string
	switch mode {
	case editReplace:
		cell := cells[idx].(*jsonObject)
		oldType := stringField(cell, "cell_type")
		newType := deref(in.CellType, oldType)
		cell.set("source", sourceValue(in.NewSource, cell))
		cell.set("cell_type", newType)
		out.CellID, out.CellType = cellID(cells, idx), newType
		text = fmt.Sprintf("Replaced the source of cell %s in %s.", out.CellID, w.abs)
		if newType != oldType {
			text = fmt.Sprintf("Replaced cell %s in %s, changing it from %s to %s.", out.CellID, w.abs, oldType, newType)
		}
		switch {
		case newType == "code":
			cell.set("outputs", []any{})
			cell.set("execution_count", nil)
			text += " Its outputs and execution count were cleared."
		case oldType == "code":
			cell.del("outputs")
			cell.del("execution_count")
		}
	case editInsert:
		cell := newCell(*in.CellType, in.NewSource, nb, cells)
		at := idx + 1 // 0, the top, without a cell_id
		cells = slices.Insert(cells, at, any(cell))
		nb.set("cells", cells)
		out.CellID, out.CellType = cellID(cells, at), *in.CellType
		if idx < 0 {
			text = fmt.Sprintf("Inserted a new %s cell %s at the top of %s.", out.CellType, out.CellID, w.abs)
		} else {
			text = fmt.Sprintf("Inserted a new %s cell %s in %s after cell %s.", out.CellType, out.CellID, w.abs, *in.CellID)
		}
	case editDelete:
		out.CellID = cellID(cells, idx)
		out.CellType = stringField(cells[idx].(*jsonObject), "cell_type")
		cells = slices.Delete(cells, idx, idx+1)
		nb.set("cells", cells)
		text = fmt.Sprintf("Deleted %s cell %s from %s.", out.CellType, out.CellID, w.abs)
	}
	out.Cells = len(cells)
	text += fmt.Sprintf(" The notebook now has %s.", plural(len(cells), "cell"))
	if mode != editReplace && !hasCellIDs(nb) {
		text += " Its cells have no ids, so cell-N ids are positions and have shifted."
	}

	newBody, err := encodeOrderedJSON(nb, detectJSONStyle(body))
	if err != nil {
		return nil, fmt.Errorf("cannot edit notebook %s: %w", w.abs, err)
	}
	if format.crlf {
		newBody = []byte(toCRLF(string(newBody)))
	}
	if err := w.commit(ctx, s, encodeText(newBody, format)); errors.Is(err, errFileChanged) {
		return nil, conflictError(w.abs)
	} else if err != nil {
		return nil, err
	}
	w.release() // the language server's wait holds no lock
	text += checkChange(ctx, diags, s, w.abs, body, newBody)
	return &tools.Result{Output: out, Text: text}, nil
}

// findCell returns the index of the cell with the given id, or of the
// cell at position N for an id "cell-N" no cell has; -1 if none.
func findCell(cells []any, id string) int {
	for i, c := range cells {
		if o, ok := c.(*jsonObject); ok && stringField(o, "id") == id {
			return i
		}
	}
	if n, ok := strings.CutPrefix(id, "cell-"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(cells) {
			if _, ok := cells[i].(*jsonObject); ok {
				return i
			}
		}
	}
	return -1
}

// cellID is the id Read shows for cell i: its own, or cell-i.
func cellID(cells []any, i int) string {
	if o, ok := cells[i].(*jsonObject); ok {
		if id := stringField(o, "id"); id != "" {
			return id
		}
	}
	return fmt.Sprintf("cell-%d", i)
}

// cellIDList names the cells for an error, at most 20 of them.
func cellIDList(cells []any) string {
	if len(cells) == 0 {
		return "none (the notebook is empty; insert a cell without cell_id)"
	}
	var ids []string
	for i := range cells {
		if i == 20 {
			ids = append(ids, fmt.Sprintf("... (%d cells in all)", len(cells)))
			break
		}
		ids = append(ids, cellID(cells, i))
	}
	return strings.Join(ids, ", ")
}

func stringField(o *jsonObject, k string) string {
	v, _ := o.get(k)
	s, _ := v.(string)
	return s
}

// hasCellIDs reports whether the notebook's format gives cells ids
// (nbformat 4.5 and later).
func hasCellIDs(nb *jsonObject) bool {
	major, _ := nb.get("nbformat")
	minor, _ := nb.get("nbformat_minor")
	num := func(v any) int64 {
		n, _ := v.(json.Number)
		i, _ := n.Int64()
		return i
	}
	ma, mi := num(major), num(minor)
	return ma > 4 || ma == 4 && mi >= 5
}

// sourceValue is src in the form the cell stored its source: a list of
// lines each ending in "\n" but the last (nbformat's form, also used for
// new cells), or one string when the cell had a string.
func sourceValue(src string, cell *jsonObject) any {
	if cell != nil {
		if v, ok := cell.get("source"); ok {
			if _, isString := v.(string); isString {
				return src
			}
		}
	}
	lines := []any{}
	for src != "" {
		i := strings.IndexByte(src, '\n')
		if i < 0 {
			lines = append(lines, src)
			break
		}
		lines = append(lines, src[:i+1])
		src = src[i+1:]
	}
	return lines
}

// newCell makes a cell of the given type, with a fresh id when the
// notebook's format has ids.
func newCell(cellType, src string, nb *jsonObject, cells []any) *jsonObject {
	c := newJSONObject()
	c.set("cell_type", cellType)
	if hasCellIDs(nb) {
		c.set("id", freshCellID(cells))
	}
	c.set("metadata", newJSONObject())
	if cellType == "code" {
		c.set("execution_count", nil)
		c.set("outputs", []any{})
	}
	c.set("source", sourceValue(src, nil))
	return c
}

// freshCellID makes an id no cell has: 8 hex digits, as Jupyter makes them.
func freshCellID(cells []any) string {
	for {
		id := tools.RandomID()[:8]
		if findCell(cells, id) < 0 {
			return id
		}
	}
}

// notebookLanguage is the notebook's kernel language, "python" when unsaid.
func notebookLanguage(nb *jsonObject) string {
	md, _ := nb.get("metadata")
	if m, ok := md.(*jsonObject); ok {
		for _, k := range []string{"language_info", "kernelspec"} {
			v, _ := m.get(k)
			if o, ok := v.(*jsonObject); ok {
				name := stringField(o, "name")
				if k == "kernelspec" {
					name = stringField(o, "language")
				}
				if name != "" {
					return name
				}
			}
		}
	}
	return "python"
}
