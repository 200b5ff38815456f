// Package term is chat's terminal front end: streamed text, one line per
// tool call with a spinner while it runs, the forms tools put to the user
// (a tools.Asker, [UI.Ask]: permission prompts, AskUserQuestion's
// questions, ExitPlanMode's approval), line editing with history on a
// terminal (golang.org/x/term) and plain numbered prompts read line by
// line otherwise, and the interactive loop with its slash commands and
// Ctrl-C handling ([REPL]).
package term
