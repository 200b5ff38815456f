package web

import (
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
)

// contentKind is how WebFetch treats a response body.
type contentKind int

const (
	kindOther contentKind = iota // not text: reported, not returned
	kindHTML                     // converted to Markdown
	kindText                     // returned as it is (plain text, Markdown, JSON, XML, code)
)

// classify decides from the Content-Type header (or, when there is none,
// from the first bytes of the body) whether the body is HTML, other text,
// or something else. It returns the media type and its charset parameter.
func classify(header string, sniff []byte) (kind contentKind, mediaType, charset string) {
	if strings.TrimSpace(header) == "" {
		header = http.DetectContentType(sniff)
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(header, ";")[0]))
	}
	charset = strings.ToLower(params["charset"])
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return kindHTML, mt, charset
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/ecmascript", mt == "application/x-javascript", mt == "application/toml",
		mt == "application/yaml", mt == "application/x-yaml", mt == "application/x-sh",
		mt == "application/sql", mt == "application/graphql", mt == "application/ld+json",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return kindText, mt, charset
	}
	return kindOther, mt, charset
}

// decodeText turns body bytes into valid UTF-8: Latin-1 family charsets are
// decoded byte by byte, anything else is taken as UTF-8 with invalid bytes
// replaced.
func decodeText(body []byte, charset string) string {
	switch charset {
	case "iso-8859-1", "latin1", "latin-1", "iso_8859-1", "l1", "windows-1252", "cp1252", "us-ascii", "ascii":
		if !utf8.Valid(body) {
			var b strings.Builder
			b.Grow(len(body) * 2)
			for _, c := range body {
				b.WriteRune(rune(c))
			}
			return b.String()
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// htmlToMarkdown converts an HTML page to Markdown with
// JohannesKaufmann/html-to-markdown v2: CommonMark output plus GFM tables
// and strikethrough, scripts and styles dropped, links made absolute
// against pageURL.
func htmlToMarkdown(page, pageURL string) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
	md, err := conv.ConvertString(page, converter.WithDomain(pageURL))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(md), nil
}
