package fs

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/agent-mcp/agent-mcp/tools"
)

// notebook is the part of the Jupyter format the file tools use. Unknown
// fields are kept by the writers through json.RawMessage maps.
type notebook struct {
	Cells    []notebookCell  `json:"cells"`
	Metadata json.RawMessage `json:"metadata"`
	NBFormat int             `json:"nbformat"`
	Minor    int             `json:"nbformat_minor"`
}

type notebookCell struct {
	ID             string            `json:"id,omitempty"`
	CellType       string            `json:"cell_type"`
	Source         multiline         `json:"source"`
	Outputs        []json.RawMessage `json:"outputs,omitempty"`
	ExecutionCount *int              `json:"execution_count,omitempty"`
}

// multiline is Jupyter's text: a string or a list of strings.
type multiline string

func (m *multiline) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = multiline(s)
		return nil
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("notebook text must be a string or a list of strings: %w", err)
	}
	*m = multiline(strings.Join(parts, ""))
	return nil
}

// notebookOutput is one cell output, as far as rendering needs it.
type notebookOutput struct {
	OutputType string               `json:"output_type"`
	Text       multiline            `json:"text"`
	Name       string               `json:"name"`
	Data       map[string]multiline `json:"data"`
	EName      string               `json:"ename"`
	EValue     string               `json:"evalue"`
	Traceback  []string             `json:"traceback"`
}

// readNotebook renders the notebook f (abs is its path) cell by cell with
// ids, types, sources and outputs, and records the file for the session.
func readNotebook(f *os.File, abs string, info fs.FileInfo, uc *tools.UseContext) (*tools.Result, error) {
	data, err := readAll(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	var nb notebook
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, fmt.Errorf("cannot read notebook %s: it is not valid notebook JSON: %w", abs, err)
	}
	uc.Session.RecordFile(abs, tools.FileState{Fingerprint: sha256.Sum256(data), ModTime: info.ModTime(), Size: info.Size()})
	var b strings.Builder
	for i, c := range nb.Cells {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("cell-%d", i)
		}
		fmt.Fprintf(&b, "<cell id=%q type=%q>\n%s\n</cell>\n", id, c.CellType, strings.TrimRight(string(c.Source), "\n"))
		for _, raw := range c.Outputs {
			var o notebookOutput
			if json.Unmarshal(raw, &o) != nil {
				continue
			}
			if text := renderOutput(o); text != "" {
				fmt.Fprintf(&b, "<output cell=%q type=%q>\n%s\n</output>\n", id, o.OutputType, strings.TrimRight(text, "\n"))
			}
		}
	}
	text := strings.TrimRight(b.String(), "\n")
	if text == "" {
		text = fmt.Sprintf("The notebook %s has no cells.", abs)
	}
	return &tools.Result{
		Output: ReadOutput{Type: "notebook", File: ReadFileInfo{FilePath: abs, Content: text, NumLines: len(nb.Cells)}},
		Text:   text,
	}, nil
}

func renderOutput(o notebookOutput) string {
	switch o.OutputType {
	case "stream":
		return string(o.Text)
	case "error":
		return o.EName + ": " + o.EValue
	default:
		if t, ok := o.Data["text/plain"]; ok {
			return string(t)
		}
		for mime := range o.Data {
			if strings.HasPrefix(mime, "image/") {
				return "[" + mime + " output]"
			}
		}
	}
	return ""
}
