//go:build !linux

package launcher

// Undumpable does nothing outside Linux.
func Undumpable() error { return nil }

// LimitSupport says where a command's limits can be set: nowhere outside
// Linux.
type LimitSupport struct{}

// Pids reports that no process cap can be set outside Linux.
func (LimitSupport) Pids() bool { return false }

// Memory reports that no memory cap can be set outside Linux.
func (LimitSupport) Memory() bool { return false }

// Limits caps one command (see the Linux build).
type Limits struct {
	Processes, Memory int64
}

// ProbeLimits reports that there are no cgroups outside Linux.
func ProbeLimits(parent string) (LimitSupport, error) { return LimitSupport{}, errNotLinux }

// SetLimits has nothing to set outside Linux.
func SetLimits(sup LimitSupport, dir string, n uint64, lim Limits) ([]string, error) { return nil, nil }

// V1Dirs: none outside Linux.
func (LimitSupport) V1Dirs() []string { return nil }

// String says there is no cap outside Linux.
func (LimitSupport) String() string { return "none" }

// WithoutV1 is l: there is nothing to leave out outside Linux.
func (l LimitSupport) WithoutV1() LimitSupport { return l }
