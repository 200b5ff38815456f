package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
	"github.com/agent-mcp/agent-mcp/tools"
)

// Store keeps conversations as JSON-lines files in a directory, one file
// per conversation named <id>.jsonl. Each line is an entry: a "meta" line
// first, then "message" lines as the conversation grows, and "replace"
// lines holding the whole conversation after context management rewrote
// it.
type Store struct {
	dir string
}

// DefaultStateDir is agent-mcp's per-user state directory:
// $XDG_STATE_HOME/agent-mcp, else ~/.local/state/agent-mcp.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agent-mcp"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: %w (set XDG_STATE_HOME)", err)
	}
	return filepath.Join(home, ".local", "state", "agent-mcp"), nil
}

// OpenStore uses dir/conversations, creating it.
func OpenStore(dir string) (*Store, error) {
	d := filepath.Join(dir, "conversations")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	return &Store{dir: d}, nil
}

type entry struct {
	Type     string        `json:"type"` // meta, message, replace
	Time     time.Time     `json:"time"`
	ID       string        `json:"id,omitempty"`
	Cwd      string        `json:"cwd,omitempty"`
	Model    string        `json:"model,omitempty"`
	Message  *llm.Message  `json:"message,omitempty"`
	Messages []llm.Message `json:"messages,omitempty"`
}

// Conversation is one saved conversation, open for appending.
type Conversation struct {
	ID, Cwd, Model string
	path           string
	mu             sync.Mutex
}

// Create starts a new conversation file.
func (s *Store) Create(cwd, model string) (*Conversation, error) {
	id := time.Now().UTC().Format("20060102-150405") + "-" + tools.RandomID()[:8]
	c := &Conversation{ID: id, Cwd: cwd, Model: model, path: filepath.Join(s.dir, id+".jsonl")}
	if err := c.write(entry{Type: "meta", ID: id, Cwd: cwd, Model: model}); err != nil {
		return nil, err
	}
	return c, nil
}

// Open loads conversation id and returns it, open for appending, with its
// messages.
func (s *Store) Open(id string) (*Conversation, []llm.Message, error) {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return nil, nil, fmt.Errorf("conversation id %q is not valid", id)
	}
	path := filepath.Join(s.dir, id+".jsonl")
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("no conversation %q in %s", id, s.dir)
		}
		return nil, nil, err
	}
	defer f.Close()
	c := &Conversation{ID: id, path: path}
	var msgs []llm.Message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		switch e.Type {
		case "meta":
			c.Cwd, c.Model = e.Cwd, e.Model
		case "message":
			if e.Message != nil {
				msgs = append(msgs, *e.Message)
			}
		case "replace":
			msgs = append([]llm.Message(nil), e.Messages...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return c, dropDangling(msgs), nil
}

// dropDangling removes a trailing assistant message whose tool calls have
// no results (the process ended while they ran), so the conversation can
// continue.
func dropDangling(msgs []llm.Message) []llm.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.Assistant && len(msgs[n-1].ToolUses()) > 0 {
		return msgs[:n-1]
	}
	return msgs
}

// Latest returns the id of the most recently updated conversation started
// in cwd.
func (s *Store) Latest(cwd string) (string, error) {
	saved, err := s.byRecency()
	if err != nil {
		return "", err
	}
	for _, c := range saved {
		// An empty conversation (/clear with nothing said since) is skipped.
		if s.startedIn(c.ID, cwd) {
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("no saved conversation for %s", cwd)
}

// byRecency lists the saved conversations (ID and Modified only), the most
// recently updated first; of two updated at once, the greater id first.
func (s *Store) byRecency() ([]Summary, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Summary{ID: id, Modified: info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Modified.Equal(out[j].Modified) {
			return out[i].Modified.After(out[j].Modified)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// startedIn reports whether conversation id was started in cwd and holds
// messages.
func (s *Store) startedIn(id, cwd string) bool {
	path := filepath.Join(s.dir, id+".jsonl")
	return readMeta(path).Cwd == cwd && hasMessages(path)
}

// hasMessages reports whether the conversation file holds more than its
// meta line.
func hasMessages(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	r := bufio.NewReader(f)
	if _, err := r.ReadSlice('\n'); err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		return false
	}
	_, err = r.ReadByte()
	return err == nil
}

// Summary describes a saved conversation for a picker.
type Summary struct {
	ID       string
	Modified time.Time
	Model    string
	// Messages counts the conversation's messages; Prompt is its first
	// prompt, cut to one line.
	Messages int
	Prompt   string
}

// List describes the non-empty conversations started in cwd, the most
// recently updated first, at most max of them (0: all).
func (s *Store) List(cwd string, max int) ([]Summary, error) {
	saved, err := s.byRecency()
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, c := range saved {
		if s.startedIn(c.ID, cwd) {
			out = append(out, c)
		}
	}
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	for i := range out {
		c, msgs, err := s.Open(out[i].ID)
		if err != nil {
			continue
		}
		out[i].Model, out[i].Messages = c.Model, len(msgs)
		for _, m := range msgs {
			if isPrompt(m) {
				if t := strings.Join(strings.Fields(m.TextOf()), " "); t != "" {
					out[i].Prompt = truncate(t, 60)
					break
				}
			}
		}
	}
	return out, nil
}

func readMeta(path string) entry {
	f, err := os.Open(path)
	if err != nil {
		return entry{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var e entry
	if sc.Scan() {
		_ = json.Unmarshal(sc.Bytes(), &e)
	}
	return e
}

// Append saves messages.
func (c *Conversation) Append(msgs ...llm.Message) error {
	for i := range msgs {
		if err := c.write(entry{Type: "message", Message: &msgs[i]}); err != nil {
			return err
		}
	}
	return nil
}

// Replace saves the whole conversation after it was rewritten.
func (c *Conversation) Replace(msgs []llm.Message) error {
	return c.write(entry{Type: "replace", Messages: msgs})
}

// Path is the conversation's file.
func (c *Conversation) Path() string { return c.path }

func (c *Conversation) write(e entry) error {
	e.Time = time.Now().UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
