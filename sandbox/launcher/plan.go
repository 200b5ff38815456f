package launcher

import "github.com/agent-mcp/agent-mcp/internal/protect"

// HiddenCommand is the first argument that makes agent-mcp act as the
// sandbox launcher ([Main]) instead of running a subcommand.
const HiddenCommand = "__sandbox"

// StatusAlone follows the shell's exit status on init's status line when
// no other process of the command was left as the shell ended.
const StatusAlone = "alone"

// SetupFailed is init's exit status when the sandbox could not be set up
// (the command did not run).
const SetupFailed = 125

// Plan is what the launcher is told, as JSON in its arguments.
type Plan struct {
	Shell, Script, Dir string
	UID, GID           int
	Namespaces         bool
	Landlock           bool
	NetworkOff         bool
	// Proxy gives the command a network namespace of its own whose only
	// way out is the egress proxy: init listens on ProxyPort there and
	// hands each connection to the server over ProxyFD (egress.go).
	Proxy bool
	// Supervised is the egress proxy without a network namespace (Landlock
	// alone): the thread that starts the shell installs the supervised
	// socket filter (seccomp.go) and sends its listener over ProxyFD
	// ([RelayListener]) to the server, which makes the command's TCP
	// sockets, connected to the proxy, and answers its connect calls.
	Supervised bool
	// LoopbackV4 and LoopbackV6 are the ports of the host's loopback
	// (127.0.0.1 and ::1) the settings name (sandbox.network.allowedDomains,
	// localhost:5432): with Proxy, init listens on the same address and
	// port inside the command's namespace and hands each connection to
	// the server ([RelayForwarded]), which connects it to the host's.
	LoopbackV4, LoopbackV6 []int
	// ProxyFD is init's end of the socket pair shared with the server
	// for the egress proxy, after the shell's files.
	ProxyFD   int
	Writable  []string
	ReadOnly  []string
	Masked    []string
	EmptyFile string
	// Cgroup is the command's own cgroup (made by the server; empty when
	// the command has none).
	Cgroup string
	// GraceMS is how long init waits after SIGTERM before SIGKILL.
	GraceMS int64
	// ServerFD, when not 0, is init's descriptor for one end of a
	// connected pair of unix sockets whose other end only the server
	// holds: it reads end of file once the server is gone, however it
	// ended (SIGKILL, a crash), and init then ends the command as on
	// SIGTERM. (Not a pipe: the command could open init's end of a pipe
	// for writing through /proc and keep it from ever ending.)
	ServerFD int
	// ShellFiles is how many descriptors after ServerFD init passes on
	// to the shell, as 3, 4, ...
	ShellFiles int
	// WritableAgain are made writable again after ReadOnly (a private
	// temporary directory inside a read-only state directory).
	WritableAgain []string
	// Pinned are directories bound onto themselves before ReadOnly and
	// Masked (the namespaces layer), so that they cannot be renamed: the
	// ancestors of read-only and masked paths inside the writable roots.
	Pinned []string
	// AllowUserNS lets the command make user namespaces of its own; else,
	// with namespaces, init limits its user namespace to the command's.
	AllowUserNS bool
	// Home, when not empty, is the user's home directory made private:
	// with namespaces an empty read-only tmpfs covers it and HomeKept are
	// brought back at their own paths as they were (home.go); with
	// Landlock alone read access is granted beside it and beneath it
	// only to HomeKept, instead of to the whole filesystem.
	Home string
	// HomeKept are the paths under Home a command may still reach: the
	// writable roots, the working directories and the state directory
	// there, the toolchains' and what the settings allow to be read.
	HomeKept []string
	// HomeBeside, with Landlock alone, are the entries beside Home and
	// beside each of its ancestors that commands may read ([BesideHome]):
	// the server walks them once for many commands; nil makes init walk.
	HomeBeside []string
	// HomeHidden are paths inside HomeKept that stay unreadable (the
	// credential paths and sandbox.filesystem.denyRead's there): with
	// Landlock alone, a kept directory holding one is granted entry by
	// entry around it instead of whole.
	HomeHidden []string
	// JoinCgroups are the command's cgroup v1 directories (made and
	// capped by the server) that the thread starting the shell joins.
	JoinCgroups []string
	// Overlays are files bound read-only over others after Masked (with
	// namespaces): a masked credential file's copy over the file.
	Overlays []Overlay
	// ProcessLimit, with namespaces, caps the processes and threads of
	// the command (RLIMIT_NPROC, set by init in the command's user
	// namespace, where the count is the command's own); 0 for none.
	ProcessLimit int64
	// Guard, when not nil, has the thread that starts the shell send the
	// command's creating calls to a supervisor in init (fsguard_linux.go),
	// which refuses those that would create or change a protected name
	// beneath one of its roots, at any depth, and performs the others.
	Guard *Guard `json:",omitempty"`
}

// Guard is what the supervisor of creating calls judges by.
type Guard struct {
	// Names are the protected names (the permission rules' lists, with
	// the git directory's code paths).
	Names protect.Names
	// Roots are the writable roots a name is judged beneath, by their
	// real paths: the working directories and the configured writable
	// paths.
	Roots []string
}

// ServerFD is the descriptor [Plan.ServerFD] names when the server passes
// its socket as its second extra file (after the status pipe, fd 3).
const ServerFD = 4

// Overlay is a file bound over another: Src shows at Dst.
type Overlay struct {
	Src, Dst string
}
