package launcher

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeGoCache_reads_the_users_cache_and_stores_in_its_own: a get is
// answered from the workspace's cache, else from the user's (whose path
// it gives); a put goes to the workspace's alone.
func TestServeGoCache_reads_the_users_cache_and_stores_in_its_own(t *testing.T) {
	user, own := t.TempDir(), t.TempDir()
	id := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	body := []byte("compiled package")
	out := sha256.Sum256(body)
	userPath, err := cachePut(user, id("action-in-user"), out[:], body)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(filepath.Join(user, fmt.Sprintf("%x", id("action-in-user"))[:2]))

	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(cacheRequest{ID: 1, Command: "get", ActionID: id("action-in-user")})
	enc.Encode(cacheRequest{ID: 2, Command: "get", ActionID: id("unknown")})
	newBody := []byte("built in the sandbox")
	newOut := sha256.Sum256(newBody)
	enc.Encode(cacheRequest{ID: 3, Command: "put", ActionID: id("new"), OutputID: newOut[:], BodySize: int64(len(newBody))})
	enc.Encode(newBody) // a JSON string: base64
	enc.Encode(cacheRequest{ID: 4, Command: "get", ActionID: id("new")})
	enc.Encode(cacheRequest{ID: 5, Command: "put", ActionID: id("empty"), OutputID: out[:]})
	enc.Encode(cacheRequest{ID: 6, Command: "close"})
	var outBuf bytes.Buffer
	if err := serveGoCache(&in, &outBuf, user, own); err != nil {
		t.Fatal(err)
	}
	res := map[int64]cacheResponse{}
	dec := json.NewDecoder(&outBuf)
	var first cacheResponse
	if err := dec.Decode(&first); err != nil || strings.Join(first.KnownCommands, ",") != "get,put,close" {
		t.Fatalf("first message %+v, %v", first, err)
	}
	for dec.More() {
		var r cacheResponse
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		res[r.ID] = r
	}
	if r := res[1]; r.Miss || r.DiskPath != userPath || r.Size != int64(len(body)) || !bytes.Equal(r.OutputID, out[:]) || r.Err != "" {
		t.Errorf("get of the user's entry: %+v", r)
	}
	if r := res[2]; !r.Miss {
		t.Errorf("get of an unknown action: %+v", r)
	}
	if r := res[3]; r.Err != "" || !strings.HasPrefix(r.DiskPath, own+"/") {
		t.Errorf("put: %+v", r)
	}
	if b, err := os.ReadFile(res[3].DiskPath); err != nil || !bytes.Equal(b, newBody) {
		t.Errorf("put's file holds %q, %v", b, err)
	}
	if r := res[4]; r.Miss || r.DiskPath != res[3].DiskPath {
		t.Errorf("get after put: %+v", r)
	}
	if r := res[5]; r.Err == "" {
		t.Errorf("a put whose body does not match its output was taken: %+v", r)
	}
	if _, ok := res[6]; !ok {
		t.Error("close not answered")
	}
	after, _ := os.ReadDir(filepath.Join(user, fmt.Sprintf("%x", id("action-in-user"))[:2]))
	if len(after) != len(before) {
		t.Errorf("the user's cache changed: %d entries, then %d", len(before), len(after))
	}
}
