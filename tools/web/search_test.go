package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/tools"
)

// fakeSearXNG answers /search?format=json like a SearXNG instance.
func fakeSearXNG(t *testing.T, queries *[]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		*queries = append(*queries, r.URL.Query().Get("q"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query":"go","results":[
			{"title":"The Go Programming Language","url":"https://go.dev/","content":"Go is an open source language."},
			{"title":"Go docs","url":"https://pkg.go.dev/std","content":""},
			{"title":"Go (game)","url":"https://en.wikipedia.org/wiki/Go_(game)","content":"A board game."},
			{"title":"dup","url":"https://go.dev/","content":"same link again"},
			{"title":"not a web link","url":"magnet:?xt=abc","content":""},
			{"title":"","url":"https://blog.golang.org/x","content":""}
		]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func searchCall(t *testing.T, tool *tools.Tool, args map[string]any) (*tools.Result, error) {
	t.Helper()
	return call(t, tool, &tools.UseContext{Session: newSession(t)}, args)
}

func TestWebSearch_searxng(t *testing.T) {
	t.Parallel()
	var queries []string
	srv := fakeSearXNG(t, &queries)
	tool := WebSearch(SearchOptions{SearXNGURL: srv.URL + "/"})
	if tool.Disabled {
		t.Fatal("WebSearch with a SearXNG URL is not enabled")
	}
	titles := func(res *tools.Result) []string {
		var out []string
		for _, r := range res.Output.(WebSearchOutput).Results {
			out = append(out, r.Title)
		}
		return out
	}
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"all_results_deduplicated", map[string]any{"query": "golang"},
			[]string{"The Go Programming Language", "Go docs", "Go (game)", "https://blog.golang.org/x"}},
		{"allowed_domains_with_subdomains", map[string]any{"query": "golang", "allowed_domains": []string{"go.dev"}},
			[]string{"The Go Programming Language", "Go docs"}},
		{"blocked_domains", map[string]any{"query": "golang", "blocked_domains": []string{"https://wikipedia.org/", "GOLANG.ORG"}},
			[]string{"The Go Programming Language", "Go docs"}},
		{"nothing_left", map[string]any{"query": "golang", "allowed_domains": []string{"example.com"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := searchCall(t, tool, c.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := titles(res); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("titles = %q, want %q", got, c.want)
			}
		})
	}
	if queries[0] != "golang" {
		t.Errorf("SearXNG was asked %q", queries)
	}

	t.Run("text_format", func(t *testing.T) {
		res, err := searchCall(t, tool, map[string]any{"query": "golang", "allowed_domains": []string{"go.dev"}})
		if err != nil {
			t.Fatal(err)
		}
		want := "Web search results for query: \"golang\"\n\n" +
			`Links: [{"title":"The Go Programming Language","url":"https://go.dev/"},{"title":"Go docs","url":"https://pkg.go.dev/std"}]` + "\n" +
			"\nSnippets:\n1. The Go Programming Language\n   Go is an open source language."
		if res.Text != want {
			t.Errorf("text =\n%s\nwant\n%s", res.Text, want)
		}
		res, _ = searchCall(t, tool, map[string]any{"query": "golang", "allowed_domains": []string{"example.com"}})
		if !strings.Contains(res.Text, "No results found") {
			t.Errorf("empty result text = %q", res.Text)
		}
	})
}

func TestWebSearch_validation(t *testing.T) {
	t.Parallel()
	var queries []string
	tool := WebSearch(SearchOptions{SearXNGURL: fakeSearXNG(t, &queries).URL})
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"short_query", map[string]any{"query": " a "}, "at least 2 characters"},
		{"both_domain_lists", map[string]any{"query": "go", "allowed_domains": []string{"a.com"}, "blocked_domains": []string{"b.com"}}, "cannot both be given"},
		{"bad_domain", map[string]any{"query": "go", "blocked_domains": []string{"not a domain"}}, `blocked_domains[0] "not a domain"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := searchCall(t, tool, c.args)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
	if len(queries) != 0 {
		t.Errorf("invalid input reached the backend: %q", queries)
	}
}

func TestWebSearch_disabled_without_backend(t *testing.T) {
	t.Parallel()
	if !WebSearch(SearchOptions{}).Disabled {
		t.Error("WebSearch without a backend is enabled")
	}
}

func TestWebSearch_backend_errors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("q") {
		case "forbidden":
			http.Error(w, "no", http.StatusForbidden)
		case "garbage":
			fmt.Fprint(w, "<html>")
		case "slow":
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	// The answers that come at once get all the time a loaded machine
	// needs; only the backend that never answers meets the short limit.
	patient := WebSearch(SearchOptions{SearXNGURL: srv.URL, Timeout: time.Minute})
	short := WebSearch(SearchOptions{SearXNGURL: srv.URL, Timeout: 50 * time.Millisecond})
	for q, want := range map[string]string{
		"forbidden": "SearXNG answered 403 Forbidden (is the json format enabled",
		"garbage":   "not the expected JSON",
		"slow":      "timed out after 50ms waiting for SearXNG",
	} {
		tool := patient
		if q == "slow" {
			tool = short
		}
		_, err := searchCall(t, tool, map[string]any{"query": q})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", q, err, want)
		}
	}
}

func TestWebSearch_brave(t *testing.T) {
	t.Parallel()
	var gotKey, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey, gotQuery = r.Header.Get("X-Subscription-Token"), r.URL.Query().Get("q")
		json.NewEncoder(w).Encode(map[string]any{"web": map[string]any{"results": []map[string]string{
			{"title": "Brave result", "url": "https://example.com/r", "description": "with <strong>highlight</strong>"},
		}}})
	}))
	defer srv.Close()
	tool := WebSearch(SearchOptions{BraveAPIKey: "k123", BraveURL: srv.URL})
	res, err := searchCall(t, tool, map[string]any{"query": "brave query"})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output.(WebSearchOutput)
	if gotKey != "k123" || gotQuery != "brave query" || out.Backend != "Brave Search" || len(out.Results) != 1 || out.Results[0].Snippet != "with highlight" {
		t.Errorf("key %q, query %q, output %+v", gotKey, gotQuery, out)
	}
}
