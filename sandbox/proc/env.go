package proc

import (
	"slices"
	"strings"
	"sync"
)

// SecretEnv are agent-mcp's own secrets, removed from the environment of
// every command, background task and language server: the HTTP server's
// bearer tokens, the keys of the model providers chat talks to, and the
// web search key. A command that printed them (env) could act as another
// client of the same server, or spend the operator's provider account.
// The list is documented in docs/tools.md (Bash).
var SecretEnv = []string{
	"AGENT_MCP_TOKEN",
	"AGENT_MCP_CLIENT_TOKENS",
	"ANTHROPIC_API_KEY",
	"OPENAI_API_KEY",
	"OPENROUTER_API_KEY",
	"BRAVE_API_KEY",
}

// IsSecret reports whether the variable named name is one of SecretEnv.
func IsSecret(name string) bool { return slices.Contains(SecretEnv, name) }

// Scrub returns env (NAME=value entries) without agent-mcp's own secrets
// and without the names drop reports true for (nil drops nothing more).
func Scrub(env []string, drop func(name string) bool) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if IsSecret(k) || (drop != nil && drop(k)) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// CommandEnv are the variables a command, background task or language
// server gets from the server's environment without being named in the
// settings: what a shell and a build need (the locale, the terminal, the
// user and home, the search path) and the toolchains' own (where each
// keeps its installs and caches, which compiler and flags). Anything else
// (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, NPM_TOKEN, a database URL with its
// password) stays out unless sandbox.env.allow names it. Every entry is a
// whole name: no prefix admits names nobody listed. The list is
// documented in docs/tools.md (Bash).
var CommandEnv = []string{
	// The shell, the user, the terminal, the locale.
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "HOSTNAME",
	"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
	"LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE", "TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "COLUMNS", "LINES",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
	"MANPATH", "INFOPATH",
	// Proxies and the certificates a network behind one needs (the egress
	// proxy sets its own over them).
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
	"GIT_SSL_CAINFO", "PIP_CERT", "AWS_CA_BUNDLE", "NPM_CONFIG_CAFILE", "npm_config_cafile",
	// Builds in general.
	"MAKEFLAGS", "CI", "SOURCE_DATE_EPOCH",
	// C and C++ builds.
	"CC", "CXX", "CPP", "AR", "LD", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDLIBS",
	"PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CMAKE_PREFIX_PATH",
	// Go.
	"GOPATH", "GOROOT", "GOBIN", "GOFLAGS", "GOENV", "GOCACHE", "GOMODCACHE", "GOTMPDIR", "GOTOOLCHAIN",
	"GOPROXY", "GONOPROXY", "GOPRIVATE", "GONOSUMDB", "GONOSUMCHECK", "GOSUMDB", "GOINSECURE", "GO111MODULE",
	"GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "CGO_CFLAGS", "CGO_LDFLAGS", "GOEXPERIMENT", "GOCOVERDIR",
	"GOWORK", "GODEBUG", "GOFIPS140",
	// Rust.
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "RUSTDOCFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_JOBS",
	"CARGO_INCREMENTAL", "CARGO_NET_OFFLINE", "CARGO_TERM_COLOR", "RUSTC_WRAPPER", "RUST_BACKTRACE",
	"RUSTUP_AUTO_INSTALL", "RUSTUP_DIST_SERVER", "RUSTUP_UPDATE_ROOT",
	// JavaScript.
	"NVM_DIR", "NVM_BIN", "NVM_INC", "NODE_PATH", "NODE_ENV", "NODE_OPTIONS", "PNPM_HOME", "BUN_INSTALL",
	"DENO_DIR", "DENO_INSTALL", "VOLTA_HOME", "COREPACK_HOME", "YARN_CACHE_FOLDER",
	// Python.
	"VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "CONDA_SHLVL", "PYENV_ROOT", "PYENV_VERSION",
	"PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PIPX_HOME", "PIPX_BIN_DIR",
	"POETRY_HOME", "UV_CACHE_DIR", "UV_PYTHON", "PIP_REQUIRE_VIRTUALENV", "PIP_DISABLE_PIP_VERSION_CHECK",
	// JVM, .NET, Ruby, Perl, Android.
	"JAVA_HOME", "JDK_HOME", "MAVEN_HOME", "M2_HOME", "MAVEN_OPTS", "GRADLE_HOME", "GRADLE_USER_HOME", "JAVA_TOOL_OPTIONS", "CLASSPATH",
	"ANDROID_HOME", "ANDROID_SDK_ROOT", "DOTNET_ROOT", "DOTNET_CLI_TELEMETRY_OPTOUT",
	"GEM_HOME", "GEM_PATH", "RBENV_ROOT", "RBENV_VERSION", "BUNDLE_PATH", "PERL5LIB",
	// Version managers and package managers' installs.
	"ASDF_DIR", "ASDF_DATA_DIR", "MISE_DATA_DIR", "SDKMAN_DIR", "HOMEBREW_PREFIX", "HOMEBREW_CELLAR", "HOMEBREW_REPOSITORY",
	// Git's identity and where its user configuration is.
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
	"GIT_SSH_COMMAND",
}

// commandEnvSet is [CommandEnv] as a set, made once: every command's
// start looks each of the server's variables up in it.
var commandEnvSet = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool, len(CommandEnv))
	for _, n := range CommandEnv {
		m[n] = true
	}
	return m
})

// nameMatches reports whether name is one of the entries (exact, or
// beginning with an entry's prefix before its "*").
func nameMatches(name string, entries []string) bool {
	for _, e := range entries {
		if p, ok := strings.CutSuffix(e, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == e {
			return true
		}
	}
	return false
}

// Allowed returns the entries of env (NAME=value) that a command gets:
// those [CommandEnv] or allow (the settings' sandbox.env.allow: a name, or
// a prefix ending in "*" that admits every name it begins) name, never
// agent-mcp's own secrets ([SecretEnv]), whatever names them.
func Allowed(env, allow []string) []string {
	out := make([]string, 0, len(CommandEnv))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "" || IsSecret(k) {
			continue
		}
		if commandEnvSet()[k] || nameMatches(k, allow) {
			out = append(out, kv)
		}
	}
	return out
}
