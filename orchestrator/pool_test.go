package orchestrator

import (
	"slices"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
)

func names(ts []*tools.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func TestAssemblePool(t *testing.T) {
	t.Parallel()
	disabled := func(s *testSpec) { s.Disabled = true }
	aliased := func(s *testSpec) { s.Aliases = []string{"OldName"} }
	builtins := []*tools.Tool{
		testTool("Write", false, nil), testTool("Bash", false, nil, aliased), testTool("Hidden", true, nil, disabled),
		testTool("Read", true, nil), testTool("Denied", true, nil),
	}
	mcpTools := []*tools.Tool{
		testTool("mcp__z__b", true, nil), testTool("mcp__a__x", true, nil),
		testTool("Read", true, nil), // an upstream tool may not shadow a built-in
		testTool("mcp__a__x", false, nil),
	}
	filter := func(t *tools.Tool) bool { return t.Name != "Denied" }
	p, err := AssemblePool(builtins, mcpTools, filter)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Bash", "Read", "Write", "mcp__a__x", "mcp__z__b"}
	if got := names(p.Tools()); !slices.Equal(got, want) {
		t.Errorf("pool = %v, want %v", got, want)
	}
	if p.Builtins() != 3 {
		t.Errorf("Builtins() = %d, want 3", p.Builtins())
	}
	if r, _ := p.Find("Read"); r != builtins[3] {
		t.Error("Find(Read) is not the built-in")
	}
	if b, ok := p.Find("OldName"); !ok || b.Name != "Bash" {
		t.Errorf("Find by alias = %v, %v", b, ok)
	}
	for _, gone := range []string{"Hidden", "Denied", "Nope"} {
		if _, ok := p.Find(gone); ok {
			t.Errorf("Find(%s) found a tool that is not in the pool", gone)
		}
	}
}
