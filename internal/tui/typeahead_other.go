//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package tui

import "os"

// takeTerminal leaves the terminal to the program where there is no line
// mode to take typed keys from (see the Unix version).
func takeTerminal(*os.File) (typed []byte, restore func()) { return nil, func() {} }
