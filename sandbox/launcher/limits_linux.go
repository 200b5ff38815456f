package launcher

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A command's cgroup also caps what it may take: pids.max (processes and
// threads: a fork bomb stops there) and memory.max (the kernel's OOM
// killer ends the command, not the server or the machine). The caps are
// set where the controllers reach the command's cgroup: in cgroup v2
// where the parent has them enabled for its children (the server enables
// them when it may: as root at the hierarchy's root, or when it is alone
// in its cgroup, by moving itself into a leaf beside the commands'), else,
// as root, in the cgroup v1 hierarchies of those controllers, which a
// hybrid machine still mounts: there the thread that starts the shell
// joins the command's v1 cgroups (their tasks file) before it forks.

// LimitSupport says where a command's limits can be set here.
type LimitSupport struct {
	// V2Pids and V2Memory: the v2 parent of the commands' cgroups
	// enables the pids and memory controllers for its children.
	V2Pids, V2Memory bool
	// V1Pids and V1Memory are this process's cgroup v1 directories of
	// those controllers, beneath which a command's cgroup of each can be
	// made; empty where there is none.
	V1Pids, V1Memory string
}

// Pids reports whether a process cap can be set; Memory, a memory cap.
func (l LimitSupport) Pids() bool   { return l.V2Pids || l.V1Pids != "" }
func (l LimitSupport) Memory() bool { return l.V2Memory || l.V1Memory != "" }

// ProbeLimits finds where limits can be set for commands' cgroups made
// beneath the v2 cgroup parent, enabling the controllers there when it
// may.
func ProbeLimits(parent string) (LimitSupport, error) {
	var l LimitSupport
	var why []string
	if parent != "" {
		if err := enableControllers(parent); err != nil {
			why = append(why, err.Error())
		}
		b, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		on := strings.Fields(string(b))
		l.V2Pids, l.V2Memory = slices.Contains(on, "pids"), slices.Contains(on, "memory")
	}
	if !l.V2Pids {
		l.V1Pids = v1Dir("pids")
	}
	if !l.V2Memory {
		l.V1Memory = v1Dir("memory")
	}
	if l.Pids() && l.Memory() {
		return l, nil
	}
	if len(why) == 0 {
		why = append(why, "no cgroup controller for them reaches the commands' cgroups")
	}
	return l, errors.New(strings.Join(why, "; "))
}

// enableControllers turns on pids and memory for parent's children where
// the kernel offers them there (cgroup.controllers). A cgroup that holds
// processes may not (the kernel's no-internal-process rule, except at
// the root): when this process is alone in it, it moves into a leaf of
// its own first.
func enableControllers(parent string) error {
	b, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return err
	}
	avail := strings.Fields(string(b))
	b, _ = os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	on := strings.Fields(string(b))
	var want []string
	for _, c := range []string{"pids", "memory"} {
		if slices.Contains(avail, c) && !slices.Contains(on, c) {
			want = append(want, "+"+c)
		}
	}
	if len(want) == 0 {
		if !slices.Contains(avail, "pids") || !slices.Contains(avail, "memory") {
			return fmt.Errorf("%s offers the controllers %q, not both pids and memory", parent, avail)
		}
		return nil
	}
	control := filepath.Join(parent, "cgroup.subtree_control")
	err = os.WriteFile(control, []byte(strings.Join(want, " ")), 0)
	if errors.Is(err, unix.EBUSY) && aloneIn(parent) {
		leaf := filepath.Join(parent, fmt.Sprintf("agent-mcp-%d-server", os.Getpid()))
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("making a leaf cgroup for the server: %w", err)
		}
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte("0"), 0); err != nil {
			_ = unix.Rmdir(leaf)
			return fmt.Errorf("moving the server into a leaf cgroup: %w", err)
		}
		err = os.WriteFile(control, []byte(strings.Join(want, " ")), 0)
	}
	if err != nil {
		return fmt.Errorf("enabling %s in %s: %w (the cgroup holds other processes, or is not delegated)", strings.Join(want, " "), control, err)
	}
	return nil
}

// aloneIn reports whether this process is the only one in cgroup dir.
func aloneIn(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	return err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid())
}

// v1Dir is this process's directory in the cgroup v1 hierarchy of
// controller, where a child can be made (root, usually); "" when there
// is none.
func v1Dir(controller string) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	path := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && slices.Contains(strings.Split(f[1], ","), controller) {
			path = f[2]
		}
	}
	if path == "" {
		return ""
	}
	mount, root := v1Mount(controller)
	if mount == "" {
		return ""
	}
	rel, err := filepath.Rel(root, filepath.Clean("/"+path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	dir := filepath.Join(mount, rel)
	probe, err := NewCgroup(dir, 0)
	if err != nil {
		return ""
	}
	_ = unix.Rmdir(probe)
	return dir
}

// v1Mount is where the cgroup v1 hierarchy of controller is mounted, and
// which of its directories the mount shows.
func v1Mount(controller string) (mount, root string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+3 < len(fields) && fields[i+1] == "cgroup" && len(fields) > 4 &&
				slices.Contains(strings.Split(fields[i+3], ","), controller) {
				return unescapeMountinfo(fields[4]), unescapeMountinfo(fields[3])
			}
		}
	}
	return "", ""
}

// Limits caps one command: Processes is pids.max (processes and
// threads), Memory is memory.max in bytes; 0 leaves one uncapped.
type Limits struct {
	Processes, Memory int64
}

// SetLimits caps the command's v2 cgroup dir (made by [NewCgroup]) with
// lim where sup says the controllers reach it, and makes the command's
// cgroup v1 directories where they do not (named for this process and n),
// capped too: the launcher joins those ([Plan.JoinCgroups]). It returns
// the v1 directories, which [RemoveCgroup] removes once the command is
// over.
func SetLimits(sup LimitSupport, dir string, n uint64, lim Limits) ([]string, error) {
	var made []string
	set := func(parentV1 string, v2 bool, file, v1file string, val int64) error {
		if val <= 0 {
			return nil
		}
		if v2 && dir != "" {
			return os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(val, 10)), 0)
		}
		if parentV1 == "" {
			return nil
		}
		d, err := NewCgroup(parentV1, n)
		if err != nil {
			return err
		}
		made = append(made, d)
		return os.WriteFile(filepath.Join(d, v1file), []byte(strconv.FormatInt(val, 10)), 0)
	}
	if err := set(sup.V1Pids, sup.V2Pids, "pids.max", "pids.max", lim.Processes); err != nil {
		return made, fmt.Errorf("setting the process limit: %w", err)
	}
	if err := set(sup.V1Memory, sup.V2Memory, "memory.max", "memory.limit_in_bytes", lim.Memory); err != nil {
		return made, fmt.Errorf("setting the memory limit: %w", err)
	}
	return made, nil
}

// openJoins opens the tasks file of each cgroup v1 directory the shell
// joins, before the mounts turn read-only and Landlock forbids writing
// there.
func openJoins(dirs []string) ([]*os.File, error) {
	var files []*os.File
	for _, d := range dirs {
		f, err := os.OpenFile(filepath.Join(d, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("opening the command's cgroup %s: %w", d, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// joinCgroups moves the calling thread into each cgroup v1 whose tasks
// file is open in files ("0" is the writing thread): what it forks is
// born there.
func joinCgroups(files []*os.File) error {
	for _, f := range files {
		if _, err := f.WriteString("0"); err != nil {
			return fmt.Errorf("joining the command's cgroup %s: %w", filepath.Dir(f.Name()), err)
		}
	}
	return nil
}

// V1Dirs are the cgroup v1 parents where commands' cgroups are made.
func (l LimitSupport) V1Dirs() []string {
	var dirs []string
	for _, d := range []string{l.V1Pids, l.V1Memory} {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// String says where each cap is set.
func (l LimitSupport) String() string {
	where := func(v2 bool, v1 string) string {
		switch {
		case v2:
			return "cgroup v2"
		case v1 != "":
			return "cgroup v1 " + v1
		}
		return "none"
	}
	return "processes in " + where(l.V2Pids, l.V1Pids) + ", memory in " + where(l.V2Memory, l.V1Memory)
}

// WithoutV1 is l without its cgroup v1 directories.
func (l LimitSupport) WithoutV1() LimitSupport {
	l.V1Pids, l.V1Memory = "", ""
	return l
}

// capProcesses caps the command's processes and threads with
// RLIMIT_NPROC, which holds where no cgroup controller reaches (cgroup
// v1 alone, or no cgroup at all). The kernel counts it per user and user
// namespace, and init runs in the command's own user namespace, created
// just before with the server's limit as the one its parent level keeps:
// what is counted against the cap is the command's processes (and
// init's threads), never the user's others. Soft and hard alike, so the
// command, holding no capability over the initial namespace, cannot
// raise it.
func capProcesses(p Plan) error {
	if p.ProcessLimit <= 0 {
		return nil
	}
	lim := unix.Rlimit{Cur: uint64(p.ProcessLimit), Max: uint64(p.ProcessLimit)}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		return fmt.Errorf("capping the command's processes (RLIMIT_NPROC): %w", err)
	}
	return nil
}
