// Package workflow holds the tools that shape how a model works rather than
// what it touches: TodoWrite (the session's task list), and the tools that
// ask the user, switch plan mode and run sub-agents.
package workflow
