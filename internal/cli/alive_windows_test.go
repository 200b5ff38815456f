package cli

import "golang.org/x/sys/windows"

// alive reports whether process pid is still running.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == uint32(windows.STATUS_PENDING) // STILL_ACTIVE
}
