package cli

import (
	"runtime/debug"
	"strings"
	"sync"
)

// Version is the release this binary belongs to, set at build time with
// -ldflags "-X github.com/agent-mcp/agent-mcp/internal/cli.Version=..."
// (the release archives, the npm packages, the bundle and the image do).
// A binary built by `go install module@vX.Y.Z` reports the module version
// instead when Version was left at its default.
var Version = defaultVersion

// Commit is the source revision the binary was built from, set at build time
// with -ldflags "-X github.com/agent-mcp/agent-mcp/internal/cli.Commit=...".
// When it is empty, the revision the Go toolchain stamped from the checkout
// (vcs.revision, with "-dirty" for uncommitted changes) is used, else
// "unknown".
var Commit = ""

// defaultVersion is Version's value when nothing set it at build time.
const defaultVersion = "0.1.0-dev"

// buildVersion is the version and commit the binary reports, resolved on
// first use rather than in an init function: reading the build information
// allocates, and serve's start-up pays only for what it uses.
var buildVersion = sync.OnceValues(func() (string, string) {
	return stampedVersion(Version, Commit, debug.ReadBuildInfo)
})

// version is the version the binary reports (see buildVersion).
func version() string { v, _ := buildVersion(); return v }

// stampedVersion resolves the version and commit a binary reports: what the
// linker set wins; otherwise what the Go toolchain recorded in the build
// information (the module version of `go install module@version`, the VCS
// revision of a build inside a checkout).
func stampedVersion(version, commit string, read func() (*debug.BuildInfo, bool)) (string, string) {
	info, ok := read()
	if ok {
		if version == defaultVersion && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = strings.TrimPrefix(info.Main.Version, "v")
		}
		if commit == "" {
			var rev, modified string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" {
				commit = rev
				if modified == "true" {
					commit += "-dirty"
				}
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	return version, commit
}

// versionLine is what --version and the version command print: the version
// and the commit it was built from.
func versionLine() string {
	v, c := buildVersion()
	return "agent-mcp " + v + " (commit " + c + ")\n"
}
