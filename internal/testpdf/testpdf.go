package testpdf

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"crypto/rc4"
	"encoding/hex"
	"fmt"
	"image"
	"strings"
)

// Page is one page: text lines, or a picture filling the page.
type Page struct {
	// Lines are written top to bottom in 12-point Helvetica.
	Lines []string
	// Picture, if set, is drawn over the whole page (a scanned page).
	Picture *image.Gray
	// Width and Height are the page's size in points; zero means US
	// Letter (612 x 792).
	Width, Height float64
}

// Options change how the document is written.
type Options struct {
	// Compress writes streams with FlateDecode.
	Compress bool
	// UserPassword and OwnerPassword encrypt the document when either is
	// set; an empty user password opens without asking (a document that
	// only restricts printing or copying).
	UserPassword, OwnerPassword string
}

// TextPages returns n pages whose lines are "Page i line j" for lines
// 1..lines.
func TextPages(n, lines int) []Page {
	pages := make([]Page, n)
	for i := range pages {
		for j := 1; j <= lines; j++ {
			pages[i].Lines = append(pages[i].Lines, fmt.Sprintf("Page %d line %d", i+1, j))
		}
	}
	return pages
}

// Build writes the document.
func Build(pages []Page, opts Options) []byte {
	w := &writer{opts: opts, id: md5.Sum([]byte(fmt.Sprint(len(pages), opts.UserPassword, opts.OwnerPassword)))}
	encrypt := opts.UserPassword != "" || opts.OwnerPassword != ""
	if encrypt {
		w.setupEncryption()
	}
	// Objects: 1 catalog, 2 page tree, 3 font, then per page: page,
	// content, picture (if any); then the encryption dictionary.
	type pageObjs struct{ page, content, picture int }
	next := 4
	objs := make([]pageObjs, len(pages))
	for i, p := range pages {
		objs[i] = pageObjs{page: next, content: next + 1}
		next += 2
		if p.Picture != nil {
			objs[i].picture = next
			next++
		}
	}
	encObj := next
	w.header()
	w.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
	var kids []string
	for _, o := range objs {
		kids = append(kids, fmt.Sprintf("%d 0 R", o.page))
	}
	w.object(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	w.object(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, p := range pages {
		o := objs[i]
		width, height := p.Width, p.Height
		if width == 0 || height == 0 {
			width, height = 612, 792
		}
		res := "/Font << /F1 3 0 R >>"
		if o.picture != 0 {
			res += fmt.Sprintf(" /XObject << /Im1 %d 0 R >>", o.picture)
		}
		w.object(o.page, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Resources << %s >> /Contents %d 0 R >>",
			width, height, res, o.content))
		var c bytes.Buffer
		if p.Picture != nil {
			fmt.Fprintf(&c, "q %g 0 0 %g 0 0 cm /Im1 Do Q\n", width, height)
		}
		if len(p.Lines) > 0 {
			fmt.Fprintf(&c, "BT /F1 12 Tf 14 TL 72 %g Td\n", height-72)
			for _, l := range p.Lines {
				fmt.Fprintf(&c, "%s Tj T*\n", w.str(l))
			}
			c.WriteString("ET\n")
		}
		w.stream(o.content, "", c.Bytes())
		if p.Picture != nil {
			b := p.Picture.Bounds()
			pix := make([]byte, 0, b.Dx()*b.Dy())
			for y := b.Min.Y; y < b.Max.Y; y++ {
				pix = append(pix, p.Picture.Pix[p.Picture.PixOffset(b.Min.X, y):p.Picture.PixOffset(b.Max.X, y)]...)
			}
			w.stream(o.picture, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8",
				b.Dx(), b.Dy()), pix)
		}
	}
	trailer := fmt.Sprintf("/Size %d /Root 1 0 R /ID [<%x> <%x>]", next, w.id, w.id)
	if encrypt {
		w.object(encObj, fmt.Sprintf("<< /Filter /Standard /V 1 /R 2 /Length 40 /O <%x> /U <%x> /P %d >>", w.o, w.u, permissions))
		trailer = fmt.Sprintf("/Size %d /Root 1 0 R /Encrypt %d 0 R /ID [<%x> <%x>]", next+1, encObj, w.id, w.id)
	}
	w.finish(trailer)
	return w.buf.Bytes()
}

// permissions is the /P value: everything allowed.
const permissions = -4

type writer struct {
	buf     bytes.Buffer
	offsets map[int]int
	opts    Options
	id      [16]byte
	key     []byte // file key when encrypting
	o, u    []byte
}

func (w *writer) header() {
	w.offsets = map[int]int{}
	w.buf.WriteString("%PDF-1.4\n")
	if w.opts.Compress || w.key != nil {
		w.buf.WriteString("%\xe2\xe3\xcf\xd3\n")
	}
}

func (w *writer) object(num int, body string) {
	w.offsets[num] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", num, body)
}

// stream writes a stream object with the extra dictionary entries dict.
func (w *writer) stream(num int, dict string, data []byte) {
	filter := ""
	switch {
	case w.opts.Compress:
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		data, filter = z.Bytes(), " /Filter /FlateDecode"
	case w.key == nil && bytes.ContainsFunc(data, func(r rune) bool { return r >= 0x80 || r < 0x20 && r != '\n' }):
		enc := make([]byte, hex.EncodedLen(len(data)), hex.EncodedLen(len(data))+len(data)/32+1)
		hex.Encode(enc, data)
		var lines []byte
		for len(enc) > 64 {
			lines = append(append(lines, enc[:64]...), '\n')
			enc = enc[64:]
		}
		data, filter = append(append(lines, enc...), '>'), " /Filter /ASCIIHexDecode"
	}
	if w.key != nil {
		data = w.crypt(num, data)
	}
	w.offsets[num] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n<< %s /Length %d%s >>\nstream\n", num, dict, len(data), filter)
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
}

// str is s as a PDF literal string in WinAnsi (Latin-1) encoding. It
// goes into a content stream, which is encrypted as a whole.
func (w *writer) str(s string) string {
	var raw []byte
	for _, r := range s {
		if r > 0xff {
			r = '?'
		}
		raw = append(raw, byte(r))
	}
	var b strings.Builder
	b.WriteByte('(')
	for _, c := range raw {
		switch {
		case c == '(' || c == ')' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}

func (w *writer) finish(trailer string) {
	xref := w.buf.Len()
	size := 0
	for n := range w.offsets {
		size = max(size, n+1)
	}
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", size)
	for n := 1; n < size; n++ {
		if off, ok := w.offsets[n]; ok {
			fmt.Fprintf(&w.buf, "%010d 00000 n \n", off)
		} else {
			w.buf.WriteString("0000000000 65535 f \n")
		}
	}
	fmt.Fprintf(&w.buf, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, xref)
}

// padding is the standard security handler's password padding.
var padding = []byte{0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A}

func pad(pw string) []byte { return append([]byte(pw), padding...)[:32] }

func rc4Crypt(key, data []byte) []byte {
	c, _ := rc4.NewCipher(key)
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// setupEncryption computes the O and U entries and the file key
// (ISO 32000-1 algorithms 2, 3 and 4, revision 2).
func (w *writer) setupEncryption() {
	owner := w.opts.OwnerPassword
	if owner == "" {
		owner = w.opts.UserPassword
	}
	ok := md5.Sum(pad(owner))
	w.o = rc4Crypt(ok[:5], pad(w.opts.UserPassword))
	h := md5.New()
	h.Write(pad(w.opts.UserPassword))
	h.Write(w.o)
	perm := int32(permissions)
	p := uint32(perm)
	h.Write([]byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24)})
	h.Write(w.id[:])
	w.key = h.Sum(nil)[:5]
	w.u = rc4Crypt(w.key, padding)
}

// crypt encrypts data of object num (generation 0) with its object key.
func (w *writer) crypt(num int, data []byte) []byte {
	k := append(append([]byte(nil), w.key...), byte(num), byte(num>>8), byte(num>>16), 0, 0)
	sum := md5.Sum(k)
	return rc4Crypt(sum[:len(w.key)+5], data)
}
