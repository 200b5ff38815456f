package fs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-mcp/agent-mcp/internal/pdf"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Read's limits for PDFs.
const (
	// PDFMaxPagesPerRead is the most pages one Read of a PDF returns.
	PDFMaxPagesPerRead = 20
	// PDFDefaultPages is how many pages a Read without pages returns.
	PDFDefaultPages = 10
	// pdfMaxBytes is the largest PDF Read opens.
	pdfMaxBytes = 256 << 20
	// pdfTimeout bounds the time one Read of a PDF may take, opening
	// and every page included.
	pdfTimeout = 30 * time.Second
	// pdfPageImageMaxSide bounds the longer side of a page rendered as an
	// image, in pixels: Claude scales anything longer down to 1568 px, so
	// more pixels would cost bytes and show nothing more.
	pdfPageImageMaxSide = 1568
	// pdfPageImageDPI is the resolution of a page rendered as an image
	// when that is smaller than the bound above.
	pdfPageImageDPI = 150
	// pdfMaxImageBytes bounds the page images of one Read together.
	pdfMaxImageBytes = 20 << 20
)

// pageRange is a 1-based inclusive range of pages.
type pageRange struct{ first, last int }

// parsePages parses Read's pages parameter: "N", "N-M" or "N-" (from N
// for as many pages as one Read returns).
func parsePages(s string) (pageRange, error) {
	bad := fmt.Errorf(`pages must be a page number or a range of pages such as "3", "1-5" or "10-", got %q`, s)
	t := strings.TrimSpace(s)
	from, to, isRange := strings.Cut(t, "-")
	first, err := strconv.Atoi(strings.TrimSpace(from))
	if err != nil {
		return pageRange{}, bad
	}
	last := first
	if isRange {
		if to = strings.TrimSpace(to); to == "" {
			last = first + PDFMaxPagesPerRead - 1
		} else if last, err = strconv.Atoi(to); err != nil {
			return pageRange{}, bad
		}
	}
	switch {
	case first < 1:
		return pageRange{}, fmt.Errorf("pages %q must start at page 1 or later (pages are numbered from 1)", s)
	case last < first:
		return pageRange{}, fmt.Errorf("pages %q ends before it starts: give the first page, then the last, as in \"%d-%d\"", s, last, first)
	case last-first+1 > PDFMaxPagesPerRead:
		return pageRange{}, fmt.Errorf("pages %q asks for %d pages, more than the %d one Read returns: ask for a range such as \"%d-%d\"",
			s, last-first+1, PDFMaxPagesPerRead, first, first+PDFMaxPagesPerRead-1)
	}
	return pageRange{first, last}, nil
}

// readPDF renders the pages of the PDF f (abs is its path) that in asks
// for: their text with page markers, and an image of each page that has
// no text.
func readPDF(ctx context.Context, f *os.File, abs string, in *ReadInput, info fs.FileInfo, uc *tools.UseContext) (*tools.Result, error) {
	var want pageRange
	if in.Pages != "" {
		var err error
		if want, err = parsePages(in.Pages); err != nil {
			return nil, err
		}
	}
	if info.Size() > pdfMaxBytes {
		return nil, fmt.Errorf("cannot read %s: it is %s, more than the %s a PDF may be for Read", abs, tools.FormatSize(info.Size()), tools.FormatSize(pdfMaxBytes))
	}
	hasher := sha256.New()
	if _, err := io.Copy(hasher, f); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	engine := pdf.Default()
	// The first PDF of the process compiles the engine (seconds of CPU):
	// that is not the document's time.
	if err := engine.Start(ctx); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, pdfTimeout, errPDFTimeout)
	defer cancel()
	res, shownAll, err := renderPDF(ctx, engine, io.NewSectionReader(f, 0, info.Size()), info.Size(), abs, in.Pages != "", want)
	if err != nil {
		return nil, err
	}
	var fp [32]byte
	copy(fp[:], hasher.Sum(nil))
	uc.Session.RecordFile(abs, tools.FileState{Fingerprint: fp, ModTime: info.ModTime(), Size: info.Size(), Partial: !shownAll})
	out := res.Output.(ReadOutput)
	out.File.Size = info.Size()
	res.Output = out
	return res, nil
}

var errPDFTimeout = fmt.Errorf("reading the PDF took longer than %v", pdfTimeout)

// renderPDF is readPDF's work on the document in r (size bytes, named
// abs in messages): explicit says whether want was given.
func renderPDF(ctx context.Context, engine *pdf.Engine, r io.ReadSeeker, size int64, abs string, explicit bool, want pageRange) (*tools.Result, bool, error) {
	doc, err := engine.Open(ctx, r, size)
	if err != nil {
		return nil, false, pdfError(ctx, abs, err)
	}
	defer doc.Close()
	total := doc.Pages()
	if total == 0 {
		out := ReadOutput{Type: "pdf", File: ReadFileInfo{FilePath: abs}}
		return &tools.Result{Output: out, Text: fmt.Sprintf("The PDF %s has no pages.", abs)}, true, nil
	}
	if !explicit {
		want = pageRange{1, min(total, PDFDefaultPages)}
	}
	if want.first > total {
		return nil, false, fmt.Errorf("%s has %d pages, so pages %d-%d are past its end: ask for pages between 1 and %d", abs, total, want.first, want.last, total)
	}
	want.last = min(want.last, total)

	budget := ReadMaxTokens * 4 // characters
	var text strings.Builder
	var images []tools.Content
	var notes []string
	imageBytes := 0
	last := want.first - 1 // the last page shown
	overBudget := false
	for n := want.first; n <= want.last; n++ {
		body, img, err := pdfPage(doc, n)
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, pdfError(ctx, abs, err)
			}
			body = fmt.Sprintf("[this page could not be read: %v]", err)
		}
		if img != nil {
			if imageBytes+len(img) > pdfMaxImageBytes {
				body = fmt.Sprintf("[no text on this page; its image is left out because the images of this Read already come to %s: read pages=\"%d\" to see it]",
					tools.FormatSize(int64(imageBytes)), n)
				img = nil
			} else {
				body = "[no text on this page: it is shown as an image below]"
			}
		}
		block := fmt.Sprintf("<page number=\"%d\">\n%s\n</page>", n, body)
		if n > want.first {
			block = "\n\n" + block
		}
		if cost := utf8.RuneCountInString(block); text.Len() > 0 && utf8.RuneCountInString(text.String())+cost > budget {
			overBudget = true
			break
		} else if cost > budget {
			block = cutToRunes(block, budget-40) + "\n[the rest of this page is left out]\n</page>"
			notes = append(notes, fmt.Sprintf("The text of page %d comes to more than %d tokens, so it is cut short.", n, ReadMaxTokens))
		}
		text.WriteString(block)
		if img != nil {
			imageBytes += len(img)
			images = append(images,
				tools.Content{Kind: tools.TextContent, Text: fmt.Sprintf("Page %d as an image:", n)},
				tools.Content{Kind: tools.ImageContent, MIMEType: "image/png", Data: img})
		}
		last = n
	}
	switch {
	case overBudget:
		notes = append(notes, fmt.Sprintf("The text of pages %d-%d comes to more than %d tokens, so pages %d-%d of %d are shown. To read on, call Read with pages=\"%s\".",
			want.first, want.last, ReadMaxTokens, want.first, last, total, nextPages(last+1, total)))
	case !explicit && last < total:
		notes = append(notes, fmt.Sprintf("This PDF has %d pages; pages %d-%d are shown. To read on, call Read with pages=\"%s\" (at most %d pages per call).",
			total, want.first, last, nextPages(last+1, total), PDFMaxPagesPerRead))
	}
	res := &tools.Result{Text: text.String()}
	for _, n := range notes {
		res.Extra = append(res.Extra, tools.Content{Kind: tools.TextContent, Text: n})
	}
	res.Extra = append(res.Extra, images...)
	res.Output = ReadOutput{Type: "pdf", File: ReadFileInfo{
		FilePath: abs, Content: res.Text, StartPage: want.first, NumPages: last - want.first + 1, TotalPages: total,
	}}
	return res, want.first == 1 && last == total && len(notes) == 0, nil
}

// nextPages is the pages parameter that reads on from page first.
func nextPages(first, total int) string {
	last := min(first+PDFMaxPagesPerRead-1, total)
	if last == first {
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, last)
}

// pdfPage is page n's text, or "" and a PNG of the page when it has none
// but draws something.
func pdfPage(doc *pdf.Document, n int) (string, []byte, error) {
	p, err := doc.Page(n - 1)
	if err != nil {
		return "", nil, err
	}
	switch {
	case p.Text != "":
		return p.Text, nil, nil
	case p.Objects == 0:
		return "[blank page]", nil, nil
	}
	img, err := doc.Render(n-1, pdfPageImageMaxSide, pdfPageImageDPI)
	if err != nil {
		return "", nil, err
	}
	data, err := encodePNG(img)
	if err != nil {
		return "", nil, err
	}
	return "", data, nil
}

// encodePNG encodes img, in grayscale when every pixel is gray.
func encodePNG(img image.Image) ([]byte, error) {
	if rgba, ok := img.(*image.RGBA); ok && isGray(rgba) {
		gray := image.NewGray(rgba.Bounds())
		for i := 0; i < len(gray.Pix); i++ {
			gray.Pix[i] = rgba.Pix[4*i]
		}
		img = gray
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func isGray(img *image.RGBA) bool {
	if img.Stride != 4*img.Bounds().Dx() {
		return false
	}
	for i := 0; i+3 < len(img.Pix); i += 4 {
		if img.Pix[i] != img.Pix[i+1] || img.Pix[i] != img.Pix[i+2] {
			return false
		}
	}
	return true
}

// cutToRunes is s cut to at most n runes.
func cutToRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// pdfError says why the PDF abs could not be read.
func pdfError(ctx context.Context, abs string, err error) error {
	switch {
	case errors.Is(context.Cause(ctx), errPDFTimeout):
		return fmt.Errorf("cannot read %s: %w; the PDF is damaged or too complex, or the pages asked for are too many: try fewer pages", abs, errPDFTimeout)
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, pdf.ErrPassword):
		return fmt.Errorf("cannot read %s: %w; Read cannot open password-protected PDFs", abs, err)
	}
	return fmt.Errorf("cannot read %s: %w", abs, err)
}
