package shell

import "sync"

// maxRefusalLines is how many distinct refused connections a command's
// output names; past them one line says that more were refused.
const maxRefusalLines = 20

// refusalMore is the line said once a command's refusals pass
// maxRefusalLines.
const refusalMore = "agent-mcp network: more connections were refused; they are not named here"

// refusalLines puts the egress proxy's refusals into a command's output:
// each line once, the first maxRefusalLines distinct ones, then
// refusalMore once. A command retrying a refused host in a loop, or
// trying every port of an address, neither buries its own output under
// the sandbox's lines nor makes the server hold a line per attempt.
type refusalLines struct {
	write func(line string)

	mu   sync.Mutex
	said map[string]bool
	more bool
}

// say writes line unless it was said already or the bound is reached.
func (r *refusalLines) say(line string) {
	r.mu.Lock()
	defer r.mu.Unlock() // held while writing: the lines keep their order
	switch {
	case r.said[line]:
	case len(r.said) < maxRefusalLines:
		if r.said == nil {
			r.said = map[string]bool{}
		}
		r.said[line] = true
		r.write(line)
	case !r.more:
		r.more = true
		r.write(refusalMore)
	}
}
