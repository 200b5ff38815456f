package pdf

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Errors a document can fail to open with; Open wraps them.
var (
	// ErrPassword: the document is encrypted with a user password.
	ErrPassword = errors.New("it is encrypted and needs a password to open")
	// ErrSecurity: the document uses an encryption scheme PDFium cannot
	// decrypt.
	ErrSecurity = errors.New("it uses an unsupported encryption scheme")
	// ErrDamaged: the file is not a PDF or is damaged beyond repair.
	ErrDamaged = errors.New("it is damaged or not a PDF (PDFium cannot parse it)")
	// ErrMemory: the document needed more memory than an instance may
	// use.
	ErrMemory = errors.New("it needs more memory than a PDF read may use")
)

// Options configure an Engine.
type Options struct {
	// MemoryLimit bounds the linear memory of each WebAssembly instance,
	// in bytes (rounded down to 64 KiB pages; at most 4 GiB).
	MemoryLimit uint64
	// MaxInstances bounds how many documents are open at once; Open waits
	// for a free slot (or for its context to end).
	MaxInstances int
	// CacheDir, when set, keeps the compiled module on disk so a later
	// process skips the compilation.
	CacheDir string
}

// DefaultOptions are the options of Default: 1 GiB of memory per
// document, two documents at once, and the compiled module cached in
// the user's cache directory when there is one.
func DefaultOptions() Options {
	o := Options{MemoryLimit: 1 << 30, MaxInstances: 2}
	if dir, err := os.UserCacheDir(); err == nil {
		o.CacheDir = filepath.Join(dir, "agent-mcp", "pdfium-wasm")
	}
	return o
}

// Engine opens documents. Its WebAssembly module is compiled on first
// use; an Engine is safe for concurrent use.
type Engine struct {
	opts Options
	init func() (pdfium.Pool, error)
}

// NewEngine returns an engine with opts; nothing is compiled until the
// first Open.
func NewEngine(opts Options) *Engine {
	e := &Engine{opts: opts}
	e.init = sync.OnceValues(e.start)
	return e
}

// Default is the process's shared engine (DefaultOptions). The compiled
// module takes tens of megabytes and seconds of CPU to build, so every
// Read in the process shares it; each document still gets its own
// instance.
var Default = sync.OnceValue(func() *Engine { return NewEngine(DefaultOptions()) })

func (e *Engine) start() (pdfium.Pool, error) {
	rc := wazero.NewRuntimeConfig().
		// The bundled PDFium lowers setjmp/longjmp to WebAssembly
		// exception handling.
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithCloseOnContextDone(true)
	if pages := e.opts.MemoryLimit / 65536; pages > 0 && pages <= 65536 {
		rc = rc.WithMemoryLimitPages(uint32(pages))
	}
	if e.opts.CacheDir != "" {
		if err := os.MkdirAll(e.opts.CacheDir, 0o700); err == nil {
			if cache, err := wazero.NewCompilationCacheWithDir(e.opts.CacheDir); err == nil {
				rc = rc.WithCompilationCache(cache)
			}
		}
	}
	n := max(e.opts.MaxInstances, 1)
	pool, err := webassembly.Init(webassembly.Config{
		MinIdle: 0, MaxIdle: n, MaxTotal: n,
		FSConfig:      wazero.NewFSConfig(), // no filesystem: documents come in as readers
		RuntimeConfig: rc,
		Stdout:        io.Discard,
		Stderr:        io.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("starting PDFium: %w", err)
	}
	return pool, nil
}

// Document is an open PDF. Its methods must not be called concurrently.
type Document struct {
	inst  pdfium.Pdfium
	doc   references.FPDF_DOCUMENT
	ctx   context.Context
	stop  func() bool
	pages int

	mu     sync.Mutex
	killed bool
}

// Start compiles the engine's module if that has not been done, waiting
// for it at most until ctx ends (the compilation goes on for the next
// caller). Open starts the engine too; Start lets a caller keep the
// compilation, which takes seconds, out of a deadline meant for the
// document.
func (e *Engine) Start(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		_, err := e.init()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Open opens the PDF of size bytes read from r, in a fresh instance.
// When ctx ends, the instance is closed under whatever call is running
// and every later call fails with ctx's error. r must stay readable
// until Close.
func (e *Engine) Open(ctx context.Context, r io.ReadSeeker, size int64) (*Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	pool, err := e.init()
	if err != nil {
		return nil, err
	}
	inst, err := pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("starting a PDFium instance: %w", err)
	}
	if size <= 0 {
		_ = inst.Close()
		return nil, ErrDamaged
	}
	d := &Document{inst: inst, ctx: ctx}
	d.stop = context.AfterFunc(ctx, d.kill)
	opened, err := inst.OpenDocument(&requests.OpenDocument{FileReader: r, FileReaderSize: size})
	if err != nil {
		d.Close()
		return nil, d.fail(err)
	}
	d.doc = opened.Document
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: d.doc})
	if err != nil {
		d.Close()
		return nil, d.fail(err)
	}
	d.pages = count.PageCount
	if ctx.Err() != nil {
		d.Close()
		return nil, context.Cause(ctx)
	}
	return d, nil
}

// kill closes the instance under a running call.
func (d *Document) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.killed {
		d.killed = true
		_ = d.inst.Kill()
	}
}

// fail maps an error of a PDFium call: the context's error when it ended,
// else one of the package's errors where PDFium said what was wrong.
func (d *Document) fail(err error) error {
	if d.ctx.Err() != nil {
		return context.Cause(d.ctx)
	}
	switch {
	case errors.Is(err, pdfiumerrors.ErrPassword):
		return ErrPassword
	case errors.Is(err, pdfiumerrors.ErrSecurity):
		return ErrSecurity
	case errors.Is(err, pdfiumerrors.ErrFormat), errors.Is(err, pdfiumerrors.ErrFile):
		return ErrDamaged
	}
	// A failed allocation shows as a bitmap PDFium could not create, or
	// as a trap in the allocator once memory.grow is refused.
	if msg := err.Error(); strings.Contains(msg, "could not create bitmap") || strings.Contains(msg, "memory") {
		return fmt.Errorf("%w (%v)", ErrMemory, err)
	}
	return fmt.Errorf("PDFium failed: %w", err)
}

// Close releases the document and its instance.
func (d *Document) Close() {
	d.stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.killed {
		return
	}
	if d.doc != "" {
		_, _ = d.inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d.doc})
	}
	_ = d.inst.Close()
	d.killed = true
}

// Pages is the number of pages.
func (d *Document) Pages() int { return d.pages }

// Page is one page's content.
type Page struct {
	// Text is the page's text in reading order, lines separated by "\n",
	// with control characters removed.
	Text string
	// Objects counts the page's objects (text, paths, images); a page
	// without text but with objects is drawn, not written.
	Objects int
	// Width and Height are the page's size in points.
	Width, Height float64
}

// Page loads page i (0-based).
func (d *Document) Page(i int) (*Page, error) {
	if err := d.ctx.Err(); err != nil {
		return nil, context.Cause(d.ctx)
	}
	if i < 0 || i >= d.pages {
		return nil, fmt.Errorf("page %d is out of range 1-%d", i+1, d.pages)
	}
	page, err := d.inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: d.doc, Index: i})
	if err != nil {
		return nil, d.fail(err)
	}
	defer d.inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: page.Page})
	p := &Page{}
	objs, err := d.inst.FPDFPage_CountObjects(&requests.FPDFPage_CountObjects{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return nil, d.fail(err)
	}
	p.Objects = objs.Count
	w, err := d.inst.FPDF_GetPageWidthF(&requests.FPDF_GetPageWidthF{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return nil, d.fail(err)
	}
	h, err := d.inst.FPDF_GetPageHeightF(&requests.FPDF_GetPageHeightF{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return nil, d.fail(err)
	}
	p.Width, p.Height = float64(w.PageWidth), float64(h.PageHeight)
	tp, err := d.inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return nil, d.fail(err)
	}
	defer d.inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := d.inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return nil, d.fail(err)
	}
	if n.Count > 0 {
		txt, err := d.inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: tp.TextPage, Count: n.Count})
		if err != nil {
			return nil, d.fail(err)
		}
		p.Text = cleanText(txt.Text)
	}
	return p, nil
}

// Render draws page i (0-based) to an image whose longer side is at most
// maxSide pixels, at no more than dpi dots per inch.
func (d *Document) Render(i, maxSide, dpi int) (image.Image, error) {
	if err := d.ctx.Err(); err != nil {
		return nil, context.Cause(d.ctx)
	}
	if i < 0 || i >= d.pages {
		return nil, fmt.Errorf("page %d is out of range 1-%d", i+1, d.pages)
	}
	size, err := d.inst.FPDF_GetPageSizeByIndexF(&requests.FPDF_GetPageSizeByIndexF{Document: d.doc, Index: i})
	if err != nil {
		return nil, d.fail(err)
	}
	w, h := float64(size.Size.Width)*float64(dpi)/72, float64(size.Size.Height)*float64(dpi)/72
	if long := max(w, h); long > float64(maxSide) {
		w, h = w*float64(maxSide)/long, h*float64(maxSide)/long
	}
	pw, ph := max(int(w), 1), max(int(h), 1)
	out, err := d.inst.RenderPageInPixels(&requests.RenderPageInPixels{
		Page:        requests.Page{ByIndex: &requests.PageByIndex{Document: d.doc, Index: i}},
		Width:       pw,
		Height:      ph,
		RenderFlags: enums.FPDF_RENDER_FLAG_ANNOT | enums.FPDF_RENDER_FLAG_LCD_TEXT,
	})
	if err != nil {
		return nil, d.fail(err)
	}
	defer out.Cleanup()
	// The pixels live in the instance's memory until Cleanup: copy them,
	// onto white, since a page without a background is transparent.
	src := out.Result.RenderedImage
	b := src.Bounds()
	img := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	if rgba, ok := src.(*image.RGBA); ok {
		// Premultiplied: over white, each channel gains 255 - alpha.
		for y := 0; y < b.Dy(); y++ {
			from := rgba.Pix[rgba.PixOffset(b.Min.X, b.Min.Y+y):][:4*b.Dx()]
			to := img.Pix[img.PixOffset(0, y):][:4*b.Dx()]
			for x := 0; x < len(from); x += 4 {
				inv := 255 - from[x+3]
				to[x], to[x+1], to[x+2], to[x+3] = from[x]+inv, from[x+1]+inv, from[x+2]+inv, 255
			}
		}
		return img, nil
	}
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(img, img.Bounds(), src, b.Min, draw.Over)
	return img, nil
}

// cleanText normalizes PDFium's text: CRLF line breaks become "\n",
// PDFium's marks for a hyphen at a line end become "-", other control
// characters go, and trailing spaces are trimmed from each line.
func cleanText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n', r == '\t':
			b.WriteRune(r)
		case r == '\r', r == '\f', r == '\v':
			b.WriteByte('\n')
		case r == 0xfffe, r == 0x02:
			b.WriteByte('-')
		case r == 0xffff, unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
