// Package attacks is the attack corpus: each *.txtar file here re-enacts
// one way out of the sandbox (README.md has the format), and Run runs a
// case through the real binary over MCP, as root and as an unprivileged
// user, with each sandbox layer alone and both together. The corpus runs
// in two test binaries, each with go test's timeout of its own:
// e2e/attacks runs the cases but the repository protections, and
// e2e/attacks/git runs those (git-*, the costliest half).
package attacks
