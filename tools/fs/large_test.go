package fs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
)

// TestEdit_large_file_allocates_few_copies edits a 48MB file and checks
// that the edit allocated at most three times the file's size in all: the
// file is read once and rebuilt once, never split into lines or decoded
// into strings.
func TestEdit_large_file_allocates_few_copies(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	const size = 48 << 20
	dir := t.TempDir()
	s, err := tools.NewSession(tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	line := []byte("an ordinary line of a large generated file\n")
	body := append(bytes.Repeat(line, size/len(line)), "needle\n"...)
	p := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(p)
	s.RecordFile(p, tools.FileState{Fingerprint: sha256.Sum256(body), ModTime: info.ModTime(), Size: info.Size()})
	want := append(body[:len(body)-len("needle\n"):len(body)-len("needle\n")], "pin\n"...)
	body = nil

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := editFile(context.Background(), s, p, []editSpec{{Old: "needle", New: "pin"}}, false)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f copies of the file", float64(alloc)/size)
	if alloc > 3*size {
		t.Errorf("editing a %dMB file allocated %dMB, more than three copies", size>>20, alloc>>20)
	}
	if r.unseen || r.counts[0] != 1 {
		t.Errorf("result %+v", r)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, want) {
		t.Error("file content is wrong after the edit")
	}
}

// TestWrite_large_content_is_not_copied writes 16MB of plain text, new
// and then over an existing file of the same size, and checks what the
// Write tool allocates besides the content it was given: nothing of the
// content's size for a new file (it is written, hashed and diffed in
// place), and one copy, the existing file read for its freshness and the
// diff, for an update. A Write so holds at most twice its content.
func TestWrite_large_content_is_not_copied(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	const size = 16 << 20
	dir := t.TempDir()
	s, err := tools.NewSession(tools.SessionOptions{Cwd: dir, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	line := "an ordinary line of a large generated file\n"
	content := strings.Repeat(line, size/len(line))
	p := filepath.Join(dir, "big.txt")
	for _, c := range []struct {
		name    string
		content string
		copies  float64
	}{
		{"new_file", content, 0.1},
		{"update", content[len(line):] + line, 1.1},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := runWrite(context.Background(), &WriteInput{FilePath: p, Content: c.content}, &tools.UseContext{Session: s}, nil, nil)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		got := float64(after.TotalAlloc-before.TotalAlloc) / size
		t.Logf("%s: the Write allocated %.2f copies of the content", c.name, got)
		if got > c.copies {
			t.Errorf("%s: the Write allocated %.2f copies of its content, want at most %.1f", c.name, got, c.copies)
		}
		if b, _ := os.ReadFile(p); string(b) != c.content {
			t.Fatalf("%s: the file does not hold the content", c.name)
		}
	}
}
