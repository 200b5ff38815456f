// Package attacks is the attack corpus: each *.txtar file here re-enacts
// one way out of the sandbox (README.md has the format), and
// TestAttackCorpus runs every case through the real binary over MCP, as
// root and as an unprivileged user, with each sandbox layer alone and both
// together. It is a package of its own so that the corpus, which runs each
// case six times, has a test binary and a timeout of its own.
package attacks
