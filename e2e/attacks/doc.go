// Package attacks is the attack corpus: each *.txtar file here re-enacts
// one way out of the sandbox (README.md has the format), and Run runs a
// case through the real binary over MCP, as root and as an unprivileged
// user, with each sandbox layer alone and both together. The corpus runs
// in three test binaries, each with go test's timeout of its own, and a
// case's name picks which (Package): e2e/attacks/git the repository
// protections (git-*), e2e/attacks/protected the protected paths and the
// server's own files (protected-*, output-*, state-*), e2e/attacks the
// rest.
package attacks
