package shellcmd

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// texts renders each command's effective argv as Text().
func texts(s *Script) []string {
	out := make([]string, len(s.Commands))
	for i, c := range s.Commands {
		out[i] = c.Text()
	}
	return out
}

func TestParse_splits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cmd string
		want      []string
	}{
		{"and_or", "make && make test || echo failed", []string{"make", "make test", "echo failed"}},
		{"semicolon_newline", "cd src; ls\npwd", []string{"cd src", "ls", "pwd"}},
		{"pipe", "cat a | grep x |& tee out", []string{"cat a", "grep x", "tee out"}},
		{"background", "sleep 1 & echo hi", []string{"sleep 1", "echo hi"}},
		{"subshell_and_group", "(cd x && rm y); { ls; }", []string{"cd x", "rm y", "ls"}},
		{"command_substitution", "echo $(rm -rf x) `touch y`", []string{"echo $(rm -rf x) `touch y`", "rm -rf x", "touch y"}},
		{"process_substitution", "diff <(ls a) >(wc -l)", []string{"diff <(ls a) >(wc -l)", "ls a", "wc -l"}},
		{"substitution_in_assignment", "X=$(whoami) ls", []string{"ls", "whoami"}},
		{"if_for_while_case", "if test -f a; then cat a; fi; for f in *; do wc $f; done; while false; do :; done; case x in x) echo y;; esac",
			[]string{"test -f a", "cat a", "wc $f", "false", ":", "echo y"}},
		{"function_body", "f() { rm -rf /; }; f", []string{"rm -rf /", "f"}},
		{"bash_c_literal", `bash -c "git status && rm x"`, []string{"git status", "rm x"}},
		{"sh_c_with_options", `sh -ec 'ls' arg0`, []string{"ls"}},
		{"bash_o_option", `bash -o pipefail -c 'ls | wc'`, []string{"ls", "wc"}},
		{"bash_c_dynamic", `bash -c "$SCRIPT"`, []string{`bash -c "$SCRIPT"`}},
		{"bash_script_file", `bash build.sh`, []string{"bash build.sh"}},
		{"eval_literal", `eval 'ls; rm' x`, []string{"ls", "rm x"}},
		{"eval_dynamic", `eval "$X"`, []string{`eval "$X"`}},
		{"nested_shells", `bash -c "sh -c 'rm -rf y'"`, []string{"rm -rf y"}},
		{"declaration", "export A=1 B; ls", []string{"export A=1 B", "ls"}},
		{"time_keyword", "time ls -l", []string{"ls -l"}},
		{"negation", "! grep x f", []string{"grep x f"}},
		{"heredoc_substitution", "cat <<EOF\n$(rm x)\nEOF", []string{"cat", "rm x"}},
		{"arithmetic_and_test", "(( i++ )); [[ -f $(touch z) ]]", []string{"touch z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.cmd)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.cmd, err)
			}
			if got := texts(s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) commands = %q, want %q", tt.cmd, got, tt.want)
			}
		})
	}
}

func TestParse_wrappers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cmd, want string
		wrappers        int
		assigns         []string
	}{
		{"timeout", "timeout 10 rm -rf x", "rm -rf x", 1, nil},
		{"timeout_options", "timeout -s KILL --kill-after=5 10s make", "make", 1, nil},
		{"nice", "nice -n 5 make -j2", "make -j2", 1, nil},
		{"nice_number", "nice -10 make", "make", 1, nil},
		{"nohup", "nohup ./server", "./server", 1, nil},
		{"stdbuf", "stdbuf -oL -e 0 grep x", "grep x", 1, nil},
		{"command", "command rm x", "rm x", 1, nil},
		{"command_v_is_lookup", "command -v rm", "command -v rm", 0, nil},
		{"builtin", "builtin cd /", "cd /", 1, nil},
		{"env", "env -i -u HOME A=1 B=2 rm x", "rm x", 1, []string{"A", "B"}},
		{"env_alone", "env -u HOME", "env -u HOME", 0, nil},
		{"stacked", "FOO=1 timeout 5 nice env BAR=2 git push", "git push", 3, []string{"FOO", "BAR"}},
		{"time_command", "command time -p ls", "ls", 2, nil},
		{"wrapper_without_command", "timeout 10", "timeout 10", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Commands) != 1 {
				t.Fatalf("got %d commands: %q", len(s.Commands), texts(s))
			}
			c := s.Commands[0]
			if got := c.Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
			if len(c.Wrappers) != tt.wrappers {
				t.Errorf("wrappers = %v, want %d", c.Wrappers, tt.wrappers)
			}
			var names []string
			for _, a := range c.Assigns {
				names = append(names, a.Name)
			}
			if !reflect.DeepEqual(names, tt.assigns) {
				t.Errorf("assigns = %q, want %q", names, tt.assigns)
			}
			if c.Source != tt.cmd {
				t.Errorf("Source = %q, want the whole line %q", c.Source, tt.cmd)
			}
		})
	}
}

func TestParse_words(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cmd string
		want      []Word
	}{
		{"quotes_removed", `echo 'a b' "c d" e\ f`, []Word{
			{Value: "echo", Source: "echo"}, {Value: "a b", Source: "'a b'"},
			{Value: "c d", Source: `"c d"`}, {Value: "e f", Source: `e\ f`}}},
		{"double_quote_escapes", `echo "a\$b\"c\n"`, []Word{
			{Value: "echo", Source: "echo"}, {Value: `a$b"c\n`, Source: `"a\$b\"c\n"`}}},
		{"ansi_c", `echo $'a\tb'`, []Word{
			{Value: "echo", Source: "echo"}, {Value: "a\tb", Source: `$'a\tb'`}}},
		{"dynamic", `echo "$HOME/x" $(pwd) $((1+2))`, []Word{
			{Value: "echo", Source: "echo"},
			{Value: `"$HOME/x"`, Source: `"$HOME/x"`, Dynamic: true},
			{Value: "$(pwd)", Source: "$(pwd)", Dynamic: true},
			{Value: "$((1+2))", Source: "$((1+2))", Dynamic: true}}},
		{"patterns", `ls *.go a{b,c} '*' x\*`, []Word{
			{Value: "ls", Source: "ls"}, {Value: "*.go", Source: "*.go", Pattern: true},
			{Value: "a{b,c}", Source: "a{b,c}", Pattern: true}, {Value: "*", Source: "'*'"},
			{Value: "x*", Source: `x\*`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Commands[0].Args; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Args = %+v\nwant   %+v", got, tt.want)
			}
		})
	}
}

func TestParse_computed_program_name(t *testing.T) {
	t.Parallel()
	s, err := Parse(`$EDITOR file`)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Commands[0].Name(); ok {
		t.Errorf("Name() of $EDITOR reported static")
	}
	if s.Commands[0].Static() {
		t.Errorf("Static() true for a computed program name")
	}
}

func TestParse_writes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cmd string
		want      []string // "op target"
	}{
		{"truncate_and_append", "echo a > out; echo b >> log 2> err", []string{"> out", ">> log", "> err"}},
		{"all_and_clobber", "make &> build.log; ls >| x; cat <> rw", []string{"&> build.log", ">| x", "<> rw"}},
		{"fd_duplication_is_not_a_write", "make 2>&1 >&2 3>&-", nil},
		{"dup_to_file_is_a_write", "make >&out.txt", []string{">& out.txt"}},
		{"input_is_not_a_write", "wc < in; cat <<EOF\nx\nEOF\ngrep x <<< y", nil},
		{"group_and_loop", "{ ls; } > a; for i in 1; do echo; done >> b", []string{"> a", ">> b"}},
		{"inside_substitution", "echo $(ls > c)", []string{"> c"}},
		{"on_bash_c", "bash -c 'ls' > d", []string{"> d"}},
		{"inside_bash_c", "bash -c 'ls > e'", []string{"> e"}},
		{"time_output_option", "command time -o t.txt ls", []string{"-o t.txt"}},
		{"dev_null", "ls 2>/dev/null", []string{"> /dev/null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range s.Writes {
				got = append(got, w.Op+" "+w.Target.Value)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("writes = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParse_redirect_fd(t *testing.T) {
	t.Parallel()
	s, err := Parse("make 2> err")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Commands[0].Redirects
	if len(r) != 1 || r[0].Fd != "2" || r[0].Op != ">" || r[0].Target.Value != "err" {
		t.Errorf("redirects = %+v, want one 2> err", r)
	}
	if s.Commands[0].Source != "make 2> err" {
		t.Errorf("Source = %q", s.Commands[0].Source)
	}
}

func TestParse_via(t *testing.T) {
	t.Parallel()
	s, err := Parse(`A=1 bash -c "eval 'rm x'"`)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Commands[0]
	if !reflect.DeepEqual(c.Via, []string{"bash -c", "eval"}) {
		t.Errorf("Via = %q", c.Via)
	}
	if len(c.Assigns) != 1 || c.Assigns[0].Name != "A" {
		t.Errorf("assignments before bash -c not carried to its commands: %+v", c.Assigns)
	}
}

func TestParse_errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cmd, want string
	}{
		{"unclosed_quote", `echo "abc`, "parsing the command"},
		{"bad_syntax", `ls &&`, "parsing the command"},
		{"bad_bash_c_script", `bash -c 'if then'`, "script given to bash -c"},
		{"empty", "   \n ", ErrEmpty.Error()},
		{"comment_only", "# nothing", ErrEmpty.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.cmd)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tt.cmd, err, tt.want)
			}
		})
	}
	if _, err := Parse(""); !errors.Is(err, ErrEmpty) {
		t.Errorf("Parse(\"\") = %v, want ErrEmpty", err)
	}
}

func TestParse_nesting_limit(t *testing.T) {
	t.Parallel()
	cmd := strings.Repeat("eval ", maxDepth+2) + "ls"
	if _, err := Parse(cmd); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("deep eval nesting: err = %v, want a nesting error", err)
	}
}
