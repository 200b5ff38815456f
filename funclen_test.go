package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// maxFuncLines is the longest a product function may be, from its
// signature to its closing brace: a longer one does several things, each
// of which reads better as a function with a name.
const maxFuncLines = 120

// TestFunctionLength fails for a product function (tests, the end-to-end
// tests, benchmarks and the conformance fixtures aside) longer than
// maxFuncLines.
func TestFunctionLength(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	err := walkProduct(func(p, _ string) error {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if lines <= maxFuncLines {
				continue
			}
			t.Errorf("%s:%d: %s is %d lines, over %d: split it by the kinds of thing it handles",
				p, fset.Position(fd.Pos()).Line, funcName(fd), lines, maxFuncLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// funcName is a function's name, a method's as Type.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fmt.Sprintf("%s.%s", typ, fd.Name.Name)
}
