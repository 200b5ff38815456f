package sandbox

import "errors"

// mkfifo fails: Windows has no named pipes in the file system.
func mkfifo(string) error {
	return errors.New("no named pipes in the file system on Windows")
}
