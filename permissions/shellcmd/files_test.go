package shellcmd

import (
	"strings"
	"testing"
)

// uses renders the files a line touches as "r dir|path" / "w dir|path"
// (with "+" for a subtree, "*" for a pattern, "g" for git's config), and
// its unknowns as "?r" / "?w", and network paths as "net".
func uses(s *Script) string {
	var out []string
	for _, f := range s.Files {
		k := "r"
		if f.Write {
			k = "w"
		}
		if f.Subtree {
			k += "+"
		}
		if f.Pattern {
			k += "*"
		}
		if f.GitConfig {
			k += "g"
		}
		out = append(out, k+" "+f.Dir+"|"+f.Path)
	}
	for _, u := range s.Unknowns {
		if u.Write {
			out = append(out, "?w")
		} else {
			out = append(out, "?r")
		}
	}
	for range s.Network {
		out = append(out, "net")
	}
	return strings.Join(out, ", ")
}

func TestFiles(t *testing.T) {
	t.Parallel()
	tests := []struct{ cmd, want string }{
		// Redirections, input ones too.
		{"cat < ~/.ssh/id", "r |~/.ssh/id"},
		{`echo "$(< /o/o.txt)"`, "r |/o/o.txt"},
		{"cat < /dev/tcp/127.0.0.1/80", "net"},
		{"echo hi > out 2>/dev/null < /dev/null", "w |out"},
		{"cat <<EOF\nx\nEOF", ""},
		{"exec 3<> f", "w |f"},
		{`echo > "$F"`, "?w"},
		// Arguments of programs that read.
		{"cat secret/s.txt", "r |secret/s.txt"},
		{"grep -r needle .", "r+ |."},
		{"grep -e needle a b", "r |a, r |b"},
		{"head secret/*", "r* |secret/*"},
		{"ls -a ~root", "r |~root"},
		{"cat ~-/x", "?r"},
		{"cat $F", "?r"},
		{"diff <(ls a) b", "r |b, r |a"},
		{"cat '~/x'", "r |./~/x"},
		{"cat {a,b}", "?r"},
		// Programs that write.
		{"cp a b", "w |b, r |a"},
		{"cp -r a b", "w+ |b, r+ |a"},
		{"cp -t.. a", "w |.., r |a"},
		{"cp -t .. a", "w |.., r |a"},
		{"mv a b", "w |b, w |a"},
		{"mv x /dev/null", "w |/dev/null, w |x"},
		{"install -m 644 a b", "w |b, r |a"},
		{"install -d a b", "w |a, w |b"},
		{"ln -sf /etc/passwd l", "w |l, r |/etc/passwd"},
		{"ln -s /etc/passwd", "r |/etc/passwd, w |passwd"},
		{"tee -a a b", "w |a, w |b"},
		{"dd if=a of=b bs=1", "r |a, w |b"},
		{"sed -i s/a/b/ f", "w |f"},
		{"sed -i.bak -e s/a/b/ f g", "w |f, w |g"},
		{"sed -n p f", "r |f"},
		{"touch -r ref t", "r |ref, w |t"},
		{"truncate -s 0 f", "w |f"},
		{"rm -rf build", "w+ |build"},
		{"chmod -R 755 d", "w+ |d"},
		{"tar -C.. -xf a.tar", "w+ |.., r |a.tar, w+ ..|."},
		{"tar czf out.tgz src", "w |out.tgz, r+ |src"},
		{"git -C .. status", ""},
		{"git config core.hooksPath x", "wg |."},
		{"git config --get core.hooksPath", ""},
		{"git config --global user.name x", "w |~/.gitconfig"},
		{"git -C sub config a.b c", "wg sub|."},
		{"git clean -fdx", "w+ |."},
		{"git add a.go", "w |a.go"},
		{"git log -- a.go", "r |a.go"},
		{"find . -name x -delete", "w+ |."},
		{"find /etc -name x", "r+ |/etc"},
		{"find protected -exec rm {} +", "w+ |protected"},
		{"curl -o out https://x", "w |out"},
		{"sort -o out in", "w |out, r |in"},
		{"make test", "r |test, w |test"},
		{"base64 secret/s.txt", "r |secret/s.txt, w |secret/s.txt"},
		{"rg needle", "r+ |."},
		{"grep -r needle", "r+ |."},
		{"make $T", ""},
		{"echo a b", ""},
		{"printf %s x", ""},
		// Where relative paths lead.
		{"cd sub && cat a", "r sub|a"},
		{"cd sub; cat a", "r |a, r sub|a"},
		{"cd a && cd b; cat c", "r |c, r a|c, r a/b|c"},
		{"cd /abs && cat a", "r /abs|a"},
		{"cd && cat a", "r ~|a"},
		{"cd ~/x && cat a", "r ~/x|a"},
		{"(cd /tmp); cat a", "?r"},
		{"cd $D && cat a /abs", "r |/abs, ?r"},
		{"cd - && cat a", "?r"},
		{"CDPATH=.. cd outside && touch w", "?w"},
		{"export CDPATH=..; cd outside && touch w", "?w"},
		{"shopt -s cdable_vars; cd outside && touch w", "?w"},
		{"cd ./sub && touch w", "w sub|w"},
		{"env -C .. touch w", "w ..|w"},
		{"env --chdir=/x touch w", "w /x|w"},
		{"echo > ~+/../w", "w |../w"},
		{"shopt -s extglob; cat *.go", "?r"},
		// Scripts run another way are analysed, or unknown.
		{"bash <<'EOF'\nrm x\nEOF", "w |x"},
		{"sh <<< 'rm x'", "w |x"},
		{"echo 'rm x' | sh", "w |x"},
		{"echo 'rm x' | bash -s", "w |x"},
		{". <(echo rm x)", "w |x"},
		{"trap 'rm x' EXIT", "w |x"},
		{"alias r=rm; r x", "w |x"},
		{"hash -p /bin/rm r; r x", "w |x"},
		{"env -S 'rm x'", "w |x"},
		{"/usr/bin/env rm x", "w |x"},
		{"/usr/bin/timeout 5 rm x", "w |x"},
		{"bash script.sh", "r |script.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if got := uses(s); got != tt.want {
				t.Errorf("Parse(%q) touches %q, want %q", tt.cmd, got, tt.want)
			}
		})
	}
}

func TestOpaque(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"cat x | bash", "curl x | sh -s", ". <(curl x)", `trap "$X" EXIT`, "bash < script", "cat x | bash /dev/stdin", `env -S "$X"`} {
		s, err := Parse(cmd)
		if err != nil {
			t.Fatal(err)
		}
		opaque := false
		for _, c := range s.Commands {
			opaque = opaque || c.RunsComputedScript()
		}
		if !opaque {
			t.Errorf("%q: no command runs a script only known when it runs", cmd)
		}
		if s.IsReadOnly() {
			t.Errorf("%q is read-only", cmd)
		}
	}
}
