// Package sandbox confines the processes agent-mcp starts (Bash commands,
// background tasks, language servers) with the kernel, so that what a
// command may touch does not depend on what a parser can see in its text:
// an interpreter, a copied binary or a script the model wrote itself is
// held exactly like the shell.
//
// It is the mechanism, not the policy: the caller decides and passes
// facts. Whether a line runs outside the sandbox is the caller's answer
// ([Spec.Excluded]; tools/shell reads sandbox.excludedCommands); the
// credential paths, the protected paths, the hosts and the layers allowed
// arrive in [Options] ([Options.Credentials], [Options.Protected],
// [Options.Hosts], [Options.AllowedLayers]), computed by internal/cli from
// the permission rules and the environment. The package imports nothing
// of agent-mcp but its own subpackages and internal/netguard.
//
// A sandboxed command is started through agent-mcp's own binary, re-executed
// as a small hidden launcher ([HiddenCommand], package launcher), because
// nothing can run between fork and exec in os/exec. The launcher runs from
// its package's initialisation, before the rest of agent-mcp initialises,
// so it starts like a small program:
//
//	server ─ agent-mcp __sandbox init (pid 1 of a new PID namespace, or a child subreaper)
//	           └ bash -c COMMAND, and everything it starts (without a PID namespace: in a cgroup of
//	             their own, where one can be made)
//
// init sets the sandbox up and then only reaps and signals: it lives as long
// as any process of the command does, stays in the command's process group,
// and on SIGTERM ends every process the command started, whatever session or
// group they moved to (setsid, double fork, set -m); it does the same when
// the server dies, however it died (init holds one end of a pair of unix
// sockets whose other end only the server has, and reads end of file
// then). It
// reports the shell's exit status on a pipe as soon as the shell ends
// ([Launch.Wait]), so a command that leaves a server running in the
// background returns at once, as it does without a sandbox.
//
// Two layers, each used where the kernel offers it:
//
//   - namespaces: user + mount + PID + IPC (+ network unless the network
//     is unrestricted). The whole filesystem is remounted read-only except
//     the writable roots; protected paths and Edit-denied paths inside them
//     are bound read-only again; Read-denied paths and the credential paths
//     ([Options.Credentials]; credentials.go) are covered by an empty
//     read-only file or directory; the home, when private
//     ([Options.HomeReadable]; home.go), is covered by an empty read-only
//     tmpfs with the paths kept bound back at their own paths; with the network through the egress
//     proxy (the default; network.go, package egress) init relays
//     127.0.0.1:3128 of the command's namespace to the server's proxy; /proc shows only the command's processes; killing
//     init kills the namespace.
//   - Landlock: reads of the whole filesystem, or with a private home
//     only beside it and of the paths kept; writes only beneath the
//     writable roots, TCP bind and
//     connect refused when the network is off or proxied and no network
//     namespace holds it (and a seccomp filter refusing every internet
//     socket, TCP too, and packet sockets), signals and abstract unix
//     sockets scoped to the sandbox. With the network through the egress
//     proxy (ABI 4+, seccomp user notification with ADDFD, pidfd_getfd),
//     that filter sends socket(AF_INET*, SOCK_STREAM) and connect to a
//     supervisor in the server (supervise_linux.go), which makes every TCP
//     socket of the command itself, already connected to the proxy, and
//     answers its connect calls; where the kernel lacks a piece the
//     network is off.
//     Where namespaces are unavailable init is a child subreaper that ends
//     its whole subtree, and the command runs in a cgroup v2 of its own
//     where the server can make one (as root, or delegated): init ends it
//     with cgroup.kill, and the server removes it once init is gone,
//     killing what a killed init left.
//
// In both layers the user's build caches are never writable: a command's
// go, npm, pip and cargo are pointed at stand-ins kept per workspace
// (caches.go), so nothing a command plants in a cache reaches the user's
// next unsandboxed build.
//
// no_new_privs is set in every case. In every layer the shell is started
// from a thread of the launcher's own that first gives up what the command
// must not have (package launcher, lockdown_linux.go): every capability
// (root's too), the server's session keyring (a fresh one), set-user-ID
// and set-group-ID bits and device nodes (a seccomp filter), and, with
// Landlock, a domain nested below the launcher's, so the command cannot
// ptrace, signal or read the descriptors of its launcher, which is not
// dumpable either. Where a cgroup can be made for the command (either
// layer) it also caps the command's processes and memory ([Limits]).
// [Probe] says what this machine offers; [New] picks the layers for a [Mode]. Trying the namespaces takes child
// processes, so New leaves that to a probe in the background that starts at [Sandbox.StartProbe] (a stdio
// server calls it once it has answered initialize) or when a method first needs the layers; the first
// command waits for the answer.
package sandbox
