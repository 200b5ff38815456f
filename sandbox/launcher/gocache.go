package launcher

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GoCacheStage is the launcher stage that serves the go command's build
// cache inside the sandbox (GOCACHEPROG): `agent-mcp __sandbox gocache
// USER OWN`. A lookup is answered from OWN (the workspace's stand-in,
// where every store goes), else from USER (the user's own GOCACHE, only
// read), so that a new workspace's first build reuses what the user's
// builds compiled, and nothing a command stores reaches the user's
// cache. OWN keeps GOCACHE's own layout, so it is a build cache by itself
// too.
const GoCacheStage = "gocache"

// The GOCACHEPROG protocol (cmd/go/internal/cacheprog): JSON objects, one
// a line, the program's capabilities first; a put with a body is followed
// by the body as a JSON string (base64).
type cacheRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	// ObjectID is OutputID's name before Go 1.24 (GOEXPERIMENT=cacheprog).
	ObjectID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type cacheResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// goCacheMain serves the protocol on stdin and stdout.
func goCacheMain(args []string) int {
	if len(args) != 2 || !filepath.IsAbs(args[0]) || !filepath.IsAbs(args[1]) {
		fmt.Fprintln(os.Stderr, "agent-mcp sandbox gocache: want the user's cache and the workspace's, absolute")
		return 2
	}
	if err := serveGoCache(os.Stdin, os.Stdout, args[0], args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "agent-mcp sandbox gocache: %v\n", err)
		return 1
	}
	return 0
}

// serveGoCache answers requests from r on w until close or end of input.
func serveGoCache(r io.Reader, w io.Writer, user, own string) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	send := func(res cacheResponse) error {
		if err := enc.Encode(res); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := send(cacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	for {
		var req cacheRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading a request: %w", err)
		}
		res := cacheResponse{ID: req.ID}
		switch req.Command {
		case "get":
			res = cacheGet(req, user, own)
		case "put":
			if len(req.OutputID) == 0 {
				req.OutputID = req.ObjectID
			}
			var body []byte
			if req.BodySize > 0 {
				if err := dec.Decode(&body); err != nil {
					return fmt.Errorf("reading a body: %w", err)
				}
			}
			if int64(len(body)) != req.BodySize {
				res.Err = fmt.Sprintf("body of %d bytes, announced %d", len(body), req.BodySize)
			} else if path, err := cachePut(own, req.ActionID, req.OutputID, body); err != nil {
				res.Err = err.Error()
			} else {
				res.DiskPath = path
			}
		case "close":
			return send(res)
		default:
			res.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := send(res); err != nil {
			return err
		}
	}
}

// cacheGet looks the action up in the workspace's cache, then the user's.
func cacheGet(req cacheRequest, user, own string) cacheResponse {
	for _, dir := range []string{own, user} {
		if res, ok := cacheLookup(dir, req.ActionID); ok {
			res.ID = req.ID
			return res
		}
	}
	return cacheResponse{ID: req.ID, Miss: true}
}

// entrySize is the length of an action entry in GOCACHE's layout: "v1
// <hex action> <hex output> <size, 20 wide> <unix nanoseconds, 20
// wide>\n".
const entrySize = 2 + 1 + 64 + 1 + 64 + 1 + 20 + 1 + 20 + 1

// cacheFile is where GOCACHE keeps id's file of the given kind ("a" for
// the action entry, "d" for the output).
func cacheFile(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// cacheLookup reads an action entry and finds its output in dir.
func cacheLookup(dir string, action []byte) (cacheResponse, bool) {
	if len(action) != 32 {
		return cacheResponse{}, false
	}
	b, err := os.ReadFile(cacheFile(dir, action, "a"))
	if err != nil || len(b) != entrySize || string(b[:3]) != "v1 " || b[entrySize-1] != '\n' {
		return cacheResponse{}, false
	}
	f := strings.Fields(string(b[3:]))
	if len(f) != 4 || f[0] != hex.EncodeToString(action) {
		return cacheResponse{}, false
	}
	out, err := hex.DecodeString(f[1])
	if err != nil || len(out) != 32 {
		return cacheResponse{}, false
	}
	size, err1 := strconv.ParseInt(f[2], 10, 64)
	nanos, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return cacheResponse{}, false
	}
	path := cacheFile(dir, out, "d")
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() != size {
		return cacheResponse{}, false
	}
	t := time.Unix(0, nanos)
	return cacheResponse{OutputID: out, Size: size, Time: &t, DiskPath: path}, true
}

// cachePut stores body as output out of action in dir, GOCACHE's way
// (the output first, then the entry, each written aside and renamed),
// and returns the output's path.
func cachePut(dir string, action, out, body []byte) (string, error) {
	if len(action) != 32 || len(out) != 32 {
		return "", errors.New("action and output IDs must be 32 bytes")
	}
	// The go command names an output by its SHA-256.
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], out) {
		return "", fmt.Errorf("output %x is not the body's SHA-256", out)
	}
	path := cacheFile(dir, out, "d")
	if err := writeAside(path, body); err != nil {
		return "", err
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", action, out, len(body), time.Now().UnixNano())
	if err := writeAside(cacheFile(dir, action, "a"), []byte(entry)); err != nil {
		return "", err
	}
	return path, nil
}

// writeAside writes data to a new file beside path and renames it there.
func writeAside(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
