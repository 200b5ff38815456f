package confine

import "os"

// readFlag opens a file for reading.
const readFlag = os.O_RDONLY

// openOutside opens a path outside the working directories for
// [OpenRead] by its resolved path. Windows has no openat with
// O_NOFOLLOW that the standard library exposes, so unlike on Unix a
// link swapped into the path between the check and the open is followed:
// on Windows a read outside the working directories is judged, not
// confined. Inside them [OpenFile] opens through an os.Root, which no
// link leads out of, on Windows too.
func openOutside(_, real string, flag int) (*os.File, error) {
	return os.OpenFile(real, flag, 0)
}
