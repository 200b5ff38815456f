package fs_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testpdf"
	"github.com/agent-mcp/agent-mcp/tools"
)

// scan is a picture standing for a scanned page.
func scan(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i % 251)
	}
	return img
}

// pageBlocks is the text Read gives for pages first..last of a document
// of testpdf.TextPages(_, lines).
func pageBlocks(first, last, lines int) string {
	var b []string
	for p := first; p <= last; p++ {
		var l []string
		for j := 1; j <= lines; j++ {
			l = append(l, fmt.Sprintf("Page %d line %d", p, j))
		}
		b = append(b, fmt.Sprintf("<page number=\"%d\">\n%s\n</page>", p, strings.Join(l, "\n")))
	}
	return strings.Join(b, "\n\n")
}

func TestReadPDF(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.put("three.pdf", string(testpdf.Build(testpdf.TextPages(3, 2), testpdf.Options{})))
	h.put("long.pdf", string(testpdf.Build(testpdf.TextPages(25, 2), testpdf.Options{Compress: true})))
	h.put("huge.pdf", string(testpdf.Build(testpdf.TextPages(500, 30), testpdf.Options{Compress: true})))
	pages := func(rel, pages string) *tools.Result {
		return h.ok("Read", map[string]any{"file_path": h.path(rel), "pages": pages})
	}
	notes := func(res *tools.Result) string {
		var n []string
		for _, c := range res.Extra {
			if c.Kind == tools.TextContent {
				n = append(n, c.Text)
			}
		}
		return strings.Join(n, "\n")
	}

	t.Run("whole_short_pdf_has_every_page_with_markers", func(t *testing.T) {
		res := h.read("three.pdf")
		if want := pageBlocks(1, 3, 2); res.Text != want {
			t.Errorf("got %q, want %q", res.Text, want)
		}
		if len(res.Extra) != 0 {
			t.Errorf("extra blocks: %+v", res.Extra)
		}
		out := outputJSON(t, res)
		file := out["file"].(map[string]any)
		if out["type"] != "pdf" || file["totalPages"] != 3.0 || file["numPages"] != 3.0 || file["startPage"] != 1.0 || file["content"] != res.Text {
			t.Errorf("output %v", out)
		}
	})
	t.Run("pages_selects_a_range", func(t *testing.T) {
		cases := []struct{ pages, want string }{
			{"2-3", pageBlocks(2, 3, 2)},
			{"2", pageBlocks(2, 2, 2)},
			{" 3 ", pageBlocks(3, 3, 2)},
			{"2-", pageBlocks(2, 3, 2)},
			{"1-20", pageBlocks(1, 3, 2)},
		}
		for _, c := range cases {
			if res := pages("three.pdf", c.pages); res.Text != c.want {
				t.Errorf("pages %q: got %q, want %q", c.pages, res.Text, c.want)
			}
		}
	})
	t.Run("bad_pages_are_errors_naming_what_is_expected", func(t *testing.T) {
		cases := []struct {
			pages string
			want  []string
		}{
			{"abc", []string{"pages", `"1-5"`}},
			{"1,3", []string{"pages", `"1-5"`}},
			{"0", []string{"page 1 or later"}},
			{"5-2", []string{"ends before it starts", `"2-5"`}},
			{"1-21", []string{"21 pages", "20", `"1-20"`}},
			{"4-6", []string{"three.pdf", "has 3 pages", "past its end"}},
		}
		for _, c := range cases {
			h.fail("Read", map[string]any{"file_path": h.path("three.pdf"), "pages": c.pages}, c.want...)
		}
	})
	t.Run("over_10_pages_without_pages_shows_the_first_10_and_how_to_read_on", func(t *testing.T) {
		res := h.read("long.pdf")
		if want := pageBlocks(1, 10, 2); res.Text != want {
			t.Errorf("got %q, want %q", res.Text, want)
		}
		contains(t, "note", notes(res), "25 pages", "pages 1-10 are shown", `pages="11-25"`)
		if res := pages("long.pdf", "11-25"); res.Text != pageBlocks(11, 25, 2) || len(res.Extra) != 0 {
			t.Errorf("reading on: %q %+v", res.Text, res.Extra)
		}
	})
	t.Run("500_pages", func(t *testing.T) {
		res := h.read("huge.pdf")
		if want := pageBlocks(1, 10, 30); res.Text != want {
			t.Errorf("got %q", res.Text)
		}
		contains(t, "note", notes(res), "500 pages", `pages="11-30"`)
		if res := pages("huge.pdf", "491-"); res.Text != pageBlocks(491, 500, 30) {
			t.Errorf("pages 491-: %q", res.Text)
		}
		file := outputJSON(t, pages("huge.pdf", "250"))["file"].(map[string]any)
		if file["startPage"] != 250.0 || file["numPages"] != 1.0 || file["totalPages"] != 500.0 {
			t.Errorf("output %v", file)
		}
	})
	t.Run("token_budget_shows_the_pages_that_fit", func(t *testing.T) {
		// 20 pages of about 8,000 characters: 160,000 characters, more
		// than the 100,000 (25,000 tokens) one Read returns.
		dense := make([]testpdf.Page, 20)
		for i := range dense {
			for j := 0; j < 80; j++ {
				dense[i].Lines = append(dense[i].Lines, fmt.Sprintf("p%02d l%02d ", i+1, j)+strings.Repeat("lorem ipsum ", 8))
			}
		}
		h.put("dense.pdf", string(testpdf.Build(dense, testpdf.Options{Compress: true})))
		res := pages("dense.pdf", "1-20")
		if n := len(res.Text); n > 100000 || n < 80000 {
			t.Errorf("text of %d characters, want the pages that fit in 100000", n)
		}
		shown := strings.Count(res.Text, "<page number=")
		if shown < 10 || shown >= 20 || !strings.HasSuffix(res.Text, "</page>") {
			t.Errorf("%d pages shown, ending %q", shown, res.Text[len(res.Text)-20:])
		}
		contains(t, "note", notes(res), "25000 tokens", fmt.Sprintf("pages 1-%d of 20 are shown", shown), fmt.Sprintf(`pages="%d-20"`, shown+1))
	})
	t.Run("page_without_text_comes_back_as_an_image", func(t *testing.T) {
		doc := []testpdf.Page{{Lines: []string{"Figure 1 follows."}}, {Picture: scan(300, 400)}, {}}
		h.put("scanned.pdf", string(testpdf.Build(doc, testpdf.Options{Compress: true})))
		res := h.read("scanned.pdf")
		contains(t, "text", res.Text, "<page number=\"1\">\nFigure 1 follows.\n</page>",
			"<page number=\"2\">\n[no text on this page: it is shown as an image below]\n</page>", "<page number=\"3\">\n[blank page]\n</page>")
		if len(res.Extra) != 2 || res.Extra[0].Text != "Page 2 as an image:" || res.Extra[1].Kind != tools.ImageContent || res.Extra[1].MIMEType != "image/png" {
			t.Fatalf("extra blocks %+v", res.Extra)
		}
		img, err := png.Decode(bytes.NewReader(res.Extra[1].Data))
		if err != nil {
			t.Fatal(err)
		}
		// US Letter at 150 dpi is 1275x1650, bounded to 1568 on the long side.
		if b := img.Bounds(); b.Dx() != 1211 || b.Dy() != 1568 {
			t.Errorf("page image is %v, want 1211x1568", b)
		}
		// The picture's pixels reach the image: not a blank page.
		if _, ok := img.(*image.Gray); !ok {
			t.Errorf("a gray page is encoded as %T, want *image.Gray", img)
		}
		if g := img.(*image.Gray); g.GrayAt(600, 780).Y == 255 && g.GrayAt(601, 790).Y == 255 {
			t.Error("the page image is blank where the picture is")
		}
	})
	t.Run("encrypted_damaged_and_truncated_pdfs", func(t *testing.T) {
		good := testpdf.Build(testpdf.TextPages(4, 3), testpdf.Options{})
		h.put("locked.pdf", string(testpdf.Build(testpdf.TextPages(2, 2), testpdf.Options{UserPassword: "secret", Compress: true})))
		h.put("restricted.pdf", string(testpdf.Build(testpdf.TextPages(2, 2), testpdf.Options{OwnerPassword: "owner"})))
		h.put("garbage.pdf", "this is not a PDF at all")
		h.put("empty.pdf", "")
		h.put("cut.pdf", string(good[:len(good)/2]))
		h.fail("Read", map[string]any{"file_path": h.path("locked.pdf")}, h.path("locked.pdf"), "encrypted", "password")
		if res := h.read("restricted.pdf"); res.Text != pageBlocks(1, 2, 2) {
			t.Errorf("an encrypted PDF without a user password: %q", res.Text)
		}
		h.fail("Read", map[string]any{"file_path": h.path("garbage.pdf")}, h.path("garbage.pdf"), "damaged or not a PDF")
		h.fail("Read", map[string]any{"file_path": h.path("empty.pdf")}, h.path("empty.pdf"), "damaged or not a PDF")
		// A sparse file of 257 MB: refused by its size, before any reading.
		if err := os.Truncate(h.put("huge.pdf", "%PDF-1.7\n"), 257<<20); err != nil {
			t.Fatal(err)
		}
		h.fail("Read", map[string]any{"file_path": h.path("huge.pdf")}, h.path("huge.pdf"), "257MB", "more than the 256MB")
		// PDFium rebuilds a cut file's cross-reference table from what is
		// left: the intact pages read, or the file is refused as damaged.
		res := h.call("Read", map[string]any{"file_path": h.path("cut.pdf")})
		if res.IsError {
			contains(t, "error", res.Text, h.path("cut.pdf"), "damaged")
		} else if !strings.Contains(res.Text, "Page 1 line 1") {
			t.Errorf("truncated PDF read as %q", res.Text)
		}
	})
}
