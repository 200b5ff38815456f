package launcher

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Where there is no PID namespace, a command's processes are held in a
// cgroup v2 of their own when this process may make one beneath its own
// cgroup (as root, or where the cgroup is delegated to the user, as systemd
// does for a user's session): the server makes it ([NewCgroup]), init
// starts the shell in it (clone3's CLONE_INTO_CGROUP) and ends it with
// cgroup.kill, which no fork can outrun, and the server ends whatever is
// left and removes it once init is gone ([RemoveCgroup]). A command's
// processes cannot move out: writing cgroup.procs elsewhere is a write
// outside the writable roots, which Landlock refuses.

// CgroupParent returns the cgroup v2 directory this process is in, beneath
// which commands' cgroups are made.
func CgroupParent() (string, error) {
	mount, root, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			// The path is in the hierarchy; the mount shows it from root.
			rel, err := filepath.Rel(root, filepath.Clean("/"+rest))
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return "", fmt.Errorf("this process's cgroup %s is not beneath the mounted %s", rest, root)
			}
			return filepath.Join(mount, rel), nil
		}
	}
	return "", errors.New("this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted, and which of
// its directories the mount shows.
func cgroup2Mount() (mount, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return unescapeMountinfo(fields[4]), unescapeMountinfo(fields[3]), nil
			}
		}
	}
	return "", "", errors.New("no cgroup v2 hierarchy is mounted")
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NewCgroup makes a command's cgroup beneath parent, named for this
// process and n.
func NewCgroup(parent string, n uint64) (string, error) {
	dir := filepath.Join(parent, fmt.Sprintf("agent-mcp-%d-%d", os.Getpid(), n))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// RemoveStaleCgroups removes the commands' cgroups beneath parent that a
// server which is gone left behind (it was killed, or crashed: its
// launchers ended the commands but cannot remove a cgroup) and returns how
// many it removed. Only empty ones go: the kernel refuses to remove a
// cgroup that holds a process or another cgroup.
func RemoveStaleCgroups(parent string) int {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		pid, ok := cgroupServer(e.Name())
		if !ok || !e.IsDir() || pid == os.Getpid() || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		if unix.Rmdir(filepath.Join(parent, e.Name())) == nil {
			n++
		}
	}
	return n
}

// cgroupServer is the pid of the server that made the command's cgroup
// named name ([NewCgroup]), or its own leaf (agent-mcp-PID-server, see
// limits_linux.go), if name is one.
func cgroupServer(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "agent-mcp-")
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != p {
		return 0, false
	}
	if _, err := strconv.ParseUint(n, 10, 64); err != nil && n != "server" {
		return 0, false
	}
	return pid, true
}

// RemoveCgroup kills what is left in a command's cgroup and removes it.
func RemoveCgroup(dir string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		killCgroup(dir, nil)
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("removing the command's cgroup %s: %w", dir, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killCgroup sends SIGKILL to every process in cgroup dir: through kill
// (its cgroup.kill, opened for writing, or opened now), else one by one.
func killCgroup(dir string, kill *os.File) {
	if kill == nil {
		if f, err := os.OpenFile(filepath.Join(dir, "cgroup.kill"), os.O_WRONLY, 0); err == nil {
			kill = f
			defer f.Close()
		}
	}
	if kill != nil {
		if _, err := kill.WriteString("1"); err == nil {
			return
		}
	}
	signalCgroup(dir, syscall.SIGKILL)
}

// signalCgroup sends sig to every process listed in cgroup dir.
func signalCgroup(dir string, sig syscall.Signal) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = unix.Kill(pid, sig)
			if sig == syscall.SIGTERM {
				_ = unix.Kill(pid, syscall.SIGCONT)
			}
		}
	}
}

// ProbeCgroup reports the cgroup beneath which commands' cgroups can be
// made here, having made one and started a process in it (launcher, the
// agent-mcp binary, as a launcher without a stage, which exits at once).
func ProbeCgroup(launcher string) (string, error) {
	parent, err := CgroupParent()
	if err != nil {
		return "", err
	}
	dir, err := NewCgroup(parent, 0)
	if err != nil {
		return "", fmt.Errorf("cannot make a cgroup beneath %s (needs root or a delegated cgroup): %w", parent, err)
	}
	defer RemoveCgroup(dir)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	cmd := exec.Command(launcher, HiddenCommand)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("cannot start a process in a cgroup beneath %s: %w", parent, err)
	}
	_ = cmd.Wait()
	return parent, nil
}
