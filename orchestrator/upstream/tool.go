package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/tools"
)

// convertResult maps an MCP tool result onto a tools.Result: text blocks
// join into Text, images and links become Extra blocks, embedded text
// resources are inlined, and structuredContent becomes Output.
func convertResult(res *mcp.CallToolResult) *tools.Result {
	out := &tools.Result{IsError: res.IsError}
	var texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			out.Extra = append(out.Extra, tools.Content{Kind: tools.ImageContent, MIMEType: c.MIMEType, Data: c.Data})
		case *mcp.AudioContent:
			texts = append(texts, fmt.Sprintf("[audio content of type %s, %s, not shown]", c.MIMEType, tools.FormatSize(int64(len(c.Data)))))
		case *mcp.ResourceLink:
			var size int64
			if c.Size != nil {
				size = *c.Size
			}
			out.Extra = append(out.Extra, tools.Content{Kind: tools.LinkContent, URI: c.URI, Name: c.Name, MIMEType: c.MIMEType, Size: size})
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" {
					texts = append(texts, r.Text)
				} else {
					texts = append(texts, fmt.Sprintf("[resource %s (%s, %s)]", r.URI, r.MIMEType, tools.FormatSize(int64(len(r.Blob)))))
				}
			}
		}
	}
	out.Text = strings.Join(texts, "\n")
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && len(b) > 0 && b[0] == '{' {
			out.Output = res.StructuredContent
			if out.Text == "" {
				out.Text = string(b)
			}
		}
	}
	return out
}

// adapt builds the pool tool for a remote tool: its input is the raw JSON
// arguments (the upstream server validates them further), its facts are
// the server's annotations, and a call is forwarded to the server
// (restarting it first if it died). Read-only tools may run beside
// others.
func adapt(srv *server, name string, rt *mcp.Tool) *tools.Tool {
	t := tools.Tool{Name: name, Description: rt.Description, OpenWorld: true, Upstream: srv.cfg.Name}
	if t.Description == "" {
		t.Description = fmt.Sprintf("The %s tool of the %s MCP server.", rt.Name, srv.cfg.Name)
	}
	if a := rt.Annotations; a != nil {
		t.ReadOnly = a.ReadOnlyHint
		t.ConcurrencySafe = a.ReadOnlyHint
		t.Idempotent = a.IdempotentHint
		if a.DestructiveHint != nil && !a.ReadOnlyHint {
			t.NonDestructive = !*a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			t.OpenWorld = *a.OpenWorldHint
		}
	}
	t.InputSchema = inputSchema(rt.InputSchema)
	remote := rt.Name
	return tools.NewRaw(t, func(ctx context.Context, args json.RawMessage, uc *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
		res, err := srv.call(ctx, remote, args, progress, uc)
		if err != nil {
			return nil, err
		}
		return convertResult(res), nil
	})
}

// inputSchema turns a server's inputSchema into a schema the pipeline can
// validate against: local $refs are inlined (the validator checks each
// property on its own), the type is object, and a property schema that
// still cannot be resolved is relaxed to accept any value rather than
// losing the whole tool.
func inputSchema(raw any) *jsonschema.Schema {
	var m map[string]any
	switch v := raw.(type) {
	case map[string]any:
		m = v
	case nil:
	default:
		b, _ := json.Marshal(v)
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	defs := map[string]any{}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := m[k].(map[string]any); ok {
			for name, s := range d {
				defs["#/"+k+"/"+name] = s
			}
		}
	}
	m = inline(m, defs, 0).(map[string]any)
	delete(m, "$defs")
	delete(m, "definitions")
	delete(m, "$schema")
	delete(m, "$id")
	m["type"] = "object"
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	b, _ := json.Marshal(m)
	s := &jsonschema.Schema{}
	if err := json.Unmarshal(b, s); err != nil {
		s = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	for name, p := range s.Properties {
		if p == nil {
			s.Properties[name] = &jsonschema.Schema{}
			continue
		}
		if _, err := p.Resolve(nil); err != nil {
			s.Properties[name] = &jsonschema.Schema{Description: p.Description}
		}
	}
	return s
}

// inline replaces {"$ref": "#/$defs/X"} by the definition, to a bounded
// depth (recursive definitions end as an unconstrained schema).
func inline(v any, defs map[string]any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			if def, ok := defs[ref]; ok && depth < 8 {
				return inline(def, defs, depth+1)
			}
			// A reference that cannot be followed leaves the value
			// unconstrained; its description stays.
			out := map[string]any{}
			if d, ok := x["description"]; ok {
				out["description"] = d
			}
			return out
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "$defs" || k == "definitions" {
				if depth > 0 {
					continue
				}
			}
			out[k] = inline(e, defs, depth)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = inline(e, defs, depth)
		}
		return out
	}
	return v
}
