package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agent-mcp/agent-mcp/sandbox/launcher"
)

// Limits caps each command where it runs in a cgroup of its own. A field
// at 0 takes its default; a negative one sets no cap.
type Limits struct {
	// Processes caps the command's processes and threads together
	// (pids.max); default [DefaultProcessLimit].
	Processes int64
	// Memory caps the command's memory in bytes (memory.max); default
	// three quarters of the machine's memory.
	Memory int64
}

// DefaultProcessLimit is how many processes and threads one command may
// have at once unless configured: far more than a parallel build needs,
// few enough that a fork bomb ends there.
const DefaultProcessLimit = 4096

// limits are the caps for a command's cgroup (0: none).
func (s *Sandbox) limits() launcher.Limits {
	l := launcher.Limits{Processes: s.opts.Limits.Processes, Memory: s.opts.Limits.Memory}
	if l.Processes == 0 {
		l.Processes = DefaultProcessLimit
	}
	if l.Memory == 0 {
		l.Memory = defaultMemoryLimit()
	}
	l.Processes, l.Memory = max(l.Processes, 0), max(l.Memory, 0)
	return l
}

// defaultMemoryLimit is three quarters of MemTotal (0, no cap, where it
// cannot be read).
func defaultMemoryLimit() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024 / 4 * 3
		}
	}
	return 0
}

// limitSupport is where the caps can be set for a command: with the
// namespaces layer only in cgroup v2, since joining a v1 cgroup needs its
// tasks file open for writing, which would keep the mount from turning
// read-only.
func (s *Sandbox) limitSupport() launcher.LimitSupport {
	l := s.support.Limits
	if s.layers.Namespaces {
		l = l.WithoutV1()
	}
	return l
}

// probeLimits finds where the caps can be set, beneath the cgroup the
// commands' cgroups are made in.
func probeLimits(s *Support) {
	if s.Cgroup == "" {
		s.LimitsErr = errors.New("no cgroup can be made for a command")
		return
	}
	s.Limits, s.LimitsErr = launcher.ProbeLimits(s.Cgroup)
}

// removeStaleLimits removes the cgroup v1 directories of servers that
// are gone (see [launcher.RemoveStaleCgroups]).
func removeStaleLimits(l launcher.LimitSupport) {
	for _, d := range l.V1Dirs() {
		launcher.RemoveStaleCgroups(d)
	}
}

// removeCgroups kills what is left in a command's cgroups and removes
// them.
func removeCgroups(dirs []string) {
	for _, d := range dirs {
		_ = launcher.RemoveCgroup(d)
	}
}

// describeLimits says the caps each command runs under, for the start
// line.
func (s *Sandbox) describeLimits() string {
	l := s.limits()
	// With namespaces, the process cap holds without a cgroup too:
	// RLIMIT_NPROC in the command's user namespace (launcher.Plan).
	// Root's command runs as root (kuid 0), which the kernel exempts from
	// RLIMIT_NPROC: for root only a cgroup caps it.
	nproc := s.layers.Namespaces && l.Processes > 0 && os.Getuid() != 0
	if !s.layers.Cgroup {
		if nproc {
			return fmt.Sprintf("each command limited to %d processes (RLIMIT_NPROC in its user namespace; no memory limit: no cgroup can be made)", l.Processes)
		}
		return "no per-command process or memory limit (no cgroup can be made)"
	}
	sup := s.limitSupport()
	var parts []string
	switch {
	case sup.Pids() && l.Processes > 0:
		parts = append(parts, fmt.Sprintf("%d processes", l.Processes))
	case nproc:
		parts = append(parts, fmt.Sprintf("%d processes (RLIMIT_NPROC in its user namespace)", l.Processes))
	}
	if sup.Memory() && l.Memory > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB of memory", float64(l.Memory)/(1<<30)))
	}
	switch {
	case len(parts) == 0 && s.layers.Namespaces && sup != s.support.Limits:
		return "no per-command process or memory limit (cgroup v1 only here, not used with namespaces)"
	case len(parts) == 0 && s.support.LimitsErr != nil:
		return fmt.Sprintf("no per-command process or memory limit (%v)", s.support.LimitsErr)
	case len(parts) == 0:
		return "no per-command process or memory limit (turned off in the settings)"
	}
	return "each command limited to " + strings.Join(parts, " and ")
}
