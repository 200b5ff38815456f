package cli

import (
	"path/filepath"
	"strings"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/permissions/settings"
)

// toolchainHome is what a command may read of the user's home, which is
// otherwise private to the sandbox: the toolchains, their installs and
// caches, and the non-secret configuration of git and the shell, each
// relative to the home and read-only. Credentials inside them stay
// masked by the namespaces layer (permissions.Credentials).
var toolchainHome = []string{
	"go",                       // GOPATH: installed commands, the module cache
	"sdk",                      // Go toolchains that golang.org/dl installs
	".config/go/env",           // go env -w settings (GOPROXY, GOPRIVATE); not secret
	".cargo/bin",               // cargo, rustc shims and installed crates' commands
	".cargo/registry",          // the crate cache
	".cargo/git",               // git dependencies' checkouts
	".cargo/env",               // the shell snippet rustup writes
	".cargo/config.toml",       // cargo's configuration (credentials.toml is not listed)
	".cargo/config",            // its older name
	".rustup",                  // the Rust toolchains
	".npm",                     // npm's cache and its npx installs
	".nvm",                     // node versions installed by nvm
	".bun",                     // bun and its global installs
	".deno",                    // deno and its cache
	".pyenv",                   // python versions installed by pyenv
	".local/bin",               // pipx, uv, poetry and the user's own commands
	".local/lib",               // pip install --user's packages
	".local/share/pnpm",        // pnpm and its store
	".local/share/virtualenvs", // pipenv's virtual environments
	".local/share/uv",          // uv's pythons and tools
	".cache/go-build",          // go's build cache (commands write a stand-in)
	".cache/pip",               // pip's cache
	".cache/uv",                // uv's cache
	".cache/pypoetry",          // poetry's cache and virtual environments
	".cache/yarn",              // yarn's cache
	".cache/pnpm",              // pnpm's metadata cache
	".cache/node-gyp",          // node-gyp's headers
	".cache/ms-playwright",     // playwright's browsers
	".cache/golangci-lint",     // golangci-lint's cache
	".cache/bazel",             // bazel's output base
	".cache/deno",              // deno's cache on Linux
	".cache/agent-mcp",         // agent-mcp's per-workspace build cache stand-ins
	".m2/repository",           // maven's local repository (settings.xml holds passwords: not listed)
	".gradle/caches",           // gradle's caches
	".gradle/wrapper",          // the gradle versions wrappers download
	".gitconfig",               // git's user configuration (credentials live in helpers, masked)
	".config/git",              // git's XDG configuration: config, ignore, attributes
	".bashrc",                  // the shell's startup files
	".profile",                 //
	".bash_profile",            //
	".inputrc",                 // readline's configuration
	".sdkman",                  // JVM toolchains installed by SDKMAN
	".volta",                   // node toolchains installed by volta
	".asdf",                    // toolchains installed by asdf
	".local/share/mise",        // toolchains installed by mise
	".mise",                    // mise's older place
	".config/mise",             // mise's configuration of which versions to use
}

// homeReadable is what a sandboxed command may read of home: the
// toolchains' places, sandbox.filesystem.allowRead, and what a Read allow
// rule names under the home (its literal directory or file).
func homeReadable(s *settings.Settings, home string) []string {
	out := make([]string, 0, len(toolchainHome)+len(s.Sandbox.AllowRead))
	for _, rel := range toolchainHome {
		out = append(out, filepath.Join(home, rel))
	}
	out = append(out, s.Sandbox.AllowRead...)
	for _, r := range s.Rules.Rules(permissions.Allow) {
		base, glob, ok := r.PathPattern()
		if !ok || r.Tool != "Read" {
			continue
		}
		if dir := literalDir(base, glob); strings.HasPrefix(dir, filepath.Clean(home)+"/") {
			out = append(out, dir)
		}
	}
	return out
}
