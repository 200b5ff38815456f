package pdf_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/pdf"
	"github.com/agent-mcp/agent-mcp/internal/testpdf"
)

func open(t *testing.T, e *pdf.Engine, data []byte) (*pdf.Document, error) {
	t.Helper()
	return e.Open(context.Background(), bytes.NewReader(data), int64(len(data)))
}

func picture(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Pix[y*w+x] = uint8((x ^ y) * 4)
		}
	}
	return img
}

func TestDocument(t *testing.T) {
	t.Parallel()
	e := pdf.Default()
	pages := testpdf.TextPages(3, 4)
	pages = append(pages, testpdf.Page{Picture: picture(64, 48), Width: 400, Height: 300}, testpdf.Page{})
	for _, opts := range []testpdf.Options{{}, {Compress: true}, {OwnerPassword: "owner"}} {
		d, err := open(t, e, testpdf.Build(pages, opts))
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		if d.Pages() != 5 {
			t.Errorf("%+v: %d pages, want 5", opts, d.Pages())
		}
		p, err := d.Page(1)
		if err != nil {
			t.Fatal(err)
		}
		if want := "Page 2 line 1\nPage 2 line 2\nPage 2 line 3\nPage 2 line 4"; p.Text != want {
			t.Errorf("%+v: page 2 text %q, want %q", opts, p.Text, want)
		}
		scan, err := d.Page(3)
		if err != nil {
			t.Fatal(err)
		}
		if scan.Text != "" || scan.Objects != 1 || scan.Width != 400 || scan.Height != 300 {
			t.Errorf("%+v: picture page = %+v", opts, scan)
		}
		blank, _ := d.Page(4)
		if blank.Text != "" || blank.Objects != 0 {
			t.Errorf("%+v: blank page = %+v", opts, blank)
		}
		img, err := d.Render(3, 200, 144)
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 200 || b.Dy() != 150 {
			t.Errorf("rendered %v, want 200x150", b)
		}
		if _, err := d.Page(5); err == nil {
			t.Error("page 6 of 5 loaded")
		}
		d.Close()
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	e := pdf.Default()
	good := testpdf.Build(testpdf.TextPages(2, 2), testpdf.Options{})
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"password", testpdf.Build(testpdf.TextPages(1, 1), testpdf.Options{UserPassword: "secret"}), pdf.ErrPassword},
		{"not_a_pdf", []byte("hello, world"), pdf.ErrDamaged},
		{"empty", nil, pdf.ErrDamaged},
		{"header_only", []byte("%PDF-1.4\n"), pdf.ErrDamaged},
	}
	for _, c := range cases {
		d, err := open(t, e, c.data)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if d != nil {
			d.Close()
		}
	}
	// A truncated file either opens with what could be recovered or
	// fails as damaged; it never fails otherwise.
	for _, n := range []int{len(good) / 3, len(good) / 2, len(good) - 20} {
		d, err := open(t, e, good[:n])
		if err != nil {
			if !errors.Is(err, pdf.ErrDamaged) {
				t.Errorf("truncated to %d: %v", n, err)
			}
			continue
		}
		for i := 0; i < d.Pages(); i++ {
			if _, err := d.Page(i); err != nil && !strings.Contains(err.Error(), "PDFium") {
				t.Errorf("truncated to %d, page %d: %v", n, i+1, err)
			}
		}
		d.Close()
	}
}

// TestCancel: a context that ends closes the instance under the
// document, and every later call fails with the context's error.
func TestCancel(t *testing.T) {
	t.Parallel()
	data := testpdf.Build(testpdf.TextPages(50, 40), testpdf.Options{Compress: true})
	ctx, cancel := context.WithCancel(context.Background())
	d, err := pdf.Default().Open(ctx, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Page(0); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := d.Page(1); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v, want context.Canceled", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := pdf.Default().Open(ctx2, bytes.NewReader(data), int64(len(data))); !errors.Is(err, context.Canceled) {
		t.Errorf("open with an ended context: %v", err)
	}
}

// TestMemoryLimit: a document that needs more memory than the limit
// fails with ErrMemory instead of taking the process down.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	e := pdf.NewEngine(pdf.Options{MemoryLimit: 48 << 20, MaxInstances: 1, CacheDir: pdf.DefaultOptions().CacheDir})
	data := testpdf.Build([]testpdf.Page{{Lines: []string{"big"}, Width: 14400, Height: 14400}}, testpdf.Options{})
	d, err := open(t, e, data)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Render(0, 8000, 72)
	if !errors.Is(err, pdf.ErrMemory) {
		t.Errorf("render of 8000x8000 px in 48 MiB: %v, want ErrMemory", err)
	}
}
