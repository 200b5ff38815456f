// Package shellcmd is agent-mcp's one analysis of a shell command line.
//
// The Bash tool asks it whether a command only reads ([IsReadOnly]), and the
// permission rules ask it which commands a line would run ([Parse]) so that
// `Bash(git status)` or a deny on `rm *` applies to every part of
// `cd src && git status; rm -rf build`. Both must see the same thing, so
// both use this package.
//
// The analysis works on the syntax tree built by mvdan.cc/sh/v3 (bash
// dialect), never on the raw string:
//
//   - A line is split into simple commands across `&&`, `||`, `;`, `|`,
//     `|&`, `&` and newlines, and inside subshells, `{ ...; }` groups,
//     if/while/for/case bodies, function bodies, `$(...)`, backticks and
//     `<(...)`/`>(...)` process substitution.
//   - The script given to `sh -c`/`bash -c` (and dash, zsh, ksh) or to
//     `eval` is parsed and split in turn when it is a literal; the shell or
//     eval itself is then not listed, its inner commands are (with
//     [Command.Via] saying how they were reached).
//   - Wrappers (timeout, time, nice, nohup, stdbuf, command, builtin, env)
//     are looked through: [Command.Args] is the wrapped command, and the
//     wrappers are kept in [Command.Wrappers].
//   - Leading `VAR=value` assignments (and env's `NAME=value` operands) are
//     in [Command.Assigns].
//   - Words are evaluated statically: quotes and escapes are removed when
//     the value is known before the command runs; a word containing a
//     parameter expansion, command substitution or arithmetic is marked
//     [Word.Dynamic], and one with unquoted glob or brace characters is
//     marked [Word.Pattern].
//   - Output redirections to files are listed as writes ([Script.Writes]),
//     wherever they appear (also on groups and loops).
//
// What it is not: it does not run or expand anything, does not look at the
// file system, and does not decide permissions; package permissions does
// that with the [Script] it gets from here.
package shellcmd
