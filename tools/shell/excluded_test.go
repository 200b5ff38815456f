package shell

import "testing"

func TestExcludedCommands(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		excluded ExcludedCommands
		line     string
		want     bool
	}{
		{ExcludedCommands{"docker", "git push"}, "docker ps", true},
		{ExcludedCommands{"docker", "git push"}, "docker", true},
		{ExcludedCommands{"docker", "git push"}, "git push origin", true},
		{ExcludedCommands{"docker", "git push"}, "dockerd", false},
		{ExcludedCommands{"docker", "git push"}, "git pull", false},
		{ExcludedCommands{"docker", "git push"}, "echo docker", false},
		{ExcludedCommands{"docker", "git push"}, "", false},
		{nil, "docker ps", false},
		{ExcludedCommands{""}, "docker ps", false},
		// Every simple command of the line must be an excluded one.
		{ExcludedCommands{"git", "docker compose"}, "git status", true},
		{ExcludedCommands{"git", "docker compose"}, "git status && git push", true},
		{ExcludedCommands{"git", "docker compose"}, "timeout 5 git fetch", true},
		{ExcludedCommands{"git", "docker compose"}, "docker compose up; git log | git sh", true},
		{ExcludedCommands{"git", "docker compose"}, "git --version; python3 w.py", false},
		{ExcludedCommands{"git", "docker compose"}, "git log | sh -c 'touch x'", false},
		{ExcludedCommands{"git", "docker compose"}, "git x \"$(touch y)\"", false},
		{ExcludedCommands{"git", "docker compose"}, "docker run x", false},
		{ExcludedCommands{"git", "docker compose"}, "g=git; $g status", false},
		{ExcludedCommands{"git", "docker compose"}, "gitx status", false},
		{ExcludedCommands{"git", "docker compose"}, "git status; eval \"$x\"", false},
		{ExcludedCommands{"git", "docker compose"}, "git (", false},
	} {
		if got := tt.excluded.Match(tt.line); got != tt.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tt.excluded, tt.line, got, tt.want)
		}
	}
}
