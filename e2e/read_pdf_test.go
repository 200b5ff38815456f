package e2e

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/internal/testpdf"
)

// TestReadPDFAndImages drives Read through the real binary over stdio:
// PDF text with page markers, a scanned page as a PNG, paging through a
// 500-page document, encrypted and truncated files, an image scaled
// down, and Grep still skipping PDFs as binary.
func TestReadPDFAndImages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scan := image.NewGray(image.Rect(0, 0, 120, 160))
	for i := range scan.Pix {
		scan.Pix[i] = uint8(i * 7)
	}
	doc := append(testpdf.TextPages(2, 3), testpdf.Page{Picture: scan})
	good := testpdf.Build(testpdf.TextPages(6, 3), testpdf.Options{})
	wide := image.NewRGBA(image.Rect(0, 0, 3000, 600))
	var widePNG bytes.Buffer
	if err := png.Encode(&widePNG, wide); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"report.pdf": testpdf.Build(doc, testpdf.Options{Compress: true}),
		"book.pdf":   testpdf.Build(testpdf.TextPages(500, 20), testpdf.Options{Compress: true}),
		"locked.pdf": testpdf.Build(testpdf.TextPages(1, 1), testpdf.Options{UserPassword: "pw", Compress: true}),
		"cut.pdf":    good[:len(good)/3],
		"wide.png":   widePNG.Bytes(),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := stdioClient(t, dir)
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return res
	}
	images := func(res *mcp.CallToolResult) []*mcp.ImageContent {
		var out []*mcp.ImageContent
		for _, c := range res.Content {
			if ic, ok := c.(*mcp.ImageContent); ok {
				out = append(out, ic)
			}
		}
		return out
	}

	res := call("Read", map[string]any{"file_path": "report.pdf"})
	got := testbin.Text(t, res)
	for _, want := range []string{"<page number=\"1\">\nPage 1 line 1\nPage 1 line 2\nPage 1 line 3\n</page>",
		"<page number=\"2\">\nPage 2 line 1", "<page number=\"3\">\n[no text on this page", "Page 3 as an image:"} {
		if res.IsError || !strings.Contains(got, want) {
			t.Errorf("report.pdf: %q lacks %q", got, want)
		}
	}
	if imgs := images(res); len(imgs) != 1 || imgs[0].MIMEType != "image/png" {
		t.Errorf("report.pdf: want one PNG, got %d images", len(imgs))
	} else if cfg, err := png.DecodeConfig(bytes.NewReader(imgs[0].Data)); err != nil || max(cfg.Width, cfg.Height) > 1568 {
		t.Errorf("page image: %v %+v", err, cfg)
	}

	res = call("Read", map[string]any{"file_path": "book.pdf"})
	if got := testbin.Text(t, res); res.IsError || strings.Count(got, "<page number=") != 10 || !strings.Contains(got, `500 pages`) || !strings.Contains(got, `pages="11-30"`) {
		t.Errorf("book.pdf: %.300q", got)
	}
	res = call("Read", map[string]any{"file_path": "book.pdf", "pages": "481-500"})
	if got := testbin.Text(t, res); res.IsError || strings.Count(got, "<page number=") != 20 || !strings.Contains(got, "Page 500 line 20\n</page>") {
		t.Errorf("book.pdf 481-500: %.300q", got)
	}

	res = call("Read", map[string]any{"file_path": "locked.pdf"})
	if got := testbin.Text(t, res); !res.IsError || !strings.Contains(got, filepath.Join(dir, "locked.pdf")) || !strings.Contains(got, "password") {
		t.Errorf("locked.pdf: %v %q", res.IsError, got)
	}
	res = call("Read", map[string]any{"file_path": "cut.pdf"})
	if got := testbin.Text(t, res); res.IsError && !strings.Contains(got, "damaged") || !res.IsError && !strings.Contains(got, "Page 1 line 1") {
		t.Errorf("cut.pdf: %v %q", res.IsError, got)
	}

	res = call("Read", map[string]any{"file_path": "wide.png"})
	if imgs := images(res); res.IsError || len(imgs) != 1 || !strings.Contains(testbin.Text(t, res), "3000x600 px") {
		t.Errorf("wide.png: %v %q", res.IsError, testbin.Text(t, res))
	} else if cfg, err := png.DecodeConfig(bytes.NewReader(imgs[0].Data)); err != nil || cfg.Width != 2000 || cfg.Height != 400 {
		t.Errorf("wide.png returned %v %+v, want 2000x400", err, cfg)
	}

	// The server survived all of it, and Grep still skips PDFs with
	// compressed streams as binary (as ripgrep does, by their NUL bytes;
	// the small cut.pdf and locked.pdf happen to have none, and match).
	res = call("Grep", map[string]any{"pattern": "Catalog", "path": dir})
	if got := testbin.Text(t, res); res.IsError || strings.Contains(got, "report.pdf") || strings.Contains(got, "book.pdf") {
		t.Errorf("Grep found text in a PDF: %q", got)
	}
}
