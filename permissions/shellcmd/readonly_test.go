package shellcmd

import "testing"

func TestIsReadOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cmd  string
		want bool
	}{
		// Read-only.
		{"ls", "ls -la", true},
		{"pipeline_of_readers", "cat a.txt | grep -n foo | head -5 | wc -l", true},
		{"and_list", "cd src && ls && pwd", true},
		{"rg", "rg -n 'func main' --type go", true},
		{"find_plain", "find . -name '*.go' -type f", true},
		{"stat_file_echo_which", "stat go.mod; file go.mod; echo done; which go", true},
		{"git_status", "git status --short", true},
		{"git_log", "git -C sub --no-pager log --oneline -5", true},
		{"git_diff", "git diff HEAD~1 -- main.go", true},
		{"git_show", "git show HEAD:README.md", true},
		{"git_branch_list", "git branch -a -v", true},
		{"git_branch_list_pattern", "git branch --list 'feat/*'", true},
		{"git_branch_contains", "git branch --contains abc123", true},
		{"git_rev_parse", "git rev-parse --show-toplevel", true},
		{"git_tag_list", "git tag -l 'v1.*'", true},
		{"git_config_get", "git config --get user.name", true},
		{"git_stash_list", "git stash list", true},
		{"dev_null_redirect", "grep -r x . 2>/dev/null", true},
		{"stderr_to_stdout", "ls 2>&1 | head", true},
		{"input_redirect", "wc -l < go.mod", true},
		{"glob_and_variables_in_cat", "cat *.go $F", true},
		{"locale_assignment", "LC_ALL=C sort -u names.txt", true},
		{"wrappers", "timeout 5 nice -n 1 grep x f", true},
		{"bash_c_readers", "bash -c 'ls | wc -l'", true},
		{"command_substitution_readers", "echo $(git rev-parse HEAD)", true},
		{"command_v", "command -v go", true},
		{"env_alone", "env", true},
		{"absolute_standard_path", "/usr/bin/ls -l", true},
		{"test_bracket", "[ -f go.mod ] && cat go.mod", true},
		{"sort_reverse", "sort -rn -k2 x", true},
		{"uniq_one_input", "uniq -c in.txt", true},
		{"date_format", "date +%s", true},

		// Not read-only.
		{"rm", "rm -rf build", false},
		{"reader_then_writer", "ls && rm x", false},
		{"output_redirect", "echo hi > out.txt", false},
		{"append_redirect", "cat a >> b", false},
		{"redirect_on_group", "{ ls; } > listing", false},
		{"redirect_inside_substitution", "echo $(ls > x)", false},
		{"writer_in_substitution", "echo $(touch x)", false},
		{"writer_in_process_substitution", "cat <(rm -v x)", false},
		{"find_exec", "find . -name '*.tmp' -exec rm {} +", false},
		{"find_execdir", "find . -execdir ls ;", false},
		{"find_delete", "find . -name '*.o' -delete", false},
		{"find_ok", "find . -ok rm {} ;", false},
		{"find_fprint", "find . -fprint out", false},
		{"find_computed_argument", "find . $ACTION", false},
		{"git_commit", "git commit -m x", false},
		{"git_push", "git push", false},
		{"git_branch_create", "git branch feature", false},
		{"git_branch_delete", "git branch -D feature", false},
		{"git_tag_create", "git tag v1.0", false},
		{"git_config_set", "git config user.name me", false},
		{"git_c_option", "git -c core.pager=evil log", false},
		{"git_diff_output", "git diff --output=patch.txt", false},
		{"git_computed_subcommand", "git $SUB", false},
		{"git_alone", "git", false},
		{"git_stash_pop", "git stash pop", false},
		{"computed_program", "$CMD -la", false},
		{"glob_program", "/bin/l? -la", false},
		{"relative_program", "./ls", false},
		{"unknown_program", "make", false},
		{"sed", "sed -n 1p f", false},
		{"awk", "awk '{print}' f", false},
		{"tee", "ls | tee out", false},
		{"xargs", "ls | xargs rm", false},
		{"pager_assignment", "PAGER=evil git log", false},
		{"path_assignment", "PATH=. ls", false},
		{"export", "export X=1; ls", false},
		{"sort_output", "sort -o out in", false},
		{"sort_output_cluster", "sort -ro out in", false},
		{"sort_output_long_abbrev", "sort --outp=out in", false},
		{"sort_compress_program", "sort --compress-program=sh in", false},
		{"uniq_output_file", "uniq in out", false},
		{"rg_pre", "rg --pre ./script x", false},
		{"date_set", "date -s 12:00", false},
		{"nohup", "nohup ls", false},
		{"bash_c_writer", "bash -c 'rm x'", false},
		{"bash_c_computed", `bash -c "$S"`, false},
		{"eval_computed", `eval "$S"`, false},
		{"time_output_option", "command time -o t ls", false},
		{"function_shadowing_reader", "ls() { rm -rf x; }; ls", false},
		{"env_split_string", "env -S 'rm x'", false},
		{"env_assignment", "env PAGER=x git log", false},
		{"assignment_only", "X=1", false},
		{"parse_error", "ls &&", false},
		{"unclosed_quote", "cat 'x", false},
		{"empty", "", false},
		{"dup_to_file", "ls >&out", false},
		{"read_write_redirect", "cat <> f", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsReadOnly(tt.cmd); got != tt.want {
				t.Errorf("IsReadOnly(%q) = %v, want %v", tt.cmd, got, tt.want)
			}
		})
	}
}
