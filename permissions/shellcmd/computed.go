package shellcmd

// RunsComputedScript reports whether the command runs a script whose text
// is only known when it runs: a shell given -c with a computed script
// (`bash -c "$x"`), eval of a computed word, or a script read from a
// pipe or process substitution ([Command.Opaque]). Its inner commands cannot
// be analysed, so it must be treated as running anything.
func (c Command) RunsComputedScript() bool {
	if c.Opaque {
		return true
	}
	name, ok := c.Name()
	if !ok {
		return true
	}
	if script, found := shellScript(name, c.Args); found && script == nil {
		return true
	}
	if name == "eval" {
		for _, w := range c.Args[1:] {
			if _, ok := w.Literal(); !ok {
				return true
			}
		}
	}
	return false
}
