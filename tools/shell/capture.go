package shell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Output bounds.
const (
	// defaultFileLimit caps a task's output file; output past it is counted
	// and dropped, with a note at the end of the file.
	defaultFileLimit = 64 << 20
	// resultWindow is the most output a result carries in memory: beyond
	// it the result holds the head and the tail and points to the file.
	resultWindow = 1 << 20
	// tailKeep is how much of the latest output is kept in memory, so the
	// tail of a result is right even past the file cap.
	tailKeep = 64 << 10
	// lastLineMax bounds the progress message.
	lastLineMax = 200
)

// capture is where a task's output goes: its output file, up to a cap,
// and a small in-memory tail. It never holds more than tailKeep bytes of
// output in memory, however much the command prints.
//
// The file is made in the session's task directory without following a
// link (a command may have planted one under the name, where the state
// directory is inside a writable root), and the server reads the output
// back through the descriptor it wrote, never by name again.
type capture struct {
	path  string
	limit int64

	mu      sync.Mutex
	file    *os.File // open until release, for reading back
	writing bool     // file still takes output (until finish)
	written int64    // bytes in the file
	total   int64    // bytes the command printed
	tail    []byte
	noted   bool // the overflow note was written
	done    chan struct{}
	err     error         // first write error
	notify  chan struct{} // closed at the next change (see changed)
}

// newCapture makes the output file name in dir (the task directory, at
// path).
func newCapture(dir *os.Root, name, path string, limit int64) (*capture, error) {
	f, err := createNew(dir, name)
	if err != nil {
		return nil, fmt.Errorf("creating the task's output file: %w", err)
	}
	if limit <= 0 {
		limit = defaultFileLimit
	}
	return &capture{path: path, limit: limit, file: f, writing: true, done: make(chan struct{})}, nil
}

// createNew creates name in dir for reading and writing, never through a
// link: whatever is already there under the name (a planted link, a
// file) is removed first, and O_EXCL refuses a name made meanwhile.
func createNew(dir *os.Root, name string) (*os.File, error) {
	f, err := dir.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if rerr := dir.RemoveAll(name); rerr != nil {
			return nil, rerr
		}
		f, err = dir.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	}
	return f, err
}

// Write records p; it never fails, so the copy from the process goes on
// (a process whose output is dropped must not die of SIGPIPE).
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.limit - c.written; room > 0 && c.writing {
		chunk := p
		if int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		n, err := c.file.Write(chunk)
		c.written += int64(n)
		if err != nil && c.err == nil {
			c.err = err
		}
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > tailKeep {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-tailKeep:]...)
	}
	c.wakeLocked()
	return len(p), nil
}

// changed returns a channel closed at the output's next change: new bytes,
// or its end. Take it before looking at the output, then wait on it.
func (c *capture) changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.notify == nil {
		c.notify = make(chan struct{})
	}
	return c.notify
}

// wakeLocked wakes whoever waits on changed; c.mu is held.
func (c *capture) wakeLocked() {
	if c.notify != nil {
		close(c.notify)
		c.notify = nil
	}
}

// since returns the output printed after the first off bytes, as far as
// the in-memory tail still holds it (missed is true when older bytes of it
// are no longer held), and the offset to ask from next time.
func (c *capture) since(off int64) (out []byte, next int64, missed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.total - off
	if n <= 0 {
		return nil, c.total, false
	}
	if n > int64(len(c.tail)) {
		return append([]byte(nil), c.tail...), c.total, true
	}
	return append([]byte(nil), c.tail[int64(len(c.tail))-n:]...), c.total, false
}

// copyFrom copies r into the capture until r ends, then finishes the file.
// EIO (a pseudo-terminal whose other side closed) counts as the end.
func (c *capture) copyFrom(r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = c.Write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	c.finish()
}

// finish writes the overflow note and closes the file; later output is
// still counted and kept in the tail.
func (c *capture) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return
	default:
	}
	if c.total > c.written && !c.noted && c.writing {
		fmt.Fprintf(c.file, "\n[agent-mcp: the output file stops at %s; %s more output was dropped]\n",
			tools.FormatSize(c.limit), tools.FormatSize(c.total-c.written))
		c.noted = true
	}
	c.writing = false
	close(c.done)
	c.wakeLocked()
}

// release closes the output file's descriptor: the output can no longer
// be read back. The file itself stays.
func (c *capture) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing = false
	if c.file != nil {
		_ = c.file.Close()
		c.file = nil
	}
}

// fullText reads the whole file back through its descriptor, for a
// result persisted in full; nil once released.
func (c *capture) fullText() io.Reader {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == nil {
		return nil
	}
	st, err := c.file.Stat()
	if err != nil {
		return nil
	}
	return io.NewSectionReader(c.file, 0, st.Size())
}

// size returns how many bytes the command printed and how many are in the
// file.
func (c *capture) size() (total, written int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.written
}

// lastLine returns the latest non-empty line of output, bounded.
func (c *capture) lastLine() string {
	c.mu.Lock()
	tail := bytes.TrimRight(c.tail, " \t\r\n")
	if i := bytes.LastIndexAny(tail, "\r\n"); i >= 0 {
		tail = tail[i+1:]
	}
	line := string(tail)
	c.mu.Unlock()
	return truncateRunes(line, lastLineMax)
}

// text returns the output so far for a result: all of it when it fits the
// window, else its head and its tail around a note naming the file.
func (c *capture) text() (string, bool) {
	c.mu.Lock()
	total, written, path := c.total, c.written, c.path
	tail := append([]byte(nil), c.tail...)
	c.mu.Unlock()
	if total <= resultWindow && total == written {
		b, err := c.readRange(0, written)
		if err == nil {
			return string(b), false
		}
	}
	headLen := int64(resultWindow/2) - int64(len(tail))
	head, _ := c.readRange(0, min(headLen, written))
	omitted := total - int64(len(head)) - int64(len(tail))
	var b bytes.Buffer
	b.Write(head)
	if omitted > 0 {
		fmt.Fprintf(&b, "\n\n[... %s of output omitted here; the output file %s holds the first %s ...]\n\n",
			tools.FormatSize(omitted), path, tools.FormatSize(written))
	}
	b.Write(tail)
	return b.String(), true
}

// readRange reads bytes [off, off+n) of the output file (fewer if it is
// shorter), through the descriptor it was written with.
func (c *capture) readRange(off, n int64) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == nil {
		return nil, errors.New("the task's output file was released")
	}
	buf := make([]byte, n)
	m, err := c.file.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:m], nil
}

// truncateRunes cuts s to at most n characters, on a character boundary.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
