// Package launcher is the small program that Bash's sandbox re-executes
// agent-mcp as (agent-mcp __sandbox init PLAN): it sets the sandbox up
// inside the namespaces it was started in, starts the shell, and then only
// reaps and signals the command's processes. See package sandbox for the
// layers and what each holds. Inside the sandbox the same binary also
// serves the go command's build cache (agent-mcp __sandbox gocache USER
// OWN, gocache.go): GOCACHEPROG reads the user's cache and stores into the
// workspace's stand-in.
//
// The package imports only the standard library, golang.org/x/sys and
// go-landlock, so that its initialisation comes before that of the rest of
// agent-mcp and the launcher can run from it (see the init function in
// launcher_linux.go): a launcher then starts like a small program, not
// like the whole application.
package launcher
