package e2e

import (
	"debug/elf"
	"runtime"
	"testing"
)

// TestBinary_links_no_reflective_method_lookup: where a program can look a
// method up by name at run time (reflect.Value.Method, MethodByName:
// text/template and html/template do), the linker must keep every
// exported method of every type that reaches an interface, since it cannot
// tell which one will be looked up. The provider SDKs' thousands of unused
// methods then stayed in the binary: 93 MB stripped, 52 MB without.
// `go build -ldflags=-dumpdep` shows who calls them.
func TestBinary_links_no_reflective_method_lookup(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads the ELF symbol table")
	}
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		switch s.Name {
		case "reflect.Value.Method", "reflect.Value.MethodByName":
			t.Errorf("the binary links %s: something looks methods up by name (text/template?), so the linker keeps every exported method; find the caller with go build -ldflags=-dumpdep", s.Name)
		}
	}
}
