// Package web holds the tools that reach the web: WebFetch (one page,
// converted to Markdown, with a prompt applied by a model when one is
// available) and WebSearch (a configured search backend: SearXNG or the
// Brave Search API).
//
// WebFetch guards against server-side request forgery: every connection's
// address is checked at dial time, after DNS resolution, and loopback,
// private, link-local and other non-public addresses are refused unless the
// operator allows them ([FetchOptions].AllowPrivate). Redirects are followed
// only within the same host; a redirect elsewhere is reported to the caller.
// Fetched pages are cached per session for [CacheTTL] in a Session slot.
//
// HTML is converted with github.com/JohannesKaufmann/html-to-markdown/v2:
// it is maintained, pure Go, built on golang.org/x/net/html (the parser
// browsers' behaviour is specified by), and produces CommonMark with GFM
// tables, which models read well.
//
// This package does not decide permissions (domain rules such as
// WebFetch(domain:example.com) are applied by the orchestrator's
// Permitter) and does not talk to a model itself: it uses the Sampler of the
// call's UseContext.
package web
