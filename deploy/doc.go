// Package deploy holds what runs agent-mcp past one machine, and the tests
// that hold it true: the image's recipe (Containerfile at the module root),
// Kubernetes manifests for one StatefulSet per workspace with its Services
// and NetworkPolicy (kubernetes/), and a gateway example routing
// /ws/<name>/mcp to each workspace (gateway/). docs/deploy.md explains them.
//
// The package has no code of its own: its tests decode every manifest
// strictly into the Kubernetes API types (an unknown field is an error),
// check that the pieces agree with one another and with agent-mcp's own
// flags (probes on the admin port the arguments open, the token from a
// Secret, a termination grace above --shutdown-grace, limits, a
// NetworkPolicy selecting every pod), start the binary with a workspace's
// own arguments to probe it and read its metrics (every agent_mcp_* series
// it serves is listed in docs/deploy.md), and check the Containerfile's
// packages and build command.
//
// deploy is a Go module of its own (go.mod here, requiring the agent-mcp
// of this checkout through a replace directive): the Kubernetes API
// modules are needed by these tests only, and the product's go.mod does
// not carry them. Run its tests from this directory, `go test ./...`;
// .ci/run does.
package deploy
