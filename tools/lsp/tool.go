package lsp

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed lsp.md
var description string

// MaxResultSizeChars is the LSP tool's result budget.
const MaxResultSizeChars = 30_000

// maxLocations bounds the lines of one answer.
const maxLocations = 200

// Operations are the LSP tool's operations, as Claude Code names them.
var Operations = []any{"goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol",
	"goToImplementation", "prepareCallHierarchy", "incomingCalls", "outgoingCalls"}

// Input is the LSP tool's input.
type Input struct {
	Operation string `json:"operation" jsonschema:"The operation to perform"`
	FilePath  string `json:"filePath" jsonschema:"The file to ask about (absolute, or relative to the current directory)"`
	Line      int    `json:"line" jsonschema:"The line number, 1-based as editors show it"`
	Character int    `json:"character" jsonschema:"The character offset in the line, 1-based as editors show it"`
	Query     string `json:"query,omitempty" jsonschema:"The symbol name to search for (workspaceSymbol only)"`
}

// Paths says the LSP tool reads filePath (see tools.PathInput); the
// locations it answers with are checked as they are shown.
func (in *Input) Paths(*tools.UseContext) []tools.PathAccess {
	return []tools.PathAccess{{Path: in.FilePath}}
}

// Tool returns the LSP tool, asking the servers of s; nil when s is nil
// (no server configured or found), so the tool is not listed.
func Tool(s *Service) *tools.Tool {
	if s == nil {
		return nil
	}
	return tools.New(tools.Tool{
		Name:               "LSP",
		Description:        description,
		SearchHint:         "definitions, references, symbols from a language server",
		MaxResultSizeChars: MaxResultSizeChars,
		ReadOnly:           true,
		ConcurrencySafe:    true,
	}, tools.Handler[Input]{
		Schema: func(sc *jsonschema.Schema) {
			tools.Prop(sc, "operation").Enum = Operations
			tools.Prop(sc, "line").Minimum = tools.Ptr(1.0)
			tools.Prop(sc, "character").Minimum = tools.Ptr(1.0)
		},
		Validate: func(_ context.Context, in *Input, _ *tools.UseContext) error {
			if strings.TrimSpace(in.FilePath) == "" {
				return errors.New("filePath must not be empty: give the file to ask about")
			}
			if in.Line < 1 || in.Character < 1 {
				return fmt.Errorf("line and character are 1-based (got line %d, character %d): give the position as an editor shows it", in.Line, in.Character)
			}
			if in.Operation == "workspaceSymbol" && strings.TrimSpace(in.Query) == "" {
				return errors.New("query must not be empty for workspaceSymbol: give the symbol name to search for")
			}
			return nil
		},
		Call: func(ctx context.Context, in *Input, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			return s.run(ctx, in, uc)
		},
	})
}

// run performs one operation.
func (s *Service) run(ctx context.Context, in *Input, uc *tools.UseContext) (*tools.Result, error) {
	path := uc.Resolve(in.FilePath)
	c, lang, ok := s.clientFor(uc.Session, path)
	if !ok {
		return nil, fmt.Errorf("no language server handles %s files (configured: %s): configure one in lspServers or .lsp.json", filepath.Ext(path), s.names())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	lines := strings.Split(string(data), "\n")
	if in.Line > len(lines) {
		return nil, fmt.Errorf("line %d is past the end of %s, which has %d lines", in.Line, path, len(lines))
	}
	pos := Position{Line: uint32(in.Line - 1), Character: utf16Offset(strings.TrimSuffix(lines[in.Line-1], "\r"), in.Character-1)}
	tdp := TextDocumentPositionParams{TextDocument: TextDocumentIdentifier{URI: fileURI(path)}, Position: pos}
	r := &render{uc: uc, cache: map[string][]string{path: lines}}
	call := func(method string, params, result any) error {
		return c.call(ctx, path, lang, method, params, result)
	}
	switch in.Operation {
	case "goToDefinition", "goToImplementation":
		method := "textDocument/definition"
		if in.Operation == "goToImplementation" {
			method = "textDocument/implementation"
		}
		var raw json.RawMessage
		if err := call(method, tdp, &raw); err != nil {
			return nil, err
		}
		for _, l := range decodeLocations(raw) {
			r.location(l, "")
		}
	case "findReferences":
		var locs []Location
		if err := call("textDocument/references", ReferenceParams{TextDocument: tdp.TextDocument, Position: tdp.Position, Context: ReferenceContext{IncludeDeclaration: true}}, &locs); err != nil {
			return nil, err
		}
		for _, l := range locs {
			r.location(l, "")
		}
	case "hover":
		var h *Hover
		if err := call("textDocument/hover", tdp, &h); err != nil {
			return nil, err
		}
		if h != nil {
			r.text = hoverText(h.Contents)
		}
	case "documentSymbol":
		var raw json.RawMessage
		if err := call("textDocument/documentSymbol", DocumentSymbolParams{TextDocument: tdp.TextDocument}, &raw); err != nil {
			return nil, err
		}
		r.symbols(path, raw)
	case "workspaceSymbol":
		var syms []SymbolInformation
		if err := call("workspace/symbol", WorkspaceSymbolParams{Query: in.Query}, &syms); err != nil {
			return nil, err
		}
		for _, sy := range syms {
			r.location(sy.Location, symbolKind(sy.Kind)+" "+sy.Name)
		}
	case "prepareCallHierarchy", "incomingCalls", "outgoingCalls":
		var items []CallHierarchyItem
		if err := call("textDocument/prepareCallHierarchy", tdp, &items); err != nil {
			return nil, err
		}
		if in.Operation == "prepareCallHierarchy" {
			for _, it := range items {
				r.location(Location{URI: it.URI, Range: it.SelectionRange}, symbolKind(it.Kind)+" "+it.Name)
			}
			break
		}
		for _, it := range items {
			if in.Operation == "incomingCalls" {
				var calls []CallHierarchyIncomingCall
				if err := call("callHierarchy/incomingCalls", CallHierarchyIncomingCallsParams{Item: it}, &calls); err != nil {
					return nil, err
				}
				for _, cl := range calls {
					for _, fr := range cl.FromRanges {
						r.location(Location{URI: cl.From.URI, Range: fr}, "in "+cl.From.Name)
					}
				}
				continue
			}
			var calls []CallHierarchyOutgoingCall
			if err := call("callHierarchy/outgoingCalls", CallHierarchyOutgoingCallsParams{Item: it}, &calls); err != nil {
				return nil, err
			}
			for _, cl := range calls {
				r.location(Location{URI: cl.To.URI, Range: cl.To.SelectionRange}, symbolKind(cl.To.Kind)+" "+cl.To.Name)
			}
		}
	default:
		return nil, fmt.Errorf("operation %q is not one of %v", in.Operation, Operations)
	}
	return &tools.Result{Text: r.finish(in.Operation, c.cfg.Command)}, nil
}

func (s *Service) names() string {
	var n []string
	for _, c := range s.opts.Servers {
		if c.Path != "" {
			n = append(n, c.Name)
		}
	}
	return strings.Join(n, ", ")
}

// decodeLocations reads Location | Location[] | LocationLink[] | null.
func decodeLocations(raw json.RawMessage) []Location {
	var one Location
	if json.Unmarshal(raw, &one) == nil && one.URI != "" {
		return []Location{one}
	}
	var many []Location
	if json.Unmarshal(raw, &many) == nil && (len(many) == 0 || many[0].URI != "") {
		return many
	}
	var links []LocationLink
	if json.Unmarshal(raw, &links) == nil {
		out := make([]Location, len(links))
		for i, l := range links {
			out[i] = Location{URI: l.TargetURI, Range: l.TargetSelectionRange}
		}
		return out
	}
	return nil
}

// hoverText reads MarkupContent | MarkedString | MarkedString[].
func hoverText(raw json.RawMessage) string {
	var mc MarkupContent
	if json.Unmarshal(raw, &mc) == nil && mc.Value != "" {
		return strings.TrimSpace(mc.Value)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			if t := hoverText(p); t != "" {
				out = append(out, t)
			}
		}
		return strings.Join(out, "\n\n")
	}
	return ""
}

// render collects an answer's lines: locations as path:line:col with an
// excerpt, within the working directories and outside Read deny rules.
type render struct {
	uc     *tools.UseContext
	cache  map[string][]string
	lines  []string
	hidden int
	more   int
	text   string
}

func (r *render) location(l Location, label string) {
	if len(r.lines) == maxLocations {
		r.more++
		return
	}
	path, err := uriPath(l.URI)
	if err != nil {
		return
	}
	if r.uc.ReadDenied != nil && r.uc.ReadDenied(filepath.Clean(path), false) {
		r.hidden++
		return
	}
	line := int(l.Range.Start.Line)
	src := r.source(path)
	col := int(l.Range.Start.Character)
	excerpt := ""
	if line < len(src) {
		text := strings.TrimSuffix(src[line], "\r")
		col = runeColumn(text, l.Range.Start.Character)
		excerpt = strings.TrimSpace(text)
		if len(excerpt) > 200 {
			excerpt = excerpt[:200] + "…"
		}
	}
	s := fmt.Sprintf("%s:%d:%d", r.uc.Session.Display(path), line+1, col+1)
	if label != "" {
		s += " " + label
	}
	if excerpt != "" {
		s += ": " + excerpt
	}
	r.lines = append(r.lines, s)
}

// source returns the lines of path, for excerpts: only of files inside
// the session's working directories (a location elsewhere, such as the
// standard library, is shown without one).
func (r *render) source(path string) []string {
	if l, ok := r.cache[path]; ok {
		return l
	}
	var lines []string
	inside := false
	for _, w := range r.uc.Session.WorkDirs() {
		if within(path, w) {
			inside = true
		}
	}
	if inside {
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			f.Close()
		}
	}
	r.cache[path] = lines
	return lines
}

// symbols renders DocumentSymbol[] (nested, indented) or
// SymbolInformation[].
func (r *render) symbols(path string, raw json.RawMessage) {
	var ds []DocumentSymbol
	if json.Unmarshal(raw, &ds) == nil && (len(ds) == 0 || ds[0].SelectionRange != (Range{}) || ds[0].Range != (Range{})) {
		var walk func([]DocumentSymbol, string)
		walk = func(list []DocumentSymbol, indent string) {
			for _, d := range list {
				r.location(Location{URI: fileURI(path), Range: d.SelectionRange}, indent+symbolKind(d.Kind)+" "+d.Name)
				walk(d.Children, indent+"  ")
			}
		}
		walk(ds, "")
		return
	}
	var si []SymbolInformation
	if json.Unmarshal(raw, &si) == nil {
		for _, s := range si {
			r.location(s.Location, symbolKind(s.Kind)+" "+s.Name)
		}
	}
}

func (r *render) finish(op, server string) string {
	var b strings.Builder
	switch {
	case r.text != "":
		b.WriteString(r.text)
	case len(r.lines) == 0:
		fmt.Fprintf(&b, "%s found nothing for %s at this position.", server, op)
	default:
		b.WriteString(strings.Join(r.lines, "\n"))
	}
	if r.more > 0 {
		fmt.Fprintf(&b, "\n… and %d more", r.more)
	}
	if r.hidden > 0 {
		fmt.Fprintf(&b, "\n(%d results in files a Read deny rule covers are not shown.)", r.hidden)
	}
	return b.String()
}

// symbolKind names a SymbolKind.
func symbolKind(k SymbolKind) string {
	names := []string{"", "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor",
		"enum", "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object",
		"key", "null", "enum member", "struct", "event", "operator", "type parameter"}
	if int(k) < len(names) && k > 0 {
		return names[k]
	}
	return "symbol"
}
