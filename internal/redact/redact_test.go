package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

const tok = "ghp_Zx9Kq2LmN8pR4sT6vW1yB3dF5hJ7kM0a"

// encodings are the ways a command prints a value that the Redactor
// claims to recognise.
var encodings = []struct {
	name string
	enc  func(s string) string
}{
	{"plain", func(s string) string { return s }},
	{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"HEX", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
	{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64 raw", func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }},
	{"base64url", func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }},
	{"base64 after 1 byte", func(s string) string { return base64.StdEncoding.EncodeToString([]byte("X" + s)) }},
	{"base64 after 2 bytes", func(s string) string { return base64.StdEncoding.EncodeToString([]byte("XY" + s)) }},
	{"base64url after 1 byte", func(s string) string { return base64.URLEncoding.EncodeToString([]byte("X" + s + "Z")) }},
	{"base64 wrapped at 76", func(s string) string { return wrap(base64.StdEncoding.EncodeToString([]byte("some env=\n"+s)), 76) }},
	{"hex wrapped at 60 (xxd -p)", func(s string) string { return wrap(hex.EncodeToString([]byte("K="+s)), 60) }},
	{"od -An -tx1", func(s string) string { return odBytes(s) }},
	{"query escape", url.QueryEscape},
	{"path escape", url.PathEscape},
	{"json", func(s string) string { b, _ := json.Marshal(s); return string(b) }},
	{"json in object", func(s string) string { b, _ := json.Marshal(map[string]string{"k": s}); return string(b) }},
}

func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	return b.String() + s + "\n"
}

func odBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i%16 == 0 && i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, " %02x", s[i])
	}
	return b.String() + "\n"
}

// secrets exercises values whose encodings differ from the plain form:
// JSON and URL special characters, non-ASCII, a multi-line key.
var secrets = []Secret{
	{"GITHUB_TOKEN", tok},
	{"DB_PASSWORD", `p@ss w/ "quotes" & <tags>+=?`},
	{"UNICODE_SECRET", "clé-secrète-ünïcödé-🔑"},
	{"PEM", "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcN\n-----END KEY-----"},
}

func TestString_Encodings(t *testing.T) {
	t.Parallel()
	r := New(secrets)
	for _, s := range secrets {
		for _, e := range encodings {
			t.Run(s.Name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				enc := e.enc(s.Value)
				in := "before " + enc + " after"
				got, names := r.String(in)
				if leaked(got, s.Value, e.enc) {
					t.Fatalf("secret left in %q", got)
				}
				if !strings.Contains(got, Marker(s.Name)) || len(names) == 0 || names[0] != s.Name {
					t.Fatalf("no marker for %s in %q (names %v)", s.Name, got, names)
				}
				if !strings.HasPrefix(got, "before") || !strings.HasSuffix(got, "after") {
					t.Fatalf("text around the secret lost: %q", got)
				}
			})
		}
	}
}

// leaked reports whether out still holds the secret, as it is or in the
// encoding at hand (an 8-byte run of the encoded form, spaces ignored).
func leaked(out, secret string, enc func(string) string) bool {
	if strings.Contains(out, secret) {
		return true
	}
	e := string(stripSpace([]byte(enc(secret))))
	o := string(stripSpace([]byte(out)))
	// The encoded form's middle is the secret's alone.
	mid := e[len(e)/2-4 : len(e)/2+4]
	return strings.Contains(o, mid)
}

func TestString_NoFalsePositives(t *testing.T) {
	t.Parallel()
	r := New([]Secret{{"SHORT", "true"}, {"ONE", "1"}, {"PORT", "8080"}, {"T", tok}})
	if r.Len() == 0 {
		t.Fatal("the long secret was dropped")
	}
	for _, in := range []string{
		"true 1 8080 false, listening on 8080",
		"ghp_Zx9Kq2 is only a prefix of the token",
		strings.Repeat("a", 10000),
		"",
	} {
		if got, names := r.String(in); got != in || names != nil {
			t.Errorf("String(%.40q) = %.60q, %v; want unchanged", in, got, names)
		}
	}
}

func TestString_Overlapping(t *testing.T) {
	t.Parallel()
	r := New([]Secret{
		{"LONG", "AAAABBBBCCCCDDDD"},
		{"INNER", "BBBBCCCC"},
		{"TAIL", "CCCCDDDDEEEEFFFF"},
	})
	for _, c := range []struct{ in, want string }{
		{"x AAAABBBBCCCCDDDD y", "x [redacted: LONG] y"},
		{"x BBBBCCCC y", "x [redacted: INNER] y"},
		// Two values sharing bytes: the whole run is covered.
		{"x AAAABBBBCCCCDDDDEEEEFFFF y", "x [redacted: LONG] y"},
		{"BBBBCCCCBBBBCCCC", "[redacted: INNER][redacted: INNER]"},
	} {
		if got, _ := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestReader_EveryBoundary streams a text holding the secrets in every
// encoding, split at every offset and a byte at a time, and wants what
// String gives for the whole.
func TestReader_EveryBoundary(t *testing.T) {
	t.Parallel()
	r := New(secrets)
	var b strings.Builder
	for _, s := range secrets {
		for _, e := range encodings {
			b.WriteString("line: " + e.enc(s.Value) + "\n")
		}
	}
	text := b.String()
	want, _ := r.String(text)
	for _, s := range secrets {
		if strings.Contains(want, s.Value) {
			t.Fatalf("String left %s", s.Name)
		}
	}
	read := func(rd io.Reader) string {
		var names []string
		got, err := io.ReadAll(r.Reader(rd, func(n string) { names = append(names, n) }))
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatal("found was never called")
		}
		return string(got)
	}
	if got := read(iotest.OneByteReader(strings.NewReader(text))); got != want {
		t.Fatalf("one byte at a time:\n%s\nwant\n%s", got, want)
	}
	for cut := 1; cut < len(text); cut++ {
		got := read(io.MultiReader(strings.NewReader(text[:cut]), strings.NewReader(text[cut:])))
		if got != want {
			t.Fatalf("split at %d:\n%s\nwant\n%s", cut, got, want)
		}
	}
}

func TestReader_ErrorPassesThrough(t *testing.T) {
	t.Parallel()
	r := New(secrets)
	boom := fmt.Errorf("boom")
	_, err := io.ReadAll(r.Reader(io.MultiReader(strings.NewReader("x "+tok), iotest.ErrReader(boom)), nil))
	if err != boom {
		t.Fatalf("err = %v, want boom", err)
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := []string{
		"GITHUB_TOKEN=" + tok, "AWS_SECRET_ACCESS_KEY=abcdEFGH1234ijkl", "DB_PASSWORD=hunter2hunter2",
		"NPMTOKEN=npm_abcdefgh12", "MY_API_KEY=k-1234567890", "FEATURE_TOKEN=true",
		"SSH_AUTH_SOCK=/tmp/ssh-abc/agent.1", "GOOGLE_APPLICATION_CREDENTIALS_FILE=/home/u/creds.json",
		"PWD=/home/u/project/longpath", "HOME=/home/u/longpath", "KEYBOARD_LAYOUT=us-international",
		"DATABASE_URL=postgres://app:s3cretPassw0rd@db:5432/app", "PLAIN_URL=https://example.com/path",
		"AGENT_MCP_TOKEN=tokentokentoken", "CUSTOM=customvalue1",
	}
	got := map[string]string{}
	for _, s := range FromEnv(env, []string{"CUSTOM"}) {
		got[s.Name] = s.Value
	}
	want := map[string]string{
		"GITHUB_TOKEN": tok, "AWS_SECRET_ACCESS_KEY": "abcdEFGH1234ijkl", "DB_PASSWORD": "hunter2hunter2",
		"NPMTOKEN": "npm_abcdefgh12", "MY_API_KEY": "k-1234567890", "DATABASE_URL": "s3cretPassw0rd",
		"AGENT_MCP_TOKEN": "tokentokentoken", "CUSTOM": "customvalue1",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("FromEnv:\n got %v\nwant %v", got, want)
	}
}

// BenchmarkString_1MB is the per-result cost on a 1 MB command output
// (lines of log text with two secrets in it) with thirty secrets known.
func BenchmarkString_1MB(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var ss []Secret
	for i := range 30 {
		v := make([]byte, 40)
		for j := range v {
			v[j] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[rng.IntN(62)]
		}
		ss = append(ss, Secret{fmt.Sprintf("SECRET_%d", i), string(v)})
	}
	r := New(ss)
	var text strings.Builder
	for text.Len() < 1<<20 {
		fmt.Fprintf(&text, "2026-12-07T21:%02d:00Z INFO request id=%08x path=/api/v1/items status=200 bytes=%d\n", rng.IntN(60), rng.Uint32(), rng.IntN(1e6))
	}
	s := text.String()[:1<<20-200] + ss[3].Value + "\n" + base64.StdEncoding.EncodeToString([]byte(ss[7].Value))
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		out, names := r.String(s)
		if len(names) != 2 || bytes.Contains([]byte(out), []byte(ss[3].Value)) {
			b.Fatalf("names %v", names)
		}
	}
}

// TestPatterns: a pattern's matches (group 1 where it has one) are
// redacted under its name, in a string and in a stream cut anywhere.
func TestPatterns(t *testing.T) {
	t.Parallel()
	r := New([]Secret{{Name: "TOKEN", Value: "abcdefgh12345678"}}).WithPatterns([]Pattern{
		{Name: "redact.patterns[0]", Re: regexp.MustCompile(`sk_live_[0-9a-zA-Z]{24}`)},
		{Name: "redact.patterns[1]", Re: regexp.MustCompile(`password=(\S+)`)},
	})
	text := "key sk_live_0123456789abcdefghijklmn and password=hunter2hunter2 and abcdefgh12345678 end"
	want := "key [redacted: redact.patterns[0]] and password=[redacted: redact.patterns[1]] and [redacted: TOKEN] end"
	got, names := r.String(text)
	if got != want || len(names) != 3 {
		t.Fatalf("String = %q %q, want %q", got, names, want)
	}
	for cut := 1; cut < len(text); cut++ {
		rd := r.Reader(io.MultiReader(strings.NewReader(text[:cut]), strings.NewReader(text[cut:])), nil)
		b, _ := io.ReadAll(rd)
		if string(b) != want {
			t.Fatalf("cut at %d: %q", cut, b)
		}
	}
}
