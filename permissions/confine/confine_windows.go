package confine

import "golang.org/x/sys/windows"

// syscallENOTDIR is what Windows answers for a path through a file (a
// component that is no directory).
var syscallENOTDIR error = windows.ERROR_DIRECTORY
