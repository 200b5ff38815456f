package cli

import (
	"flag"
	"fmt"
	"net/url"
	"os"

	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// webFlags configure the web tools: WebSearch's backend and WebFetch's
// address guard.
type webFlags struct {
	searxngURL   string
	braveKey     string
	allowPrivate bool
}

func (w *webFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&w.searxngURL, "searxng-url", os.Getenv("AGENT_MCP_SEARXNG_URL"),
		"SearXNG instance (with the json format enabled) for WebSearch (default: $AGENT_MCP_SEARXNG_URL)")
	fs.StringVar(&w.braveKey, "brave-api-key", "",
		"Brave Search API key for WebSearch (default: $BRAVE_API_KEY; prefer the variable, flags show in ps)")
	fs.BoolVar(&w.allowPrivate, "web-allow-private", false,
		"let WebFetch reach loopback, private and link-local addresses (off: the tool cannot be used to reach internal services)")
}

// toolOptions checks the flags and turns them into the built-in tools' options.
// braveKeyEnv holds the Brave Search API key (a secret: commands do not
// see it, sandbox/proc.SecretEnv).
const braveKeyEnv = "BRAVE_API_KEY"

func (w *webFlags) toolOptions() (builtin.Options, error) {
	if w.searxngURL != "" {
		u, err := url.Parse(w.searxngURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return builtin.Options{}, fmt.Errorf("--searxng-url %q must be an http(s) URL such as http://localhost:8888", w.searxngURL)
		}
	}
	key := w.braveKey
	if key == "" {
		key = os.Getenv(braveKeyEnv)
	}
	return builtin.Options{SearXNGURL: w.searxngURL, BraveAPIKey: key, WebAllowPrivate: w.allowPrivate}, nil
}
