package fs

import (
	"bytes"
	"context"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/internal/pdf"
	"github.com/agent-mcp/agent-mcp/internal/testpdf"
)

// FuzzReadPDF feeds Read's PDF path arbitrary bytes: it must return a
// result or an error naming the file, never panic or hang (the engine's
// deadline bounds a call), and keep every page marker in order.
func FuzzReadPDF(f *testing.F) {
	pic := image.NewGray(image.Rect(0, 0, 16, 16))
	docs := [][]byte{
		testpdf.Build(testpdf.TextPages(3, 2), testpdf.Options{}),
		testpdf.Build(testpdf.TextPages(2, 2), testpdf.Options{Compress: true}),
		testpdf.Build([]testpdf.Page{{Picture: pic, Width: 100, Height: 80}}, testpdf.Options{}),
		testpdf.Build(testpdf.TextPages(1, 1), testpdf.Options{OwnerPassword: "o"}),
		testpdf.Build(testpdf.TextPages(1, 1), testpdf.Options{UserPassword: "u"}),
	}
	for _, d := range docs {
		f.Add(d, "")
		f.Add(d[:len(d)/2], "1")
		f.Add(bytes.Replace(d, []byte("/Count"), []byte("/Count 99999999 /X"), 1), "1-3")
		f.Add(bytes.Replace(d, []byte("xref"), []byte("xre"), 1), "2-")
	}
	f.Add([]byte("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 1 0 R >> endobj trailer << /Root 1 0 R >>"), "")
	engine := pdf.NewEngine(pdf.Options{MemoryLimit: 256 << 20, MaxInstances: 2, CacheDir: pdf.DefaultOptions().CacheDir})
	f.Fuzz(func(t *testing.T, data []byte, pages string) {
		want, err := parsePages(pages)
		if pages != "" && err != nil {
			return
		}
		ctx, cancel := context.WithTimeoutCause(context.Background(), 10*time.Second, errPDFTimeout)
		defer cancel()
		res, _, err := renderPDF(ctx, engine, bytes.NewReader(data), int64(len(data)), "/w/f.pdf", pages != "", want)
		if err != nil {
			if !strings.Contains(err.Error(), "/w/f.pdf") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a bare deadline error: %v", err)
			}
			return
		}
		last := 0
		for _, part := range strings.Split(res.Text, "<page number=\"")[1:] {
			var n int
			for _, c := range part {
				if c < '0' || c > '9' {
					break
				}
				n = n*10 + int(c-'0')
			}
			if n != last+1 && last != 0 {
				t.Fatalf("page %d follows page %d", n, last)
			}
			last = n
		}
	})
}

// TestPDFTimeout: a read cut off by Read's deadline says so, naming the
// file, instead of returning a bare context error.
func TestPDFTimeout(t *testing.T) {
	t.Parallel()
	data := testpdf.Build(testpdf.TextPages(3, 2), testpdf.Options{})
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errPDFTimeout)
	_, _, err := renderPDF(ctx, pdf.Default(), bytes.NewReader(data), int64(len(data)), "/w/slow.pdf", false, pageRange{})
	if err == nil || !strings.Contains(err.Error(), "/w/slow.pdf") || !strings.Contains(err.Error(), "took longer than 30s") {
		t.Errorf("err = %v", err)
	}
}
