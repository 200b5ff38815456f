// Package tui is chat's terminal front end. On a terminal that takes
// colours it is a full terminal UI ([NewFull], on bubbletea), inline or
// in the alternate screen ([FullOptions].FullScreen): rendered Markdown,
// tool lines with coloured diffs and command output, a spinner with
// elapsed time and the tokens the provider reports, a multi-line editor
// with bracketed paste, history and @path completion, arrow-key
// permission prompts, and a transcript of the session in which Ctrl-O
// shows every output cut short (transcript.go). Otherwise it
// writes plain lines: streamed text, one line per
// tool call with a spinner while it runs, the forms tools put to the user
// (a tools.Asker, [UI.Ask]: AskUserQuestion's questions, ExitPlanMode's
// approval; and a tools.PermissionAsker, [UI.AskPermission]: permission
// questions, drawn from the question's data), line editing with history on a
// terminal (golang.org/x/term) and plain numbered prompts read line by
// line otherwise, and the interactive loop with its slash commands and
// Ctrl-C handling ([REPL]; the built-in commands are one table,
// commands.go, that the menu, /help, the names custom commands cannot
// take and the dispatch all read).
package tui
