package fs

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// textFormat is how a text file is stored on disk: its encoding, byte-order
// mark and dominant line ending. Writers decode a file into UTF-8 bytes,
// change those, and encode them back in the same format, so a file's
// encoding, BOM and line endings survive an edit.
type textFormat struct {
	enc encoding // encUTF8, encUTF16LE or encUTF16BE
	// bom is true when a UTF-8 file starts with a byte-order mark (UTF-16
	// files always have one: it is how they are recognised).
	bom bool
	// crlf is true when the file's first line ending is CRLF.
	crlf bool
}

var utf8BOM = []byte("\xef\xbb\xbf")

// errNotText is returned by decodeText for a file holding NUL bytes
// without a UTF-16 byte-order mark.
var errNotText = errors.New("it looks like a binary file (it holds NUL bytes)")

// errBadUTF16 is returned for UTF-16 whose decoding would not give the
// same bytes back when encoded again (an odd length or a lone surrogate):
// editing it would lose data.
var errBadUTF16 = errors.New("it is not valid UTF-16 (odd length or unpaired surrogates), so it cannot be rewritten without changing bytes it holds")

// decodeText splits a file's bytes into its format and its text as UTF-8
// bytes, without the byte-order mark and with the line endings untouched.
// For UTF-8 files the returned slice aliases data (no copy).
func decodeText(data []byte) (body []byte, f textFormat, err error) {
	head := data
	if len(head) > binarySniffBytes {
		head = head[:binarySniffBytes]
	}
	switch enc := detectEncoding(head); enc {
	case encBinary:
		return nil, f, errNotText
	case encUTF16LE, encUTF16BE:
		f.enc = enc
		if len(data)%2 != 0 {
			return nil, f, errBadUTF16
		}
		s := decodeUTF16(data, enc == encUTF16BE)
		body = []byte(s)
		if !bytes.Equal(encodeUTF16(body, enc == encUTF16BE), data) {
			return nil, f, errBadUTF16
		}
	default:
		if bytes.HasPrefix(data, utf8BOM) {
			f.bom = true
			data = data[len(utf8BOM):]
		}
		body = data
	}
	f.crlf = firstLineEndingIsCRLF(body)
	return body, f, nil
}

// encodeText is the inverse of decodeText: body (UTF-8) in format f. The
// line endings of body are written as they are.
func encodeText(body []byte, f textFormat) []byte {
	switch f.enc {
	case encUTF16LE, encUTF16BE:
		return encodeUTF16(body, f.enc == encUTF16BE)
	}
	if f.bom {
		out := make([]byte, 0, len(utf8BOM)+len(body))
		return append(append(out, utf8BOM...), body...)
	}
	return body
}

// encodeUTF16 encodes UTF-8 bytes as UTF-16 with a byte-order mark.
// Invalid UTF-8 becomes U+FFFD.
func encodeUTF16(body []byte, bigEndian bool) []byte {
	out := make([]byte, 0, 2+2*len(body))
	put := func(u uint16) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	put(0xfeff)
	for len(body) > 0 {
		r, n := utf8.DecodeRune(body)
		body = body[n:]
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			put(uint16(r1))
			put(uint16(r2))
		} else {
			put(uint16(r))
		}
	}
	return out
}

// firstLineEndingIsCRLF reports whether the first "\n" in b follows a "\r".
func firstLineEndingIsCRLF(b []byte) bool {
	i := bytes.IndexByte(b, '\n')
	return i > 0 && b[i-1] == '\r'
}

// toLF turns every CRLF in s into LF.
func toLF(s string) string {
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// toCRLF turns every line ending of s into CRLF: a lone LF gets a CR before
// it and an existing CRLF stays as it is.
func toCRLF(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.ReplaceAll(toLF(s), "\n", "\r\n")
}

// withLineEndings writes caller-supplied text (usually LF, as Read shows
// it) with the line endings of format f.
func withLineEndings(s string, f textFormat) string {
	if f.crlf {
		return toCRLF(s)
	}
	return s
}

// utf16Reader decodes a UTF-16 stream (starting with its byte-order mark)
// into UTF-8 as it is read, so a ranged Read of a large UTF-16 file need
// not hold the whole file. A lone surrogate becomes U+FFFD.
type utf16Reader struct {
	r         *bufio.Reader
	bigEndian bool
	started   bool
	out       []byte // decoded bytes not yet returned
	err       error
}

func newUTF16Reader(r io.Reader, bigEndian bool) io.Reader {
	return &utf16Reader{r: bufio.NewReaderSize(r, 64<<10), bigEndian: bigEndian}
}

func (u *utf16Reader) unit() (uint16, error) {
	var b [2]byte
	if _, err := io.ReadFull(u.r, b[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return utf8.RuneError, nil // a dangling odd byte
		}
		return 0, err
	}
	if u.bigEndian {
		return uint16(b[0])<<8 | uint16(b[1]), nil
	}
	return uint16(b[1])<<8 | uint16(b[0]), nil
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	if !u.started {
		u.started = true
		if _, err := u.unit(); err != nil { // the byte-order mark
			u.err = err
		}
	}
	for len(u.out) < len(p) && u.err == nil {
		c, err := u.unit()
		if err != nil {
			u.err = err
			break
		}
		r := rune(c)
		if utf16.IsSurrogate(r) {
			if c2, err := u.unit(); err == nil {
				r = utf16.DecodeRune(r, rune(c2))
				if r == utf8.RuneError && !utf16.IsSurrogate(rune(c2)) {
					// The first unit was lone; keep the second.
					u.out = utf8.AppendRune(u.out, utf8.RuneError)
					r = rune(c2)
				}
			} else {
				u.err = err
				r = utf8.RuneError
			}
		}
		u.out = utf8.AppendRune(u.out, r)
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	if n == 0 && u.err != nil {
		return 0, u.err
	}
	return n, nil
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
