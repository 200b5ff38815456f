package shellcmd

import (
	"path"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes the analysis panic, that a parsed
// script's commands always have a program word, that IsReadOnly agrees
// with Parse on what does not parse, and that no line classified
// read-only has a redirection or a path argument whose path is not judged
// (listed in Files, or making the line's paths unknown).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"ls -la", "a && b || c; d | e |& f & g", "bash -c 'eval \"x; y\"'", "timeout 5 env A=1 nice -n 2 ls > out",
		"echo $(cat <(ls) `pwd`)", "f() { rm x; }; f", "cat <<EOF\n$(x)\nEOF", "env -S 'x y'", "command -v ls",
		"time -o", "x=$'\\t' ls {a,b}*", "[[ -f x ]] && (( i++ ))", "declare -a a=(1 2)", "sh -c", "eval",
		"cat < ~/.ssh/id", `echo "$(< /o)"`, "cat secret/*", "cd .. && cat x", "cat ~+/../x < ~-/y", "head -n 3 ../a $F",
		"cp -t.. x", "echo 'rm x' | sh", "trap 'cat /etc/x' EXIT", "alias c=cat; c /x", "hash -p /bin/cat c; c /x",
		"cat < /dev/tcp/h/1", "wc ~root/x", "CDPATH=/ cd etc && cat passwd", "(cd /; cat etc/x)",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		s, err := Parse(cmd)
		if err != nil {
			if IsReadOnly(cmd) {
				t.Errorf("IsReadOnly(%q) is true but Parse fails: %v", cmd, err)
			}
			return
		}
		for _, c := range s.Commands {
			if len(c.Args) == 0 {
				t.Errorf("command with no words in %q", cmd)
			}
			_ = c.Text()
			_ = c.IsReadOnly()
		}
		if s.IsReadOnly() {
			checkJudged(t, cmd, s)
		}
	})
}

// pureReaders read every operand and take no option value that could
// look like a path.
var pureReaders = map[string]bool{"cat": true, "tac": true, "wc": true, "md5sum": true, "sha1sum": true, "sha256sum": true,
	"cksum": true, "b2sum": true}

func checkJudged(t *testing.T, cmd string, s *Script) {
	t.Helper()
	if len(s.Unknowns) > 0 {
		return // the line's paths are unknown: it is always asked about
	}
	judged := func(v string) bool {
		for _, f := range s.Files {
			if f.Path == v || path.Clean(f.Path) == path.Clean(v) || strings.HasPrefix(v, "~+") && f.Path == path.Join(".", strings.TrimPrefix(strings.TrimPrefix(v, "~+"), "/")) {
				return true
			}
			if f.Pattern {
				if ok, _ := path.Match(f.Path, v); ok {
					return true
				}
			}
		}
		return false
	}
	for _, c := range s.Commands {
		for _, r := range c.Redirects {
			if r.Op != "<" && r.Op != "<>" && !r.IsWrite() {
				continue
			}
			v := r.Target.Value
			if r.Target.Dynamic {
				t.Errorf("%q is read-only, yet redirects from or to %s, only known when it runs, without an unknown path", cmd, r.Target.Source)
				continue
			}
			if harmlessIn[v] || harmlessOut[v] || isFdWord(v) && r.Op != "<" {
				continue
			}
			if !judged(v) {
				t.Errorf("%q is read-only, yet the redirection %s %s is not judged (files %+v)", cmd, r.Op, v, s.Files)
			}
		}
		name, _ := c.Name()
		if !pureReaders[path.Base(name)] || c.Opaque {
			continue
		}
		for _, w := range c.Args[1:] {
			v := w.Value
			if w.Dynamic {
				if !w.ProcSubst {
					t.Errorf("%q is read-only, yet %s reads %s, only known when it runs, without an unknown path", cmd, name, w.Source)
				}
				continue
			}
			if strings.HasPrefix(v, "-") || harmlessIn[v] || !(strings.Contains(v, "/") || strings.HasPrefix(v, "~") || v == "." || v == "..") {
				continue
			}
			if !judged(v) && !judged("./"+v) {
				t.Errorf("%q is read-only, yet %s's argument %s is not judged (files %+v)", cmd, name, v, s.Files)
			}
		}
	}
}
