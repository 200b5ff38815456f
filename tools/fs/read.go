package fs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/internal/textdist"
	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed read.md
var readDescription string

// Read's limits (docs/tools.md §2).
const (
	// ReadDefaultLimit is how many lines a Read returns without a limit.
	ReadDefaultLimit = 2000
	// ReadMaxWholeFileBytes is the largest file read without offset/limit.
	ReadMaxWholeFileBytes = 262144
	// ReadMaxTokens caps a Read's text, estimated as characters / 4.
	ReadMaxTokens = 25000
	// binarySniffBytes is how much of a file is checked for NUL bytes.
	binarySniffBytes = 8192
	// readFullScanMaxBytes is the largest file a ranged Read scans to its
	// end (to count its lines and fingerprint it); a ranged Read of a
	// larger file stops after its range.
	readFullScanMaxBytes = 8 << 20
)

// ReadInput is Read's input.
type ReadInput struct {
	FilePath string `json:"file_path" jsonschema:"Path of the file to read (absolute, or relative to the current directory)"`
	Offset   *int   `json:"offset,omitempty" jsonschema:"1-based line number to start reading at; only needed for files too large to read at once"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"Number of lines to read; only needed for files too large to read at once"`
	Pages    string `json:"pages,omitempty" jsonschema:"Page range of a PDF to read, e.g. \"1-5\" or \"3\"; at most 20 pages per call"`
}

// ReadOutput is Read's structured output.
type ReadOutput struct {
	// Type is "text", "image", "notebook" or "pdf".
	Type string       `json:"type"`
	File ReadFileInfo `json:"file"`
}

// ReadFileInfo describes what was read.
type ReadFileInfo struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content,omitempty"`
	NumLines   int    `json:"numLines,omitempty"`
	StartLine  int    `json:"startLine,omitempty"`
	TotalLines int    `json:"totalLines,omitempty"`
	MIMEType   string `json:"mimeType,omitempty"`
	Size       int64  `json:"originalSize,omitempty"`
	// StartPage, NumPages and TotalPages say which pages of a PDF were
	// read, of how many.
	StartPage  int `json:"startPage,omitempty"`
	NumPages   int `json:"numPages,omitempty"`
	TotalPages int `json:"totalPages,omitempty"`
	// Dimensions are an image's size as found and as returned.
	Dimensions *ImageDimensions `json:"dimensions,omitempty"`
}

// Read returns the Read tool.
func Read() *tools.Tool {
	return tools.New(tools.Tool{
		Name:               "Read",
		Description:        readDescription,
		SearchHint:         "read a file: numbered lines, an image or a PDF",
		Core:               true,
		MaxResultSizeChars: tools.Unlimited,
		ReadOnly:           true,
		ConcurrencySafe:    true,
		Idempotent:         true,
	}, tools.Handler[ReadInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "offset").Minimum = tools.Ptr(0.0)
			tools.Prop(s, "limit").ExclusiveMinimum = tools.Ptr(0.0)
			tools.Default(s, "offset", 1)
			tools.Default(s, "limit", ReadDefaultLimit)
		},
		Validate: func(_ context.Context, in *ReadInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.FilePath) == "" {
				return errors.New(`file_path must not be empty: give the path of the file to read`)
			}
			return nil
		},
		Call: runRead,
	})
}

func runRead(ctx context.Context, in *ReadInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	abs := uc.Resolve(in.FilePath)
	if why := neverEndingFile(abs); why != "" {
		return nil, fmt.Errorf("cannot read %s: %s", abs, why)
	}
	// A first look by path, so a directory or a special file is refused
	// without being opened; what is read is checked again on the
	// descriptor, which is all that counts.
	info, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, missingFileErrorFor(uc, abs)
		}
		return nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file: use LS to list it or Glob to find files in it", abs)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("cannot read %s: it is a %s, not a regular file, and reading it may never end", abs, fileKind(info.Mode()))
	}
	ext := strings.ToLower(filepath.Ext(abs))
	mime, isImage := imageTypes[ext]
	switch {
	case isImage, ext == ".ipynb", ext == ".pdf":
	case binaryExtensions()[ext]:
		return nil, fmt.Errorf("cannot read %s: %s files are binary; Read shows text, images, notebooks and PDFs", abs, ext)
	case in.Pages != "":
		return nil, fmt.Errorf("pages applies to PDF files only; %s is not a PDF", abs)
	}
	f, info, err := openRegularForRead(uc, abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch {
	case isImage:
		return readImage(ctx, f, abs, mime, info, uc)
	case ext == ".ipynb":
		return readNotebook(f, abs, info, uc)
	case ext == ".pdf":
		return readPDF(ctx, f, abs, in, info, uc)
	}
	return readText(ctx, f, abs, in, info, uc)
}

// readText renders lines [offset, offset+limit) of the text file f, open
// at its start (abs is its path).
func readText(ctx context.Context, f *os.File, abs string, in *ReadInput, info fs.FileInfo, uc *tools.UseContext) (*tools.Result, error) {
	whole := in.Offset == nil && in.Limit == nil
	if whole && info.Size() > ReadMaxWholeFileBytes {
		return nil, fmt.Errorf("%s is %s, more than the %s that can be read at once: pass offset and limit to read a part of it, or search it with Grep",
			abs, tools.FormatSize(info.Size()), tools.FormatSize(ReadMaxWholeFileBytes))
	}
	start, limit := 1, ReadDefaultLimit
	if in.Offset != nil && *in.Offset > 0 {
		start = *in.Offset
	}
	if in.Limit != nil {
		limit = *in.Limit
	}

	head := make([]byte, binarySniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	head = head[:n]
	enc := detectEncoding(head)
	if enc == encBinary {
		return nil, fmt.Errorf("cannot read %s: it looks like a binary file (it holds NUL bytes); Read shows text, images, notebooks and PDFs", abs)
	}

	// A ranged read of a large file stops after its range instead of
	// scanning (and fingerprinting) the whole file; the session then knows
	// the file by size and modification time only.
	stopEarly := !whole && info.Size() > readFullScanMaxBytes
	hasher := sha256.New()
	var src io.Reader = io.MultiReader(bytes.NewReader(head), f)
	if !stopEarly {
		src = io.TeeReader(src, hasher)
	}
	if enc == encUTF16LE || enc == encUTF16BE {
		src = newUTF16Reader(src, enc == encUTF16BE)
	}

	budget := ReadMaxTokens * 4 // characters
	page, err := scanLines(ctx, src, start, limit, budget, stopEarly)
	var long *lineTooLongError
	if errors.As(err, &long) {
		return nil, fmt.Errorf("cannot show %s: %w", abs, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	fp := unknownFingerprint
	if page.complete {
		copy(fp[:], hasher.Sum(nil))
	}
	shownAll := page.complete && start == 1 && page.total <= len(page.lines) && !page.overBudget
	uc.Session.RecordFile(abs, tools.FileState{
		Fingerprint: fp, ModTime: info.ModTime(), Size: info.Size(), Partial: !shownAll,
	})

	out := ReadOutput{Type: "text", File: ReadFileInfo{FilePath: abs, StartLine: start}}
	if page.complete {
		out.File.TotalLines = page.total
	}
	if info.Size() == 0 {
		return &tools.Result{Output: out, Text: fmt.Sprintf("The file %s exists but is empty (0 lines).", abs)}, nil
	}
	if start > page.total {
		return &tools.Result{Output: out, Text: fmt.Sprintf(
			"The file %s has %d lines, so offset %d is past its end. Read from an offset between 1 and %d.",
			abs, page.total, start, page.total)}, nil
	}
	if page.overBudget && !whole {
		last := start + limit - 1
		if page.complete && page.total < last {
			last = page.total
		}
		about := "about"
		if page.countCut {
			about = "more than"
		}
		return nil, fmt.Errorf("lines %d-%d of %s come to %s %d tokens, more than the %d allowed in one Read: read fewer lines (a smaller limit) or search with Grep",
			start, last, abs, about, page.chars/4, ReadMaxTokens)
	}
	text := page.render(start)
	out.File.Content = text
	out.File.NumLines = len(page.lines)
	res := &tools.Result{Output: out, Text: text}
	if last := start + len(page.lines) - 1; page.complete && last < page.total && (page.overBudget || whole) {
		note := fmt.Sprintf("This is a partial view of %s: lines %d-%d of %d are shown. To read on, call Read with offset=%d and limit=%d.",
			abs, start, last, page.total, last+1, len(page.lines))
		if page.overBudget {
			note = fmt.Sprintf("The file is too long to show at once (over %d tokens). ", ReadMaxTokens) + note
		}
		res.Extra = append(res.Extra, tools.Content{Kind: tools.TextContent, Text: note})
	}
	return res, nil
}

// linePage is a window of lines scanned from a file.
type linePage struct {
	lines      []string
	total      int  // lines in the whole file (when complete)
	chars      int  // characters the window would render to
	overBudget bool // the window was cut because it exceeded the budget
	// countCut is true when chars stops short of the whole range: the
	// range was counted past the budget only up to countBound.
	countCut bool
	complete bool // the file was read to its end
}

func (p *linePage) render(start int) string {
	var b strings.Builder
	for i, l := range p.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d\t%s", start+i, l)
	}
	return b.String()
}

// Bounds of scanLines' work besides the budget.
const (
	// ctxCheckBytes is how much is read between checks for cancellation,
	// so a file whose lines are huge stops as soon as one of few lines.
	ctxCheckBytes = 1 << 20
	// countBoundFactor times the budget is as far as a range over the
	// budget is counted for its token estimate.
	countBoundFactor = 16
)

// lineTooLongError is a line in the range that alone renders to more
// than a Read may return.
type lineTooLongError struct {
	line, budget int
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than %d characters (about %d tokens), more than one Read can show (Read shows whole lines): "+
		"search it with Grep, or show a part of it with Bash (for example sed -n '%dp' FILE | cut -c1-4000)",
		e.line, e.budget, e.budget/4, e.line)
}

// scanLines reads src, keeping lines [start, start+limit) until their
// rendering passes budget characters, and counting all lines to the end of
// src; with stopEarly it stops once the window is filled instead (total is
// then unknown). Past the budget, the rest of the range is counted (not
// kept) up to countBoundFactor times the budget, so an error can name the
// range's size. A line of the range that alone is over the budget ends the
// scan with a lineTooLongError as soon as it is seen to be, without
// reading the rest of it. Memory stays bounded by the budget whatever the
// file's size, and ctx is checked every ctxCheckBytes as well as every
// 65536 lines, so a huge line is no reason to go on after a cancellation.
func scanLines(ctx context.Context, src io.Reader, start, limit, budget int, stopEarly bool) (*linePage, error) {
	r := bufio.NewReaderSize(src, 64<<10)
	p := &linePage{}
	lineNo := 1 // number of the line being read
	var cur []byte
	keeping := false
	lineRunes := 0 // characters of the range's current line so far, newline included
	first := true
	unchecked := 0 // bytes read since ctx was last checked
	countBound := countBoundFactor * budget
	for {
		chunk, err := r.ReadSlice('\n')
		if first {
			chunk = bytes.TrimPrefix(chunk, utf8BOM)
			first = false
		}

		if unchecked += len(chunk); unchecked >= ctxCheckBytes {
			unchecked = 0
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		if lineNo >= start && lineNo < start+limit {
			keeping = true
			lineRunes += utf8.RuneCount(chunk)
			if lineRunes > budget+2 {
				return nil, &lineTooLongError{line: lineNo, budget: budget}
			}
			if !p.overBudget {
				cur = append(cur, chunk...)
			}
		}
		switch {
		case err == nil || errors.Is(err, io.EOF):
			if keeping {
				cost := len(strconv.Itoa(lineNo)) + 2
				if p.overBudget {
					cost += lineRunes - newlineChars(chunk)
					p.chars += cost
				} else {
					line := strings.TrimSuffix(strings.TrimSuffix(string(cur), "\n"), "\r")
					cost += utf8.RuneCountInString(line)
					switch {
					case cost > budget:
						return nil, &lineTooLongError{line: lineNo, budget: budget}
					case p.chars+cost > budget:
						p.overBudget = true
					default:
						p.lines = append(p.lines, line)
					}
					p.chars += cost
				}
				cur, keeping, lineRunes = cur[:0], false, 0
			}
			// The newline ending the last line starts no line of its
			// own: a file of 4000 lines, each ending in one, has 4000
			// (the empty line after it is shown, as it always was, but
			// not counted).
			if len(chunk) > 0 || err == nil || lineNo == 1 {
				p.total = lineNo
			}
			if err != nil {
				p.complete = true
				return p, nil
			}
			if p.overBudget && p.chars > countBound {
				p.countCut = true
				return p, nil
			}
			if stopEarly && lineNo >= start+limit-1 {
				return p, nil
			}
			lineNo++
			if lineNo%65536 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
		case errors.Is(err, bufio.ErrBufferFull):
			// A long line: keep reading it.
		default:
			return nil, err
		}
	}
}

// newlineChars counts the line ending ("\n" or "\r\n") at the end of a
// line's last chunk.
func newlineChars(chunk []byte) int {
	switch {
	case bytes.HasSuffix(chunk, []byte("\r\n")):
		return 2
	case bytes.HasSuffix(chunk, []byte("\n")):
		return 1
	}
	return 0
}

type encoding int

const (
	encUTF8 encoding = iota
	encUTF16LE
	encUTF16BE
	encBinary
)

// detectEncoding looks at a file's first bytes: a UTF-16 byte-order mark
// means UTF-16; otherwise a NUL byte means binary.
func detectEncoding(head []byte) encoding {
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		return encUTF16LE
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		return encUTF16BE
	case bytes.IndexByte(head, 0) >= 0:
		return encBinary
	}
	return encUTF8
}

// decodeUTF16 decodes UTF-16 text after its byte-order mark.
func decodeUTF16(raw []byte, bigEndian bool) string {
	raw = raw[2:]
	u := make([]uint16, len(raw)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(raw[2*i])<<8 | uint16(raw[2*i+1])
		} else {
			u[i] = uint16(raw[2*i+1])<<8 | uint16(raw[2*i])
		}
	}
	return string(utf16.Decode(u))
}

// binaryExtensions are refused without opening the file (built on first
// use, not when the program starts).
var binaryExtensions = sync.OnceValue(func() map[string]bool {
	exts := map[string]bool{}
	for _, e := range strings.Fields(`.exe .dll .so .dylib .a .o .obj .lib .bin .class .jar .war .pyc .pyo .wasm
		.zip .gz .tgz .bz2 .xz .zst .7z .rar .tar .iso .dmg .deb .rpm
		.mp3 .mp4 .m4a .wav .flac .ogg .avi .mov .mkv .webm .bmp .ico .tiff .tif .psd
		.ttf .otf .woff .woff2 .eot .sqlite .db .dat .doc .docx .xls .xlsx .ppt .pptx .odt`) {
		exts[e] = true
	}
	return exts
})

// neverEndingFile names why a device or process file would never finish
// reading, or returns "".
func neverEndingFile(abs string) string {
	switch abs {
	case "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full", "/dev/stdin", "/dev/stdout", "/dev/stderr",
		"/dev/tty", "/dev/console", "/dev/fd/0", "/dev/fd/1", "/dev/fd/2", "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2":
		return "it is a device or stream that never ends"
	}
	if strings.HasPrefix(abs, "/proc/") && (strings.HasSuffix(abs, "/fd/0") || strings.HasSuffix(abs, "/fd/1") || strings.HasSuffix(abs, "/fd/2")) {
		return "it is a process's standard stream, which never ends"
	}
	return ""
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// missingFileError says the file does not exist, names the current
// directory, and suggests a close existing name when there is one.
func missingFileError(abs, cwd string) error {
	return missingError(abs, cwd, os.Open)
}

// missingError is missingFileError listing abs's directory with open.
func missingError(abs, cwd string, open func(dir string) (*os.File, error)) error {
	msg := fmt.Sprintf("File does not exist: %s (current directory: %s).", abs, cwd)
	if s := suggestName(abs, open); s != "" {
		msg += fmt.Sprintf(" Did you mean %s?", s)
	}
	return errors.New(msg)
}

// suggestName looks in abs's directory, opened with open, for an entry
// whose name differs only in case, in extension, or by a couple of
// characters.
func suggestName(abs string, open func(dir string) (*os.File, error)) string {
	dir, base := filepath.Split(abs)
	d, err := open(filepath.Clean(dir))
	if err != nil {
		return ""
	}
	entries, err := d.ReadDir(10001)
	d.Close()
	if err != nil && !errors.Is(err, io.EOF) || len(entries) > 10000 {
		return ""
	}
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	best, bestScore := "", 3
	for _, e := range entries {
		name := e.Name()
		score := 3
		switch {
		case strings.EqualFold(name, base):
			score = 0
		case stem != "" && strings.TrimSuffix(name, filepath.Ext(name)) == stem:
			score = 1
		default:
			if d := textdist.AtMost(strings.ToLower(name), strings.ToLower(base), 2); d <= 2 {
				score = d
			}
		}
		if score < bestScore || score == bestScore && best != "" && name < filepath.Base(best) {
			best, bestScore = filepath.Join(dir, name), score
		}
	}
	return best
}
