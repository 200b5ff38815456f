package web

import (
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Cache bounds (docs/tools.md §8: responses are kept for 15 minutes).
const (
	// CacheTTL is how long a fetched page is reused within a session.
	CacheTTL = 15 * time.Minute
	// cacheMaxChars bounds the text a session's cache holds; the oldest
	// pages are dropped first.
	cacheMaxChars = 50 << 20
)

// page is a fetched and converted response, as cached.
type page struct {
	url         string // the URL finally fetched (after same-host redirects)
	code        int
	codeText    string
	bytes       int
	contentType string
	// text is the Markdown (or plain text) as runes, so offsets count
	// characters and slicing never splits one.
	text []rune
	// notText is set for a body that was not text; text is then empty.
	notText bool
	// truncated is set when the body was larger than the fetch limit.
	truncated bool
	fetched   time.Time
}

type cacheEntry struct {
	key string
	p   *page
}

// fetchCache is a session's WebFetch cache, kept in a Session slot.
type fetchCache struct {
	mu      sync.Mutex
	entries []cacheEntry // oldest first
	chars   int
}

type fetchCacheKey struct{}

// sessionCache returns the session's cache, making it on first use.
func sessionCache(s *tools.Session) *fetchCache {
	return s.Slot(fetchCacheKey{}, func() any { return &fetchCache{} }).(*fetchCache)
}

// get returns the page cached under key if it is younger than CacheTTL.
func (c *fetchCache) get(key string, now time.Time) (*page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(now)
	for _, e := range c.entries {
		if e.key == key {
			return e.p, true
		}
	}
	return nil, false
}

// put caches p under key, replacing an older copy and dropping the oldest
// pages while the cache is over its size bound.
func (c *fetchCache) put(key string, p *page, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(now)
	for i, e := range c.entries {
		if e.key == key {
			c.chars -= len(e.p.text)
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			break
		}
	}
	c.entries = append(c.entries, cacheEntry{key: key, p: p})
	c.chars += len(p.text)
	for c.chars > cacheMaxChars && len(c.entries) > 1 {
		c.chars -= len(c.entries[0].p.text)
		c.entries = c.entries[1:]
	}
}

// expire drops entries older than CacheTTL; c.mu is held.
func (c *fetchCache) expire(now time.Time) {
	i := 0
	for i < len(c.entries) && now.Sub(c.entries[i].p.fetched) >= CacheTTL {
		c.chars -= len(c.entries[i].p.text)
		i++
	}
	c.entries = c.entries[i:]
}
