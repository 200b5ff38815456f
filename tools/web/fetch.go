package web

import (
	"context"
	_ "embed"
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

//go:embed webfetch.md
var webFetchDescription string

// WebFetch's limits.
const (
	// FetchMaxResultSizeChars is WebFetch's result budget (docs/tools.md §1).
	FetchMaxResultSizeChars = 50_000
	// FetchPageChars is how much Markdown one call returns when no model
	// applies the prompt; offset pages through the rest.
	FetchPageChars = 40_000
	// FetchSampleChars is how much Markdown is given to the model that
	// applies the prompt.
	FetchSampleChars = 100_000
	// FetchMaxURLLength is the longest URL accepted.
	FetchMaxURLLength = 2000
	// DefaultFetchTimeout bounds one fetch, redirects included.
	DefaultFetchTimeout = 60 * time.Second
	// DefaultFetchMaxBytes bounds the body read from one response.
	DefaultFetchMaxBytes = 10 << 20
	// fetchMaxRedirects bounds a chain of same-host redirects.
	fetchMaxRedirects = 10
	// fetchSampleMaxTokens bounds the answer of the model applying the prompt.
	fetchSampleMaxTokens = 4096
)

// FetchOptions configure WebFetch.
type FetchOptions struct {
	// AllowPrivate lets WebFetch reach loopback, private, link-local and
	// other non-public addresses. Off by default: a model must not be able
	// to use the tool to reach services behind the operator's firewall.
	AllowPrivate bool
	// Timeout bounds one fetch; 0 means DefaultFetchTimeout.
	Timeout time.Duration
	// MaxBytes bounds the body read; 0 means DefaultFetchMaxBytes.
	MaxBytes int64
	// UserAgent is sent with every request; empty means "agent-mcp".
	UserAgent string

	// now is the clock of the cache; nil means time.Now.
	now func() time.Time
}

// WebFetchInput is WebFetch's input.
type WebFetchInput struct {
	URL    string `json:"url" jsonschema:"The absolute http or https URL to fetch"`
	Prompt string `json:"prompt" jsonschema:"What to find out from the page's content"`
	Offset *int   `json:"offset,omitempty" jsonschema:"Character offset in the page's Markdown to start at, to read past where an earlier call stopped (default 0)"`
}

// FetchURL is the address the call fetches (tools.URLInput).
func (in *WebFetchInput) FetchURL() string { return in.URL }

// WebFetchOutput is WebFetch's structured output.
type WebFetchOutput struct {
	// URL is the address the content came from, after the https upgrade
	// and any same-host redirects.
	URL         string `json:"url"`
	Code        int    `json:"code"`
	CodeText    string `json:"codeText"`
	Bytes       int    `json:"bytes"`
	ContentType string `json:"contentType,omitempty"`
	// Result is the text given to the model (the prompt's answer, or the
	// Markdown with the prompt stated).
	Result     string `json:"result"`
	DurationMs int64  `json:"durationMs"`
	// Cached is set when the page came from the session's cache.
	Cached bool `json:"cached"`
	// PromptApplied is set when a model answered the prompt.
	PromptApplied bool `json:"promptApplied"`
	// Offset and TotalChars place the returned text in the whole page;
	// NextOffset is where the next call should start, when text remains.
	Offset     int  `json:"offset"`
	TotalChars int  `json:"totalChars"`
	NextOffset *int `json:"nextOffset,omitempty"`
	// RedirectURL is set when the server redirected to another host; the
	// caller may fetch it with a new call.
	RedirectURL string `json:"redirectUrl,omitempty"`
}

// fetcher does WebFetch's work; one is shared by every session.
type fetcher struct {
	opts   FetchOptions
	client *http.Client
}

// WebFetch returns the WebFetch tool.
func WebFetch(opts FetchOptions) *tools.Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultFetchTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultFetchMaxBytes
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "agent-mcp"
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	f := &fetcher{opts: opts, client: newGuardedClient(opts.AllowPrivate)}
	return tools.New(tools.Tool{
		Name:               "WebFetch",
		Description:        webFetchDescription,
		SearchHint:         "fetch a web page as Markdown",
		MaxResultSizeChars: FetchMaxResultSizeChars,
		OpenWorld:          true,
		ReadOnly:           true,
		ConcurrencySafe:    true,
		Idempotent:         true,
	}, tools.Handler[WebFetchInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "url").Format = "uri"
			tools.Prop(s, "offset").Minimum = tools.Ptr(0.0)
		},
		Validate: func(_ context.Context, in *WebFetchInput, _ *tools.UseContext) error {
			if _, err := fetchURL(in.URL); err != nil {
				return err
			}
			if strings.TrimSpace(in.Prompt) == "" {
				return errors.New("prompt must be a non-empty string: say what to find out from the page")
			}
			return nil
		},
		Call: f.run,
	})
}

// fetchURL checks a url parameter and upgrades http to https, except for
// loopback hosts (a local server has no certificate).
func fetchURL(raw string) (*url.URL, error) {
	if len(raw) > FetchMaxURLLength {
		return nil, fmt.Errorf("url is %d characters long; at most %d are accepted", len(raw), FetchMaxURLLength)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("url %q is not a valid URL: %v", raw, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("url %q must be absolute, starting with https:// or http://", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q has scheme %q; only http and https are fetched", raw, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q contains a user name or password; credentials in URLs are not sent", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("url %q has no host name", raw)
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		u.Scheme = "https"
	}
	u.Fragment = ""
	return u, nil
}

func (f *fetcher) run(ctx context.Context, in *WebFetchInput, uc *tools.UseContext, progress tools.Progress) (*tools.Result, error) {
	start := time.Now()
	u, err := fetchURL(in.URL)
	if err != nil {
		return nil, err
	}
	offset := 0
	if in.Offset != nil {
		offset = *in.Offset
	}
	key := u.String()
	cache := sessionCache(uc.Session)
	p, cached := cache.get(key, f.opts.now())
	if !cached {
		progress(tools.ProgressUpdate{Message: "Fetching " + key})
		var redirect *redirectReport
		p, redirect, err = f.fetch(ctx, u)
		if err != nil {
			return nil, err
		}
		if redirect != nil {
			return redirect.result(in.Prompt, time.Since(start)), nil
		}
		if !p.notText {
			cache.put(key, p, f.opts.now())
		}
	}
	out := WebFetchOutput{
		URL: p.url, Code: p.code, CodeText: p.codeText, Bytes: p.bytes, ContentType: p.contentType,
		Cached: cached, Offset: offset, TotalChars: len(p.text),
	}
	if p.notText {
		size := "size unknown"
		if p.bytes >= 0 {
			size = sizeText(p.bytes)
		} else {
			out.Bytes = 0
		}
		out.Result = fmt.Sprintf("%s answered with %s content (%s), which is not text, so it is not shown. WebFetch returns web pages and other text only.",
			p.url, p.contentType, size)
		out.DurationMs = time.Since(start).Milliseconds()
		return &tools.Result{Output: out, Text: out.Result}, nil
	}
	if offset > len(p.text) {
		return nil, fmt.Errorf("offset %d is past the end of %s, whose content is %d characters long", offset, p.url, len(p.text))
	}

	if uc.Sampler != nil {
		end := min(offset+FetchSampleChars, len(p.text))
		progress(tools.ProgressUpdate{Message: "Applying the prompt to " + p.url})
		answer, err := uc.Sampler.Sample(ctx, fetchSystemPrompt, samplePrompt(p, offset, end, in.Prompt), fetchSampleMaxTokens)
		if err == nil && strings.TrimSpace(answer) != "" {
			out.PromptApplied = true
			out.Result = strings.TrimSpace(answer)
			if end < len(p.text) {
				out.NextOffset = tools.Ptr(end)
				out.Result += fmt.Sprintf("\n\n[The answer is based on characters %d to %d of %d; call WebFetch again with offset: %d to consider the rest of the page.]",
					offset, end, len(p.text), end)
			}
			out.DurationMs = time.Since(start).Milliseconds()
			return &tools.Result{Output: out, Text: out.Result}, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			uc.Log().Warn("WebFetch: applying the prompt failed; returning the content", "url", p.url, "err", err)
		}
	}

	end := min(offset+FetchPageChars, len(p.text))
	var b strings.Builder
	fmt.Fprintf(&b, "Prompt: %s\n\n", in.Prompt)
	b.WriteString("No model was available to apply the prompt, so the page's content follows; answer the prompt from it.\n\n")
	if offset == 0 && end == len(p.text) {
		fmt.Fprintf(&b, "Content of %s (%d characters):\n\n", p.url, len(p.text))
	} else {
		fmt.Fprintf(&b, "Content of %s, characters %d to %d of %d:\n\n", p.url, offset, end, len(p.text))
	}
	b.WriteString(string(p.text[offset:end]))
	if end < len(p.text) {
		out.NextOffset = tools.Ptr(end)
		fmt.Fprintf(&b, "\n\n[%d more characters. Call WebFetch again with offset: %d to read on.]", len(p.text)-end, end)
	}
	if p.truncated {
		fmt.Fprintf(&b, "\n\n[The response was larger than %s; only its beginning was read.]", sizeText(int(f.opts.MaxBytes)))
	}
	out.Result = b.String()
	out.DurationMs = time.Since(start).Milliseconds()
	return &tools.Result{Output: out, Text: out.Result}, nil
}

const fetchSystemPrompt = "You answer a question about a web page using only the page content you are given. " +
	"Be concise and specific; quote exact wording only where it matters (code, commands, figures, short phrases). " +
	"If the content does not answer the question, say so."

func samplePrompt(p *page, offset, end int, prompt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Content of %s", p.url)
	if offset > 0 || end < len(p.text) {
		fmt.Fprintf(&b, " (characters %d to %d of %d)", offset, end, len(p.text))
	}
	b.WriteString(":\n<content>\n")
	b.WriteString(string(p.text[offset:end]))
	b.WriteString("\n</content>\n\n")
	b.WriteString(prompt)
	return b.String()
}

// redirectReport is a redirect to another host: not followed, reported so
// the caller can decide to fetch the new URL.
type redirectReport struct {
	from, to string
	code     int
	codeText string
}

func (r *redirectReport) result(prompt string, elapsed time.Duration) *tools.Result {
	text := fmt.Sprintf("%s redirects to a different host: %s (%d %s).\n"+
		"Redirects are only followed within the same host. To get the content, call WebFetch again with:\n"+
		"  url: %s\n  prompt: %s", r.from, r.to, r.code, r.codeText, r.to, prompt)
	return &tools.Result{
		Output: WebFetchOutput{
			URL: r.from, Code: r.code, CodeText: r.codeText, Result: text,
			DurationMs: elapsed.Milliseconds(), RedirectURL: r.to,
		},
		Text: text,
	}
}

// sameHost reports whether a redirect from a to b may be followed: the same
// host and port (a leading "www." aside) and no downgrade from https to http.
func sameHost(a, b *url.URL) bool {
	if a.Scheme == "https" && b.Scheme != "https" {
		return false
	}
	host := func(u *url.URL) string { return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.") }
	// A port the scheme implies counts as no port, so an upgrade from
	// http://host to https://host stays on the same host.
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" && p != map[string]string{"http": "80", "https": "443"}[u.Scheme] {
			return p
		}
		return ""
	}
	return host(a) == host(b) && port(a) == port(b)
}

// fetch GETs u, following same-host redirects, and converts the body.
func (f *fetcher) fetch(ctx context.Context, u *url.URL) (*page, *redirectReport, error) {
	fctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	for range fetchMaxRedirects + 1 {
		req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, nil, fmt.Errorf("WebFetch cannot request %s: %v", u, err)
		}
		req.Header.Set("User-Agent", f.opts.UserAgent)
		req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5")
		resp, err := f.client.Do(req)
		if err != nil {
			return nil, nil, describeFetchError(ctx, u.String(), f.opts.Timeout, err)
		}
		if isRedirect(resp.StatusCode) {
			loc := resp.Header.Get("Location")
			resp.Body.Close()
			if loc == "" {
				return nil, nil, fmt.Errorf("%s answered %s without a Location to go to", u, resp.Status)
			}
			next, err := u.Parse(loc)
			if err != nil {
				return nil, nil, fmt.Errorf("%s redirects to %q, which is not a valid URL: %v", u, loc, err)
			}
			next.Fragment = ""
			if !sameHost(u, next) {
				return nil, &redirectReport{from: u.String(), to: next.String(), code: resp.StatusCode, codeText: http.StatusText(resp.StatusCode)}, nil
			}
			u = next
			continue
		}
		p, err := f.readPage(fctx, ctx, u, resp)
		resp.Body.Close()
		return p, nil, err
	}
	return nil, nil, fmt.Errorf("WebFetch gave up on %s after %d redirects", u, fetchMaxRedirects)
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// readPage reads and converts a final (non-redirect) response.
func (f *fetcher) readPage(fctx, ctx context.Context, u *url.URL, resp *http.Response) (*page, error) {
	p := &page{url: u.String(), code: resp.StatusCode, codeText: http.StatusText(resp.StatusCode), fetched: f.opts.now()}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s answered %d %s; nothing was fetched", u, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	sniff := make([]byte, 512)
	n, err := io.ReadFull(resp.Body, sniff)
	sniff = sniff[:n]
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, describeFetchError(ctx, u.String(), f.opts.Timeout, err)
	}
	kind, mediaType, charset := classify(resp.Header.Get("Content-Type"), sniff)
	p.contentType = mediaType
	if kind == kindOther {
		p.notText = true
		switch {
		case resp.ContentLength >= 0:
			p.bytes = int(resp.ContentLength)
		case len(sniff) < cap(sniff):
			p.bytes = len(sniff) // the whole body was read
		default:
			p.bytes = -1 // unknown, and not worth downloading to find out
		}
		return p, nil
	}
	rest, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes-int64(len(sniff))+1))
	if err != nil {
		return nil, describeFetchError(ctx, u.String(), f.opts.Timeout, err)
	}
	if fctx.Err() != nil {
		return nil, describeFetchError(ctx, u.String(), f.opts.Timeout, fctx.Err())
	}
	body := append(sniff, rest...)
	if int64(len(body)) > f.opts.MaxBytes {
		body = body[:f.opts.MaxBytes]
		p.truncated = true
	}
	p.bytes = len(body)
	text := decodeText(body, charset)
	if kind == kindHTML {
		md, err := htmlToMarkdown(text, u.String())
		if err != nil {
			return nil, fmt.Errorf("converting the HTML of %s to Markdown failed: %v", u, err)
		}
		text = md
	}
	p.text = []rune(text)
	return p, nil
}

// sizeText formats a byte count as docs/tools.md §1 does.
func sizeText(n int) string { return tools.FormatSize(int64(n)) }
