package orchestrator

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Pool is the set of tools a session can call: built-ins sorted by name,
// then upstream MCP tools sorted by name, no name twice.
type Pool struct {
	tools      []*tools.Tool
	byName     map[string]*tools.Tool
	validators map[string]*inputValidator
	builtins   int
}

// Filter decides whether a tool that is enabled belongs in the pool (deny
// rules that name the whole tool, the permission mode). Nil keeps all.
type Filter func(t *tools.Tool) bool

// AssemblePool builds the pool in Claude Code's three steps: take all base
// tools; keep those that are enabled and pass filter; order the built-ins
// by name, then the MCP tools by name, dropping any MCP tool whose name a
// built-in already has (built-ins win) and any later duplicate.
func AssemblePool(builtins, mcpTools []*tools.Tool, filter Filter) (*Pool, error) {
	keep := func(ts []*tools.Tool) []*tools.Tool {
		var out []*tools.Tool
		for _, t := range ts {
			if !t.Disabled && (filter == nil || filter(t)) {
				out = append(out, t)
			}
		}
		slices.SortStableFunc(out, func(a, b *tools.Tool) int { return strings.Compare(a.Name, b.Name) })
		return out
	}
	p := &Pool{byName: map[string]*tools.Tool{}, validators: map[string]*inputValidator{}}
	add := func(t *tools.Tool) error {
		if _, dup := p.byName[t.Name]; dup {
			return nil
		}
		v, err := newInputValidator(t.InputSchema)
		if err != nil {
			return fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		p.tools = append(p.tools, t)
		p.byName[t.Name] = t
		p.validators[t.Name] = v
		return nil
	}
	for _, t := range keep(builtins) {
		if err := add(t); err != nil {
			return nil, err
		}
	}
	p.builtins = len(p.tools)
	for _, t := range keep(mcpTools) {
		if err := add(t); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Tools lists the pool in order.
func (p *Pool) Tools() []*tools.Tool { return slices.Clone(p.tools) }

// Builtins is how many of Tools are built-in (they come first).
func (p *Pool) Builtins() int { return p.builtins }

// Find returns the tool called name, by its name first, then by alias.
func (p *Pool) Find(name string) (*tools.Tool, bool) {
	if t, ok := p.byName[name]; ok {
		return t, true
	}
	for _, t := range p.tools {
		if slices.Contains(t.Aliases, name) {
			return t, true
		}
	}
	return nil, false
}

// Subset is the pool of p's tools that keep accepts, in the same order.
func (p *Pool) Subset(keep func(t *tools.Tool) bool) *Pool {
	q := &Pool{byName: map[string]*tools.Tool{}, validators: map[string]*inputValidator{}}
	for i, t := range p.tools {
		if !keep(t) {
			continue
		}
		q.tools = append(q.tools, t)
		q.byName[t.Name] = t
		q.validators[t.Name] = p.validators[t.Name]
		if i < p.builtins {
			q.builtins++
		}
	}
	return q
}
