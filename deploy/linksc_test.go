package deploy

import (
	"strings"
	"testing"
)

// TestLinksC reads build plans as a cold and a warm build cache print
// them: the source file runtime/cgo.go of package runtime is no sign of C,
// an import configuration naming package runtime/cgo or an external link
// is.
func TestLinksC(t *testing.T) {
	t.Parallel()
	compileRuntime := "/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/b010/_pkg_.a -p runtime -std ./alg.go ./cgo.go ./runtime/cgo.go ./chan.go\n"
	staticLink := "cat >$WORK/b001/importcfg.link << 'EOF' # internal\npackagefile github.com/agent-mcp/agent-mcp=$WORK/b001/_pkg_.a\npackagefile runtime=$WORK/b010/_pkg_.a\nEOF\n" +
		"GOROOT='' /usr/local/go/pkg/tool/linux_amd64/link -o $WORK/b001/exe/a.out -importcfg $WORK/b001/importcfg.link -buildmode=exe -s -w -extld=gcc $WORK/b001/_pkg_.a\n"
	for _, tc := range []struct {
		name, plan string
		want       int // lines reported
	}{
		{"cold cache, static", compileRuntime + staticLink, 0},
		{"warm cache, static", staticLink, 0},
		{"runtime/cgo linked", strings.Replace(staticLink, "packagefile runtime=", "packagefile runtime/cgo=$WORK/b020/_pkg_.a\npackagefile runtime=", 1), 1},
		{"external linker", strings.Replace(staticLink, "-buildmode=exe", "-buildmode=exe -linkmode=external", 1), 1},
		{"many importcfgs name runtime/cgo", strings.Repeat("packagefile runtime/cgo=$WORK/b020/_pkg_.a\n", 9), 6},
	} {
		if got := linksC([]byte(tc.plan)); len(got) != tc.want {
			t.Errorf("%s: reported %q, want %d lines", tc.name, got, tc.want)
		}
	}
	long := strings.Repeat("line\n", 10000)
	if got := strings.Count(screenful([]byte(long)), "\n"); got > 25 {
		t.Errorf("screenful of 10,000 lines is %d lines", got)
	}
}
