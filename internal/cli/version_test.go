package cli

import (
	"bytes"
	"context"
	"runtime/debug"
	"testing"
)

// TestStampedVersion: the linker's -X values win; without them the build
// information the Go toolchain recorded supplies the module version and the
// VCS revision; with neither the commit reads "unknown".
func TestStampedVersion(t *testing.T) {
	t.Parallel()
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/agent-mcp/agent-mcp", Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, c := range []struct {
		name                    string
		version, commit         string
		read                    func() (*debug.BuildInfo, bool)
		wantVersion, wantCommit string
	}{
		{"ldflags_win", "1.2.3", "abc123", info("v9.9.9", "vcs.revision", "fff"), "1.2.3", "abc123"},
		{"go_install_module_version", defaultVersion, "", info("v1.4.0"), "1.4.0", "unknown"},
		{"checkout_build_revision", defaultVersion, "", info("(devel)", "vcs.revision", "0123abcd", "vcs.modified", "false"), defaultVersion, "0123abcd"},
		{"checkout_build_dirty", defaultVersion, "", info("(devel)", "vcs.revision", "0123abcd", "vcs.modified", "true"), defaultVersion, "0123abcd-dirty"},
		{"ldflags_version_with_vcs_commit", "2.0.0", "", info("(devel)", "vcs.revision", "beef"), "2.0.0", "beef"},
		{"no_build_info", defaultVersion, "", none, defaultVersion, "unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, cm := stampedVersion(c.version, c.commit, c.read)
			if v != c.wantVersion || cm != c.wantCommit {
				t.Errorf("stampedVersion(%q, %q) = %q, %q; want %q, %q", c.version, c.commit, v, cm, c.wantVersion, c.wantCommit)
			}
		})
	}
}

// TestVersionPrintsCommit: both --version and the version command print the
// version and the commit on one line.
func TestVersionPrintsCommit(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		v, c := buildVersion()
		if want := "agent-mcp " + v + " (commit " + c + ")\n"; stdout.String() != want || c == "" {
			t.Errorf("%v printed %q, want %q", args, stdout.String(), want)
		}
	}
}
