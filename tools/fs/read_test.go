package fs_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/agent-mcp/agent-mcp/tools"
)

func utf16File(s string, bigEndian bool) string {
	var b bytes.Buffer
	order := binary.ByteOrder(binary.LittleEndian)
	if bigEndian {
		order = binary.BigEndian
	}
	units := append([]uint16{0xfeff}, utf16.Encode([]rune(s))...)
	for _, u := range units {
		_ = binary.Write(&b, order, u)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	t.Parallel()
	text := func(t *testing.T, content string, in map[string]any) string {
		h := newHarness(t)
		h.put("f.txt", content)
		if in == nil {
			in = map[string]any{}
		}
		in["file_path"] = h.path("f.txt")
		return h.ok("Read", in).Text
	}
	cases := []struct {
		name    string
		content string
		in      map[string]any
		want    string
	}{
		{"line_number_tab_no_padding", "a\nb\nc", nil, "1\ta\n2\tb\n3\tc"},
		{"trailing_newline_shows_last_empty_line", "a\nb\n", nil, "1\ta\n2\tb\n3\t"},
		{"crlf_shown_as_lf", "a\r\nb\r\n", nil, "1\ta\n2\tb\n3\t"},
		{"lone_trailing_cr_dropped", "a\r", nil, "1\ta"},
		{"utf8_bom_stripped", "\ufeffhello\n", nil, "1\thello\n2\t"},
		{"utf16le_with_bom_decoded", utf16File("héllo\r\nwörld", false), nil, "1\théllo\n2\twörld"},
		{"utf16be_with_bom_decoded", utf16File("x\ny", true), nil, "1\tx\n2\ty"},
		{"offset_is_one_based", "a\nb\nc\nd", map[string]any{"offset": 2, "limit": 2}, "2\tb\n3\tc"},
		{"offset_zero_means_start", "a\nb", map[string]any{"offset": 0}, "1\ta\n2\tb"},
		{"no_per_line_truncation", strings.Repeat("x", 5000), nil, "1\t" + strings.Repeat("x", 5000)},
		{"tabs_in_lines_kept", "\tindented\n", nil, "1\t\tindented\n2\t"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := text(t, c.content, c.in); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}

	t.Run("default_limit_2000_lines_with_partial_view_note", func(t *testing.T) {
		h := newHarness(t)
		var b strings.Builder
		for i := 1; i <= 2500; i++ {
			fmt.Fprintf(&b, "l%d\n", i)
		}
		h.put("long.txt", b.String())
		res := h.read("long.txt")
		if n := strings.Count(res.Text, "\n") + 1; n != 2000 {
			t.Errorf("got %d lines, want 2000", n)
		}
		if len(res.Extra) != 1 {
			t.Fatalf("want a partial-view block, got %d extra blocks", len(res.Extra))
		}
		contains(t, "note", res.Extra[0].Text, "partial view", "1-2000 of 2500", "offset=2001", "limit=2000")
	})
	t.Run("offset_past_end_is_a_notice", func(t *testing.T) {
		h := newHarness(t)
		h.put("f.txt", "a\nb")
		res := h.ok("Read", map[string]any{"file_path": h.path("f.txt"), "offset": 10})
		contains(t, "notice", res.Text, "has 2 lines", "offset 10")
	})
	t.Run("empty_file_is_a_notice", func(t *testing.T) {
		h := newHarness(t)
		h.put("e.txt", "")
		contains(t, "notice", h.read("e.txt").Text, "empty")
	})
	t.Run("whole_file_over_256KB_is_an_error", func(t *testing.T) {
		h := newHarness(t)
		h.put("big.txt", strings.Repeat("0123456789abcdef\n", 262144/17+1))
		h.fail("Read", map[string]any{"file_path": h.path("big.txt")}, "256KB", "offset", "limit")
	})
	t.Run("range_of_file_over_256KB_is_fine", func(t *testing.T) {
		h := newHarness(t)
		h.put("big.txt", strings.Repeat("0123456789abcdef\n", 262144/17+1))
		res := h.ok("Read", map[string]any{"file_path": h.path("big.txt"), "offset": 3, "limit": 1})
		if res.Text != "3\t0123456789abcdef" {
			t.Errorf("got %q", res.Text)
		}
	})
	t.Run("whole_file_over_token_cap_gives_first_page_and_note", func(t *testing.T) {
		h := newHarness(t)
		line := strings.Repeat("y", 199) + "\n"
		h.put("wide.txt", strings.Repeat(line, 1000)) // 200KB, ~50000 tokens
		res := h.read("wide.txt")
		if len(res.Text) > tokensCapChars {
			t.Errorf("page is %d characters, over the cap", len(res.Text))
		}
		if len(res.Extra) != 1 {
			t.Fatalf("want a partial-view block, got %d", len(res.Extra))
		}
		shown := strings.Count(res.Text, "\n") + 1
		contains(t, "note", res.Extra[0].Text, "25000 tokens", fmt.Sprintf("lines 1-%d of 1000", shown),
			fmt.Sprintf("offset=%d", shown+1), fmt.Sprintf("limit=%d", shown))
	})
	t.Run("explicit_range_over_token_cap_is_an_error", func(t *testing.T) {
		h := newHarness(t)
		h.put("wide.txt", strings.Repeat(strings.Repeat("y", 199)+"\n", 1000))
		h.fail("Read", map[string]any{"file_path": h.path("wide.txt"), "offset": 1, "limit": 1000}, "tokens", "25000")
	})
	t.Run("image_returns_image_block", func(t *testing.T) {
		h := newHarness(t)
		png := encodePNG(t, gradient(4, 3))
		h.put("pic.png", png)
		res := h.read("pic.png")
		if len(res.Extra) != 1 || res.Extra[0].Kind != tools.ImageContent || res.Extra[0].MIMEType != "image/png" || string(res.Extra[0].Data) != png {
			t.Errorf("want one image/png block with the file's bytes, got %+v", res.Extra)
		}
	})
	t.Run("notebook_renders_cells_with_ids_and_outputs", func(t *testing.T) {
		h := newHarness(t)
		h.put("nb.ipynb", sampleNotebook)
		res := h.read("nb.ipynb")
		contains(t, "notebook", res.Text, `<cell id="a1" type="markdown">`, "# Title", `<cell id="b2" type="code">`,
			"print(1)", `<output cell="b2" type="stream">`, "1")
	})
	t.Run("binary_extension_refused", func(t *testing.T) {
		h := newHarness(t)
		h.put("x.zip", "PK\x03\x04")
		h.fail("Read", map[string]any{"file_path": h.path("x.zip")}, "binary")
	})
	t.Run("nul_bytes_refused_as_binary", func(t *testing.T) {
		h := newHarness(t)
		h.put("x.data", "abc\x00def")
		h.fail("Read", map[string]any{"file_path": h.path("x.data")}, "binary", "NUL")
	})
	t.Run("dev_zero_refused", func(t *testing.T) {
		h := newHarness(t)
		h.fail("Read", map[string]any{"file_path": "/dev/zero"}, "never ends")
	})
	t.Run("named_pipe_refused", func(t *testing.T) {
		h := newHarness(t)
		if err := mkfifo(h.path("fifo")); err != nil {
			t.Skip("mkfifo:", err)
		}
		h.fail("Read", map[string]any{"file_path": h.path("fifo")}, "named pipe")
	})
	t.Run("pdf_header_only_is_damaged", func(t *testing.T) {
		h := newHarness(t)
		h.put("doc.pdf", "%PDF-1.4\n")
		h.fail("Read", map[string]any{"file_path": h.path("doc.pdf"), "pages": "1-2"}, h.path("doc.pdf"), "damaged or not a PDF")
	})
	t.Run("pages_on_non_pdf_is_an_error", func(t *testing.T) {
		h := newHarness(t)
		h.put("a.txt", "a")
		h.fail("Read", map[string]any{"file_path": h.path("a.txt"), "pages": "1"}, "PDF")
	})
	t.Run("missing_file_names_cwd_and_suggests", func(t *testing.T) {
		h := newHarness(t)
		h.put("config.yaml", "a")
		h.fail("Read", map[string]any{"file_path": "config.yml"}, "does not exist", h.dir, "Did you mean "+h.path("config.yaml"))
	})
	t.Run("directory_is_an_error_suggesting_LS", func(t *testing.T) {
		h := newHarness(t)
		h.fail("Read", map[string]any{"file_path": h.dir}, "directory", "LS", "Glob")
	})
	t.Run("relative_path_resolves_against_cwd", func(t *testing.T) {
		h := newHarness(t)
		h.put("sub/r.txt", "rel")
		if got := h.ok("Read", map[string]any{"file_path": "sub/r.txt"}).Text; got != "1\trel" {
			t.Errorf("got %q", got)
		}
	})
	for _, c := range []struct {
		name string
		in   map[string]any
		want string
	}{
		{"negative_offset_refused_by_schema", map[string]any{"file_path": "a", "offset": -1}, "offset"},
		{"zero_limit_refused_by_schema", map[string]any{"file_path": "a", "limit": 0}, "limit"},
		{"unknown_key_refused", map[string]any{"file_path": "a", "path": "b"}, "path"},
		{"missing_file_path_refused", map[string]any{}, "file_path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.fail("Read", c.in, c.want)
		})
	}
	t.Run("ranged_read_of_large_file_stops_early", func(t *testing.T) {
		h := newHarness(t)
		p := h.put("huge.log", strings.Repeat("line of a large log file\n", (9<<20)/25))
		res := h.ok("Read", map[string]any{"file_path": p, "offset": 2, "limit": 2})
		if res.Text != "2\tline of a large log file\n3\tline of a large log file" {
			t.Errorf("got %q", res.Text)
		}
		if total := outputJSON(t, res)["file"].(map[string]any)["totalLines"]; total != nil {
			t.Errorf("totalLines = %v, want it absent: the file was not scanned to its end", total)
		}
		st, ok := h.s.File(p)
		if !ok || !st.Partial || st.Fingerprint != ([32]byte{}) {
			t.Errorf("recorded state %+v, want partial without a fingerprint", st)
		}
	})
	t.Run("ranged_read_of_small_file_fingerprints_it", func(t *testing.T) {
		h := newHarness(t)
		p := h.put("s.txt", "a\nb\nc\n")
		h.ok("Read", map[string]any{"file_path": p, "limit": 1})
		st, ok := h.s.File(p)
		if !ok || !st.Partial || st.Fingerprint == ([32]byte{}) {
			t.Errorf("recorded state %+v, want partial with a fingerprint", st)
		}
	})
	t.Run("unreadable_file_error_names_path", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads everything")
		}
		h := newHarness(t)
		p := h.put("secret.txt", "x")
		os.Chmod(p, 0)
		h.fail("Read", map[string]any{"file_path": p}, p, "permission denied")
	})
}

// tokensCapChars is Read's token cap in characters (25000 × 4).
const tokensCapChars = 100000

const sampleNotebook = `{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "a1",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "b2",
   "metadata": {
    "tags": [
     "x"
    ]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "1\n"
     ]
    }
   ],
   "source": [
    "print(1)"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "name": "python",
   "version": "3.12.0"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`

// TestRead_budget_errors checks what Read says of ranges and lines over
// its token cap: the range's real size, counted within a bound, and a line
// that alone is over the cap named without the rest of the file read.
func TestRead_budget_errors(t *testing.T) {
	t.Parallel()
	t.Run("range_over_the_cap_names_its_real_estimate", func(t *testing.T) {
		h := newHarness(t)
		h.put("wide.txt", strings.Repeat(strings.Repeat("y", 199)+"\n", 1000))
		chars := 0
		for n := 1; n <= 1000; n++ {
			chars += 199 + len(fmt.Sprint(n)) + 2 // "N\t" + the line
		}
		h.fail("Read", map[string]any{"file_path": h.path("wide.txt"), "offset": 1, "limit": 1000},
			fmt.Sprintf("lines 1-1000 of %s come to about %d tokens", h.path("wide.txt"), chars/4))
	})
	t.Run("range_past_the_end_names_the_lines_there_are", func(t *testing.T) {
		h := newHarness(t)
		h.put("wide.txt", strings.Repeat(strings.Repeat("y", 199)+"\n", 1000))
		h.fail("Read", map[string]any{"file_path": h.path("wide.txt"), "offset": 1, "limit": 5000}, "lines 1-1000 of")
	})
	t.Run("huge_range_is_counted_within_a_bound", func(t *testing.T) {
		h := newHarness(t)
		h.put("huge.txt", strings.Repeat(strings.Repeat("z", 199)+"\n", 100000)) // 20MB
		h.fail("Read", map[string]any{"file_path": h.path("huge.txt"), "offset": 1, "limit": 100000},
			"lines 1-100000 of", "come to more than 400", "tokens")
	})
	t.Run("line_over_the_cap_is_named", func(t *testing.T) {
		h := newHarness(t)
		h.put("long.txt", "short\n"+strings.Repeat("x", 120000)+"\ntail\n")
		for _, in := range []map[string]any{
			{"file_path": h.path("long.txt")},
			{"file_path": h.path("long.txt"), "offset": 2, "limit": 1},
		} {
			h.fail("Read", in, "line 2 is longer than 100000 characters", "Grep", "cut -c")
		}
		if res := h.ok("Read", map[string]any{"file_path": h.path("long.txt"), "offset": 3, "limit": 1}); res.Text != "3\ttail" {
			t.Errorf("the line after the long one: %q", res.Text)
		}
	})
}

// A file of 4000 lines, each ending in a newline, is told as 4000 lines,
// not 4001 (the empty line after the last newline is not one).
func TestRead_line_count_of_a_file_ending_in_a_newline(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var b strings.Builder
	for i := 1; i <= 4000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	h.put("f.txt", b.String())
	res := h.read("f.txt")
	if len(res.Extra) != 1 {
		t.Fatalf("want a partial-view note, got %d extra blocks", len(res.Extra))
	}
	contains(t, "note", res.Extra[0].Text, "lines 1-2000 of 4000 are shown")
	if total := outputJSON(t, res)["file"].(map[string]any)["totalLines"]; total != 4000.0 {
		t.Errorf("totalLines = %v, want 4000", total)
	}
}
