// Package confine keeps file access inside the working directories: it
// resolves paths, decides whether a path is inside, and opens files so that
// the decision and the open cannot be raced apart.
//
// What it guarantees:
//
//   - Paths are compared component by component after resolving symlinks
//     ([ResolvePath], [Inside]): /work/app-evil is never inside /work/app,
//     and a path is inside a [Confinement] only when both where it is written
//     and where it leads, every link followed, are inside
//     ([Confinement.Contains]). A path that does not exist yet resolves as
//     far as it exists, the rest taken as written, so a write through a
//     dangling link is judged by its target. [ResolvePhysical] resolves a
//     path the way the kernel walks it for a shell command (`link/..` goes
//     up from the link's target).
//   - A path is resolved once, when the permission check judges it, and what
//     it led to is handed to the tool (tools.UseContext.Resolved); [OpenRead]
//     refuses a path outside the working directories that leads elsewhere
//     now, or that the check did not judge, with an error wrapping
//     [ErrOutside].
//   - Opening is openat-style and confined: inside a working directory a file
//     is opened through an os.Root of that directory ([OpenFile],
//     [Confinement.RootFor]), which no symlink can lead out of; outside, it is
//     opened by its resolved path following no symlink in any component
//     ([OpenBeneath]: openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS on
//     Linux, one O_NOFOLLOW openat per component elsewhere), so a link
//     swapped in after the check makes the open fail rather than go
//     elsewhere.
//
// It depends on nothing else in agent-mcp; package permissions (the rules),
// the tools and the server use it.
package confine
