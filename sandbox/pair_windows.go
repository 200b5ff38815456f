package sandbox

import (
	"errors"
	"os"
)

// errNoPairs is why a Windows server has no socket pair to give a
// launcher: there is no sandbox on Windows (Probe reports no layer), so
// nothing asks for one.
var errNoPairs = errors.New("sandbox: Windows has no unix socket pairs to pass to a launcher, and no sandbox")

// socketPair fails on Windows: see errNoPairs.
func socketPair(int, string, string) (*os.File, *os.File, error) { return nil, nil, errNoPairs }

// rightsSpace is 0: Windows passes no descriptors over sockets.
func rightsSpace(int) int { return 0 }

// receivedFiles returns nothing: Windows passes no descriptors over sockets.
func receivedFiles([]byte, string) []*os.File { return nil }
