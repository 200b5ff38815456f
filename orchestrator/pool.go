package orchestrator

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Pool is the set of tools a session can call: built-ins sorted by name,
// then upstream MCP tools sorted by name, no name twice.
type Pool struct {
	tools  []*tools.Tool
	byName map[string]*tools.Tool
	// validators resolve each tool's input schema on the tool's first
	// call (see AssemblePool).
	validators map[string]func() (*inputValidator, error)
	builtins   int
}

// Filter decides whether a tool that is enabled belongs in the pool (deny
// rules that name the whole tool, the permission mode). Nil keeps all.
type Filter func(t *tools.Tool) bool

// AssemblePool builds the pool in Claude Code's three steps: take all base
// tools; keep those that are enabled and pass filter; order the built-ins
// by name, then the MCP tools by name, dropping any MCP tool whose name a
// built-in already has (built-ins win) and any later duplicate.
//
// An MCP tool's input schema, which comes from another server, is resolved
// here, and one that does not resolve fails the assembly naming the tool.
// A built-in's is resolved on the tool's first call: a server answers
// initialize without resolving schemas of tools nobody may call (the
// built-ins' tests resolve every one of them).
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
	p := &Pool{byName: map[string]*tools.Tool{}, validators: map[string]func() (*inputValidator, error){}}
	add := func(t *tools.Tool, now bool) error {
		if _, dup := p.byName[t.Name]; dup {
			return nil
		}
		v := sync.OnceValues(func() (*inputValidator, error) {
			v, err := newInputValidator(t.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
			}
			return v, nil
		})
		if now {
			if _, err := v(); err != nil {
				return err
			}
		}
		p.tools = append(p.tools, t)
		p.byName[t.Name] = t
		p.validators[t.Name] = v
		return nil
	}
	for _, t := range keep(builtins) {
		if err := add(t, false); err != nil {
			return nil, err
		}
	}
	p.builtins = len(p.tools)
	for _, t := range keep(mcpTools) {
		if err := add(t, true); err != nil {
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
	q := &Pool{byName: map[string]*tools.Tool{}, validators: map[string]func() (*inputValidator, error){}}
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
