package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A server holds at most maxOpenDocs documents open: opening one more
// closes the least recently used.
func TestOpenDocumentsAreBounded(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := newClient(ServerConfig{Name: "silent", Command: self, Env: map[string]string{"AGENT_MCP_LSP_TEST_STUB": "silent"}}, dir, env{})
	defer c.stop()
	ctx := context.Background()
	p, err := c.ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("f%d.txt", i)) }
	for i := range maxOpenDocs {
		if _, _, err := c.sync(ctx, p, path(i), "plaintext", "x"); err != nil {
			t.Fatal(err)
		}
	}
	// f0 used again: f1 is now the least recently used.
	if _, _, err := c.sync(ctx, p, path(0), "plaintext", "x"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.sync(ctx, p, path(maxOpenDocs), "plaintext", "x"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.docs) != maxOpenDocs || c.docs[fileURI(path(1))] != nil || c.docs[fileURI(path(0))] == nil || c.docs[fileURI(path(maxOpenDocs))] == nil {
		t.Errorf("%d open; f0 open %v, f1 open %v", len(c.docs), c.docs[fileURI(path(0))] != nil, c.docs[fileURI(path(1))] != nil)
	}
}
