package shellcmd

import "testing"

func TestReadsFromTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line   string
		want   Reads
		opaque bool
	}{
		{"bash", ReadsShellLines, true},
		{"sh -i", ReadsShellLines, true},
		{"/bin/bash --norc", ReadsShellLines, true},
		{"timeout 100 bash", ReadsShellLines, true},
		{"bash -c 'ls'", ReadsData, false},
		{"bash script.sh", ReadsData, false},
		{"bash <<< 'ls'", ReadsData, false}, // its script is analysed: the last command is ls
		{"python3", ReadsCode, true},
		{"python3.12 -q", ReadsCode, true},
		{"python3 -i x.py", ReadsCode, true},
		{"python3 -W ignore", ReadsCode, true},
		{"python3 -", ReadsCode, true},
		{"python3 x.py", ReadsData, false},
		{"python3 --version", ReadsData, false},
		{"python3 -V", ReadsData, false},
		{"python3 -v", ReadsCode, true},
		{"node -v", ReadsData, false},
		{"perl -v", ReadsData, false},
		{"python3 -c 'print(1)'", ReadsData, false},
		{"python3 -m http.server", ReadsData, false},
		{"python3 <<< 'import os'", ReadsCode, true},
		{"node", ReadsCode, true},
		{"node -e 1", ReadsData, false},
		{"node --require x", ReadsCode, true},
		{"node app.js", ReadsData, false},
		{"perl", ReadsCode, true},
		{"ruby -e 1", ReadsData, false},
		{"irb", ReadsCode, true},
		{"php -a", ReadsCode, true},
		{"less f", ReadsData, false},
		{"more f", ReadsCode, false},
		{"ed f", ReadsCode, false},
		{"ed f <<< '!rm x'", ReadsCode, true},
		{"echo '!rm x' | ed f", ReadsCode, true},
		{"sqlite3 db", ReadsCode, false},
		{"script -q /dev/null", ReadsCode, false},
		{"script -c ls /dev/null", ReadsData, false},
		{"ls", ReadsData, false},
		{"LESSSECURE=0 less f", ReadsData, true},
		{"unset LESSSECURE; less f", ReadsData, true},
		{"env -u LESSSECURE less f", ReadsData, true},
		{"env -i less f", ReadsData, true},
		{`export LESS""SECURE=; less f`, ReadsData, true},
		{"unset \"$v\"; less f", ReadsData, true},
		{"LESSSECURE= ; less f", ReadsData, true},
		{"LESS=-R less f", ReadsData, false},
		{"./python", ReadsData, false},
		// Launchers: the command they run reads the terminal.
		{"setsid -w bash -i", ReadsShellLines, true},
		{"flock l bash", ReadsShellLines, true},
		{"taskset -c 0 python3", ReadsCode, true},
		{"ionice -c 3 bash -i", ReadsShellLines, true},
		{"exec bash -i", ReadsShellLines, true},
		{`find . -maxdepth 0 -exec bash -i \;`, ReadsShellLines, true},
		{"find . -name bash", ReadsData, false},
		{"find . -name python3 -exec grep -l x {} +", ReadsData, false},
		{"xargs -I{} sh -c {}", ReadsCode, false},
		{"xargs grep x", ReadsData, false},
		{"script -qc 'bash -i' /dev/null", ReadsShellLines, true},
		{"script -q -c python3 /dev/null", ReadsCode, false},
		{"script -qc 'ls' /dev/null", ReadsData, false},
		// The terminal as the script.
		{"bash /dev/tty", ReadsShellLines, true},
		{"sh /dev/fd/1", ReadsShellLines, true},
		{"python3 /dev/tty", ReadsCode, true},
		{"awk -f /dev/tty /dev/null", ReadsCode, false},
		// Data that is run.
		{"sed e", ReadsCode, false},
		{"sed 's/^/x/e' f", ReadsCode, false},
		{"sed '/a/e'", ReadsCode, false},
		{"sed 's/e/f/g' f", ReadsData, false},
		{"sed -e 's/a/b/' -e 's/c/d/w out' f", ReadsData, false},
		{"awk '{ system($0) }'", ReadsCode, false},
		{`awk '{ print | "sh" }'`, ReadsCode, false},
		{"awk '{ print $1 }'", ReadsData, false},
		{"perl -ne 'system $_'", ReadsCode, true},
		{"perl -ne 'print'", ReadsData, false},
		{"PYTHONINSPECT=1 python3 s.py", ReadsCode, true},
	} {
		s, err := Parse(tc.line)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		c := s.Commands[len(s.Commands)-1]
		if got := ReadsFromTerminal(c); got != tc.want {
			t.Errorf("%s: reads %d, want %d", tc.line, got, tc.want)
		}
		if c.Opaque != tc.opaque {
			t.Errorf("%s: opaque %v, want %v", tc.line, c.Opaque, tc.opaque)
		}
	}
}
