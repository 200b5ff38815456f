package web

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed websearch.md
var webSearchDescription string

// WebSearch's limits.
const (
	// SearchMaxResults is how many results a search returns at most.
	SearchMaxResults = 10
	// DefaultSearchTimeout bounds one search request.
	DefaultSearchTimeout = 30 * time.Second
	// DefaultBraveURL is the Brave Search API's web search endpoint.
	DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"
	// searchMaxBody bounds the backend's answer read.
	searchMaxBody = 4 << 20
)

// SearchOptions configure WebSearch. The tool is enabled only when a backend
// is configured: SearXNGURL, or BraveAPIKey (SearXNG wins when both are set).
type SearchOptions struct {
	// SearXNGURL is the base URL of a SearXNG instance with the JSON format
	// enabled (e.g. http://localhost:8888); /search is appended.
	SearXNGURL string
	// BraveAPIKey is a Brave Search API subscription token.
	BraveAPIKey string
	// BraveURL overrides DefaultBraveURL (for tests and proxies).
	BraveURL string
	// Timeout bounds one search; 0 means DefaultSearchTimeout.
	Timeout time.Duration
	// Client is the HTTP client for the backend; nil means a default one.
	// The backend is the operator's choice, so it may be on a private
	// network: no address guard applies here.
	Client *http.Client
}

// WebSearchInput is WebSearch's input.
type WebSearchInput struct {
	Query          string   `json:"query" jsonschema:"The search query"`
	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema:"Only return results from these domains (and their subdomains)"`
	BlockedDomains []string `json:"blocked_domains,omitempty" jsonschema:"Never return results from these domains (and their subdomains)"`
}

// SearchResult is one search hit.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// WebSearchOutput is WebSearch's structured output.
type WebSearchOutput struct {
	Query      string         `json:"query"`
	Results    []SearchResult `json:"results"`
	Backend    string         `json:"backend"`
	DurationMs int64          `json:"durationMs"`
}

// searchBackend runs a query and returns hits in rank order.
type searchBackend interface {
	name() string
	search(ctx context.Context, query string) ([]SearchResult, error)
}

// WebSearch returns the WebSearch tool.
func WebSearch(opts SearchOptions) *tools.Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultSearchTimeout
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.BraveURL == "" {
		opts.BraveURL = DefaultBraveURL
	}
	var backend searchBackend
	switch {
	case opts.SearXNGURL != "":
		backend = &searxng{base: strings.TrimRight(opts.SearXNGURL, "/"), client: opts.Client}
	case opts.BraveAPIKey != "":
		backend = &brave{endpoint: opts.BraveURL, key: opts.BraveAPIKey, client: opts.Client}
	}
	return tools.New(tools.Tool{
		Name:            "WebSearch",
		Description:     webSearchDescription,
		SearchHint:      "search the web",
		OpenWorld:       true,
		ReadOnly:        true,
		ConcurrencySafe: true,
		Idempotent:      true,
		Disabled:        backend == nil,
	}, tools.Handler[WebSearchInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "query").MinLength = tools.Ptr(2)
		},
		Validate: func(_ context.Context, in *WebSearchInput, _ *tools.UseContext) error {
			if len(strings.TrimSpace(in.Query)) < 2 {
				return errors.New("query must be at least 2 characters long")
			}
			if len(in.AllowedDomains) > 0 && len(in.BlockedDomains) > 0 {
				return errors.New("allowed_domains and blocked_domains cannot both be given: use one or the other")
			}
			for field, list := range map[string][]string{"allowed_domains": in.AllowedDomains, "blocked_domains": in.BlockedDomains} {
				for i, d := range list {
					if normalizeDomain(d) == "" {
						return fmt.Errorf("%s[%d] %q is not a domain name (expected e.g. \"example.com\")", field, i, d)
					}
				}
			}
			return nil
		},
		Call: func(ctx context.Context, in *WebSearchInput, _ *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
			if backend == nil {
				return nil, errors.New("WebSearch has no search backend: the operator must configure --searxng-url or --brave-api-key")
			}
			start := time.Now()
			progress(tools.ProgressUpdate{Message: "Searching for " + in.Query})
			sctx, cancel := context.WithTimeout(ctx, opts.Timeout)
			defer cancel()
			hits, err := backend.search(sctx, strings.TrimSpace(in.Query))
			if err != nil {
				if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
					return nil, fmt.Errorf("WebSearch timed out after %s waiting for %s", opts.Timeout, backend.name())
				}
				return nil, err
			}
			results := filterResults(hits, in.AllowedDomains, in.BlockedDomains)
			out := WebSearchOutput{Query: in.Query, Results: results, Backend: backend.name(), DurationMs: time.Since(start).Milliseconds()}
			return &tools.Result{Output: out, Text: renderSearch(in.Query, results)}, nil
		},
	})
}

// renderSearch writes results as the model reads them: the query, the
// links as a JSON list of titles and URLs, then the snippets.
func renderSearch(query string, results []SearchResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Web search results for query: %q\n\n", query)
	if len(results) == 0 {
		b.WriteString("No results found. Try other words, or fewer domain restrictions.")
		return b.String()
	}
	type link struct {
		Title string `json:"title"`
		URL   string `json:"url"`
	}
	links := make([]link, len(results))
	for i, r := range results {
		links[i] = link{r.Title, r.URL}
	}
	j, _ := json.Marshal(links)
	fmt.Fprintf(&b, "Links: %s\n", j)
	var snippets []string
	for i, r := range results {
		if r.Snippet != "" {
			snippets = append(snippets, fmt.Sprintf("%d. %s\n   %s", i+1, r.Title, r.Snippet))
		}
	}
	if len(snippets) > 0 {
		b.WriteString("\nSnippets:\n")
		b.WriteString(strings.Join(snippets, "\n"))
	}
	return b.String()
}

// normalizeDomain lower-cases a domain and strips a scheme, path, port and
// leading "*." or "."; it returns "" for something that is not a domain.
func normalizeDomain(d string) string {
	d = strings.ToLower(strings.TrimSpace(d))
	if i := strings.Index(d, "://"); i >= 0 {
		d = d[i+3:]
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		d = d[:i]
	}
	if h, _, ok := strings.Cut(d, ":"); ok {
		d = h
	}
	d = strings.TrimPrefix(strings.TrimPrefix(d, "*"), ".")
	d = strings.TrimSuffix(d, ".")
	if d == "" || strings.ContainsAny(d, " \t@") {
		return ""
	}
	return d
}

// domainMatches reports whether host is domain or one of its subdomains.
func domainMatches(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}

// filterResults applies the domain lists, drops results that are not
// http(s) links and duplicates, and keeps at most SearchMaxResults.
func filterResults(hits []SearchResult, allowed, blocked []string) []SearchResult {
	norm := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, d := range list {
			if n := normalizeDomain(d); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	allow, block := norm(allowed), norm(blocked)
	seen := map[string]bool{}
	results := []SearchResult{}
	for _, h := range hits {
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || seen[h.URL] {
			continue
		}
		host := strings.ToLower(u.Hostname())
		matchesAny := func(list []string) bool {
			for _, d := range list {
				if domainMatches(host, d) {
					return true
				}
			}
			return false
		}
		if len(allow) > 0 && !matchesAny(allow) || matchesAny(block) {
			continue
		}
		seen[h.URL] = true
		if h.Title == "" {
			h.Title = h.URL
		}
		results = append(results, h)
		if len(results) == SearchMaxResults {
			break
		}
	}
	return results
}

// getJSON GETs endpoint and decodes its JSON answer into v.
func getJSON(ctx context.Context, client *http.Client, backend, endpoint string, header http.Header, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return fmt.Errorf("WebSearch: bad %s URL: %v", backend, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agent-mcp")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("WebSearch could not reach %s: %v", backend, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, searchMaxBody))
	if err != nil {
		return fmt.Errorf("WebSearch: reading %s's answer: %v", backend, err)
	}
	if resp.StatusCode != http.StatusOK {
		hint := ""
		switch {
		case backend == "SearXNG" && resp.StatusCode == http.StatusForbidden:
			hint = " (is the json format enabled under search.formats in the instance's settings.yml?)"
		case backend == "Brave Search" && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
			hint = " (is the API key right?)"
		case resp.StatusCode == http.StatusTooManyRequests:
			hint = " (rate limited; wait before searching again)"
		}
		return fmt.Errorf("WebSearch: %s answered %s%s", backend, resp.Status, hint)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("WebSearch: %s answered with something that is not the expected JSON: %v", backend, err)
	}
	return nil
}

// searxng queries a SearXNG instance's JSON API.
type searxng struct {
	base   string
	client *http.Client
}

func (s *searxng) name() string { return "SearXNG" }

func (s *searxng) search(ctx context.Context, query string) ([]SearchResult, error) {
	var answer struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	q := url.Values{"q": {query}, "format": {"json"}}
	if err := getJSON(ctx, s.client, s.name(), s.base+"/search?"+q.Encode(), nil, &answer); err != nil {
		return nil, err
	}
	out := make([]SearchResult, 0, len(answer.Results))
	for _, r := range answer.Results {
		out = append(out, SearchResult{Title: strings.TrimSpace(r.Title), URL: r.URL, Snippet: strings.TrimSpace(r.Content)})
	}
	return out, nil
}

// brave queries the Brave Search API.
type brave struct {
	endpoint, key string
	client        *http.Client
}

func (b *brave) name() string { return "Brave Search" }

func (b *brave) search(ctx context.Context, query string) ([]SearchResult, error) {
	var answer struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	q := url.Values{"q": {query}, "count": {"20"}}
	h := http.Header{"X-Subscription-Token": {b.key}}
	if err := getJSON(ctx, b.client, b.name(), b.endpoint+"?"+q.Encode(), h, &answer); err != nil {
		return nil, err
	}
	out := make([]SearchResult, 0, len(answer.Web.Results))
	for _, r := range answer.Web.Results {
		out = append(out, SearchResult{Title: strings.TrimSpace(r.Title), URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return out, nil
}

// stripTags removes the <strong> highlighting Brave puts in descriptions.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}
