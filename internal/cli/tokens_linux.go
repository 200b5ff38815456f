package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// hideFromProc overwrites the secrets (and the values of vars) in this
// process's initial command line and environment, the memory that
// /proc/PID/cmdline and /proc/PID/environ show, through /proc/self/mem.
// /proc/self/stat gives where they are (arg_start, arg_end, env_start,
// env_end: its fields 48 to 51).
func hideFromProc(secrets, vars []string) error {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return errors.New("/proc/self/stat: no command name")
	}
	f := strings.Fields(s[i+1:]) // from field 3
	if len(f) < 49 {
		return errors.New("/proc/self/stat: no argument and environment addresses (Linux before 3.5)")
	}
	var addr [4]int64
	for k := range addr {
		if addr[k], err = strconv.ParseInt(f[45+k], 10, 64); err != nil {
			return fmt.Errorf("/proc/self/stat field %d: %w", 48+k, err)
		}
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	for _, r := range [][2]int64{{addr[0], addr[1]}, {addr[2], addr[3]}} {
		if r[1] <= r[0] || r[1]-r[0] > 1<<22 {
			continue
		}
		buf := make([]byte, r[1]-r[0])
		if _, err := mem.ReadAt(buf, r[0]); err != nil {
			return err
		}
		if blankArgs(buf, secrets, vars) {
			if _, err := mem.WriteAt(buf, r[0]); err != nil {
				return err
			}
		}
	}
	return nil
}
