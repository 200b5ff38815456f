package attackcorpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParse_names_the_bad_field: a case that breaks the format is refused
// with an error naming what is wrong.
func TestParse_names_the_bad_field(t *testing.T) {
	t.Parallel()
	const ok = "what: w\nholds: namespaces\n\n-- bash --\necho RAN\n-- expect --\noutput RAN\n"
	for _, tc := range []struct{ name, text, want string }{
		{"no what", strings.Replace(ok, "what: w\n", "", 1), "no what:"},
		{"no holds", strings.Replace(ok, "holds: namespaces\n", "", 1), "no holds:"},
		{"bad layer", strings.Replace(ok, "namespaces", "seccomp", 1), `holds: "seccomp"`},
		{"unknown key", "colour: red\n" + ok, `header key "colour"`},
		{"bad env", "env: NOEQUALS\n" + ok, `env: "NOEQUALS"`},
		{"bad settings", "settings: {nope\n" + ok, "settings: not valid JSON"},
		{"bad inherit", "inherit: home\n" + ok, `inherit: "home"`},
		{"bad section", ok + "-- elsewhere/x --\nx\n", `section "elsewhere/x"`},
		{"bad check", strings.Replace(ok, "output RAN", "maybe RAN", 1), `expect "maybe RAN"`},
		{"bad wait", strings.Replace(ok, "-- expect --", "-- wait --\nsoon work/x\n-- expect --", 1), `wait "soon work/x"`},
		{"no expect", strings.Replace(ok, "-- expect --\noutput RAN\n", "", 1), "no expect section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
	c, err := Parse("c", []byte("# a comment\nenv: A=1 B=2\n"+ok+"-- work/d/f --\nhi\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.What != "w" || len(c.Env) != 2 || len(c.Steps) != 1 || c.Steps[0].Text != "echo RAN" || len(c.Plant) != 1 || c.Plant[0][1] != "hi\n" {
		t.Errorf("parsed %+v", c)
	}
}

// world is a World over a temporary directory.
type world string

func (w world) AreaPath(p string) string { return filepath.Join(string(w), p) }
func (w world) Expand(s string) string   { return s }

// TestJudge: each check fails exactly when its fact does not hold.
func TestJudge(t *testing.T) {
	t.Parallel()
	w := world(t.TempDir())
	if err := os.MkdirAll(w.AreaPath("work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.AreaPath("work/keep"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Case{Expect: []string{"unchanged work/keep", "absent work/planted", "output RAN", "no-output SECRET"}}
	before := c.Before(w)
	if failed := c.Judge(w, before, []string{"RAN"}); len(failed) != 0 {
		t.Errorf("nothing happened, yet: %v", failed)
	}
	if err := os.WriteFile(w.AreaPath("work/keep"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.AreaPath("work/planted"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	failed := c.Judge(w, before, []string{"SECRET"})
	if len(failed) != 4 {
		t.Errorf("every check should fail, got %d: %v", len(failed), failed)
	}
}
