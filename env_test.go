package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envName is an agent-mcp variable's name.
var envName = regexp.MustCompile(`AGENT_MCP_[A-Z0-9_]*[A-Z0-9]`)

// TestEnvDocumented fails when a product package names an AGENT_MCP_*
// variable (reads it, sets it for a command or a hook, or says it in a
// message) that no page of docs/ mentions: each is part of how agent-mcp
// is run or what a command sees. Tests, benchmarks and the test helpers
// are not the product.
func TestEnvDocumented(t *testing.T) {
	t.Parallel()
	named := map[string]string{} // variable → the first file naming it
	fset := token.NewFileSet()
	err := walkProduct(func(p, _ string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, v := range envName.FindAllString(s, -1) {
				if _, seen := named[v]; !seen {
					named[v] = p
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(named) < 5 {
		t.Fatalf("only %d AGENT_MCP_* variables found in the code (%v): is the test run from the module root?", len(named), named)
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var docs strings.Builder
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	documented := envName.FindAllString(docs.String(), -1)
	for _, v := range slices.Sorted(func(yield func(string) bool) {
		for k := range named {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Contains(documented, v) {
			t.Errorf("%s names %s, which no page of docs/ mentions: say what it does there", named[v], v)
		}
	}
}
