package shellcmd

import "testing"

// FuzzParse checks that no input makes the analysis panic, that a parsed
// script's commands always have a program word, and that IsReadOnly agrees
// with Parse on what does not parse.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"ls -la", "a && b || c; d | e |& f & g", "bash -c 'eval \"x; y\"'", "timeout 5 env A=1 nice -n 2 ls > out",
		"echo $(cat <(ls) `pwd`)", "f() { rm x; }; f", "cat <<EOF\n$(x)\nEOF", "env -S 'x y'", "command -v ls",
		"time -o", "x=$'\\t' ls {a,b}*", "[[ -f x ]] && (( i++ ))", "declare -a a=(1 2)", "sh -c", "eval",
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
	})
}
