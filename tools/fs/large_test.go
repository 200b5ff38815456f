package fs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
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
