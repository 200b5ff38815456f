package fs

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEditMatch checks applyEdit against strings.Replace wherever
// old_string occurs exactly, checks that quote-tolerant matches change
// nothing outside the matched spans, and checks the structured patch of
// every successful edit.
func FuzzEditMatch(f *testing.F) {
	f.Add("alpha beta gamma", "beta", "BETA", false)
	f.Add("x x x", "x", "y", true)
	f.Add("x x x", "x", "y", false)
	f.Add("say “hi” it’s", `"hi" it's`, `"yo" it's`, false)
	f.Add("a\r\nb\r\n", "a\nb", "c\nd", false)
	f.Add("one\ntwo\nthree\nfour\nfive\nsix\nseven\n", "four\n", "", false)
	f.Add("", "a", "b", true)
	f.Add("'a' ‘a’ \"a\"", "'a'", "b", true)
	f.Fuzz(func(t *testing.T, body, old, new string, replaceAll bool) {
		if old == "" || old == new {
			return
		}
		for _, crlf := range []bool{false, true} {
			format := textFormat{crlf: crlf}
			res, err := applyEdit([]byte(body), format, editSpec{Old: old, New: new, ReplaceAll: replaceAll}, false)
			exactOld, exactNew := old, new
			if crlf {
				exactOld, exactNew = toCRLF(old), toCRLF(new)
			}
			n := strings.Count(body, exactOld)
			if n > 0 {
				switch {
				case n > 1 && !replaceAll:
					var me *matchError
					if !errors.As(err, &me) || me.count != n {
						t.Fatalf("crlf=%v: %d exact matches without replace_all: got %v, want a count of %d", crlf, n, err, n)
					}
				case err != nil:
					t.Fatalf("crlf=%v: %d exact matches: unexpected error %v", crlf, n, err)
				default:
					want := strings.Replace(body, exactOld, exactNew, 1)
					if replaceAll {
						want = strings.ReplaceAll(body, exactOld, exactNew)
					}
					if string(res.body) != want {
						t.Fatalf("crlf=%v: got %q, want %q", crlf, res.body, want)
					}
				}
			}
			if err != nil {
				continue
			}
			if len(res.spans) == 0 {
				t.Fatal("success without spans")
			}
			first, last := res.spans[0], res.spans[len(res.spans)-1]
			if !bytes.HasPrefix(res.body, []byte(body[:first[0]])) || !bytes.HasSuffix(res.body, []byte(body[last[1]:])) {
				t.Fatalf("text outside the matched spans changed: %q → %q", body, res.body)
			}
			checkPatch(t, body, string(res.body))
		}
	})
}

// checkPatch verifies structuredPatch(old, new): outside the hunk the texts
// agree, and the hunk's two sides are exactly the lines that differ.
func checkPatch(t *testing.T, old, new string) {
	t.Helper()
	hunks := structuredPatch([]byte(old), []byte(new))
	if old == new {
		if hunks != nil {
			t.Fatalf("patch of identical texts: %+v", hunks)
		}
		return
	}
	if hunks == nil {
		if len(old)+len(new) < patchMaxChars/2 && strings.Count(old+new, "\n") < patchMaxLines/2 {
			t.Fatalf("no patch for a small change %q → %q", old, new)
		}
		return
	}
	h := hunks[0]
	lines := func(s string) []string {
		l := strings.SplitAfter(s, "\n")
		if l[len(l)-1] == "" {
			l = l[:len(l)-1]
		}
		return l
	}
	ol, nl := lines(old), lines(new)
	os, ns := h.OldStart-1, h.NewStart-1
	if h.OldLines == 0 {
		os++
	}
	if h.NewLines == 0 {
		ns++
	}
	if os != ns || os+h.OldLines > len(ol) || ns+h.NewLines > len(nl) {
		t.Fatalf("hunk %+v out of range for %d and %d lines", h, len(ol), len(nl))
	}
	var oldSide, newSide []string
	for _, l := range h.Lines {
		if l[0] != '+' {
			oldSide = append(oldSide, l[1:])
		}
		if l[0] != '-' {
			newSide = append(newSide, l[1:])
		}
	}
	trim := func(ls []string) string {
		var out []string
		for _, l := range ls {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
		return strings.Join(out, "\n")
	}
	if got, want := strings.Join(oldSide, "\n"), trim(ol[os:os+h.OldLines]); got != want {
		t.Fatalf("old side %q, want %q (hunk %+v)", got, want, h)
	}
	if got, want := strings.Join(newSide, "\n"), trim(nl[ns:ns+h.NewLines]); got != want {
		t.Fatalf("new side %q, want %q (hunk %+v)", got, want, h)
	}
	if strings.Join(ol[:os], "") != strings.Join(nl[:ns], "") ||
		strings.Join(ol[os+h.OldLines:], "") != strings.Join(nl[ns+h.NewLines:], "") {
		t.Fatalf("texts differ outside hunk %+v: %q → %q", h, old, new)
	}
}

// FuzzLineEndings checks that decoding and encoding a file loses nothing,
// that line-ending conversion is consistent, and that the streaming UTF-16
// decoder agrees with the whole-file one.
func FuzzLineEndings(f *testing.F) {
	f.Add([]byte("a\r\nb\n"), "x\ny\r\n")
	f.Add([]byte("\xef\xbb\xbfbom\r\n"), "z\n")
	f.Add([]byte("\xff\xfea\x00\r\x00\n\x00"), "é\n")
	f.Add([]byte("\xfe\xff\x00a\x00\n"), "q")
	f.Add([]byte("\xff\xfe\x00\xd8"), "")
	f.Add([]byte("bin\x00ary"), "\r\r\n\n")
	f.Fuzz(func(t *testing.T, data []byte, content string) {
		body, format, err := decodeText(data)
		if err == nil {
			if got := encodeText(body, format); !bytes.Equal(got, data) {
				t.Fatalf("round trip of %q gave %q", data, got)
			}
			if format.enc == encUTF16LE || format.enc == encUTF16BE {
				streamed, err := io.ReadAll(newUTF16Reader(bytes.NewReader(data), format.enc == encUTF16BE))
				if err != nil || !bytes.Equal(streamed, body) {
					t.Fatalf("streaming decode of %q gave %q, %v; want %q", data, streamed, err, body)
				}
			}
		}

		crlf := toCRLF(content)
		for i := 0; i < len(crlf); i++ {
			if crlf[i] == '\n' && (i == 0 || crlf[i-1] != '\r') {
				t.Fatalf("toCRLF(%q) = %q has a lone LF", content, crlf)
			}
		}
		if toLF(crlf) != toLF(content) {
			t.Fatalf("toLF(toCRLF(%q)) = %q, want %q", content, toLF(crlf), toLF(content))
		}

		// Writing content into a file of this format and reading it back
		// gives the content with the format's line endings.
		if err != nil || !utf8.ValidString(content) || strings.ContainsRune(content, 0) || strings.HasPrefix(content, "\ufeff") {
			return
		}
		written := encodeText([]byte(withLineEndings(content, format)), format)
		back, f2, err := decodeText(written)
		if err != nil {
			t.Fatalf("cannot decode what was written (%q): %v", written, err)
		}
		if f2.enc != format.enc || (f2.bom != format.bom && format.enc == encUTF8) {
			t.Fatalf("format %+v became %+v", format, f2)
		}
		if toLF(string(back)) != toLF(content) {
			t.Fatalf("content %q came back as %q", content, back)
		}
	})
}
