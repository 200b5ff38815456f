package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agent-mcp/agent-mcp/tools"
)

// notebook is the code of a Jupyter notebook as one document: its code
// cells in order, each starting at a line of the text.
type notebook struct {
	language string
	text     string
	cells    []nbCell
}

type nbCell struct {
	id          string
	start, size int // lines
}

// readNotebook takes a notebook's JSON apart; ok is false when it is not
// one.
func readNotebook(data []byte) (nb notebook, ok bool) {
	var raw struct {
		Cells []struct {
			ID       string          `json:"id"`
			CellType string          `json:"cell_type"`
			Source   json.RawMessage `json:"source"`
		} `json:"cells"`
		Metadata struct {
			LanguageInfo struct {
				Name string `json:"name"`
			} `json:"language_info"`
			Kernelspec struct {
				Language string `json:"language"`
			} `json:"kernelspec"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return nb, false
	}
	nb.language = strings.ToLower(raw.Metadata.LanguageInfo.Name)
	if nb.language == "" {
		nb.language = strings.ToLower(raw.Metadata.Kernelspec.Language)
	}
	if nb.language == "" {
		nb.language = "python"
	}
	var b strings.Builder
	line := 0
	for i, c := range raw.Cells {
		if c.CellType != "code" {
			continue
		}
		var src string
		var parts []string
		if json.Unmarshal(c.Source, &src) != nil {
			if json.Unmarshal(c.Source, &parts) != nil {
				continue
			}
			src = strings.Join(parts, "")
		}
		if !strings.HasSuffix(src, "\n") {
			src += "\n"
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("cell-%d", i)
		}
		n := strings.Count(src, "\n")
		nb.cells = append(nb.cells, nbCell{id: id, start: line, size: n})
		b.WriteString(src)
		line += n
	}
	nb.text = b.String()
	return nb, true
}

// extensionFor is an extension a server handles for language.
func (s *Service) extensionFor(language string) (string, bool) {
	var exts []string
	for ext := range s.byExt {
		c := s.opts.Servers[s.byExt[ext]]
		for e, l := range c.ExtensionToLanguage {
			if strings.EqualFold(e, ext) && strings.EqualFold(l, language) {
				exts = append(exts, ext)
			}
		}
	}
	if len(exts) == 0 {
		return "", false
	}
	sort.Strings(exts)
	return exts[0], true
}

// checkNotebook is Check for a notebook: the server sees its code cells
// as one document beside it (path plus the language's extension, never
// written to disk), and the new diagnostics are listed per cell, lines
// counted in the cell.
func (s *Service) checkNotebook(ctx context.Context, sess *tools.Session, path string, before, after []byte) string {
	nbAfter, ok := readNotebook(after)
	if !ok {
		return ""
	}
	ext, ok := s.extensionFor(nbAfter.language)
	if !ok {
		return ""
	}
	var beforeText []byte
	if nbBefore, ok := readNotebook(before); ok && before != nil {
		beforeText = []byte(nbBefore.text)
	}
	virtual := path + ext
	return s.check(ctx, sess, virtual, beforeText, []byte(nbAfter.text), func(ds []Diagnostic) string {
		var groups []group
		lines := strings.Split(nbAfter.text, "\n")
		for _, c := range nbAfter.cells {
			g := group{name: fmt.Sprintf("%s cell %s", filepath.Base(path), c.id), lines: lines, offset: c.start}
			for _, d := range ds {
				if l := int(d.Range.Start.Line); l >= c.start && l < c.start+c.size {
					g.diags = append(g.diags, d)
				}
			}
			if len(g.diags) > 0 {
				groups = append(groups, g)
			}
		}
		return formatGroups(groups)
	})
}
