package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	xterm "golang.org/x/term"
)

// ErrInterruptKey is returned by a read at a terminal prompt when the user
// pressed Ctrl-C (the terminal is in raw mode while a line is edited, so
// the key arrives as input rather than as SIGINT).
var ErrInterruptKey = errors.New("Ctrl-C at the prompt")

// lineResult is the outcome of one line read.
type lineResult struct {
	line string
	err  error
}

// keyWatch counts the Ctrl-C bytes read from the terminal, so that a
// ReadLine which x/term ends with io.EOF can be told apart: Ctrl-C
// (an interrupt) or Ctrl-D at an empty line (end of input).
type keyWatch struct {
	r     io.Reader
	mu    sync.Mutex
	ctrlC int
}

func (k *keyWatch) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if c := bytes.Count(p[:n], []byte{3}); c > 0 {
		k.mu.Lock()
		k.ctrlC += c
		k.mu.Unlock()
	}
	return n, err
}

// takeCtrlC consumes one counted Ctrl-C and reports whether there was one.
func (k *keyWatch) takeCtrlC() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ctrlC == 0 {
		return false
	}
	k.ctrlC--
	return true
}

// ReadLine shows prompt and reads one line; io.EOF at end of input (or
// Ctrl-D at an empty terminal prompt), ErrInterruptKey for Ctrl-C at a
// terminal prompt.
func (u *UI) ReadLine(prompt string) (string, error) {
	return u.ReadLineContext(context.Background(), prompt)
}

// ReadLineContext is ReadLine that gives up when ctx ends, returning
// ctx's error. The abandoned read stays pending: the next read takes its
// line, so no line the user types is lost.
func (u *UI) ReadLineContext(ctx context.Context, prompt string) (string, error) {
	if u.full != nil {
		return u.readFull(ctx, prompt, prompt != "> ", nil)
	}
	u.readMu.Lock()
	defer u.readMu.Unlock()
	if u.tty {
		// Raw mode for exactly as long as someone waits for the line:
		// outside a read, Ctrl-C is the terminal's SIGINT again.
		state, err := xterm.MakeRaw(u.fd)
		if err != nil {
			return "", err
		}
		defer func() { _ = xterm.Restore(u.fd, state) }()
		u.term.SetPrompt(prompt)
		if w, _, err := xterm.GetSize(u.fd); err == nil {
			_ = u.term.SetSize(w, 1000)
		}
	} else {
		u.mu.Lock()
		u.endLineLocked()
		fmt.Fprint(u.out, prompt)
		u.mu.Unlock()
	}
	ch := u.pending
	u.pending = nil
	if ch == nil {
		ch = make(chan lineResult, 1)
		go func() {
			line, err := u.readRaw()
			ch <- lineResult{line, err}
		}()
	}
	select {
	case r := <-ch:
		if u.tty && r.err != nil {
			u.resetTerm()
		}
		if !u.tty && !u.inTerminal() {
			fmt.Fprintln(u.out) // piped input is not echoed: end the prompt's line
		}
		return r.line, r.err
	case <-ctx.Done():
		u.pending = ch
		if !u.tty {
			fmt.Fprintln(u.out)
		}
		return "", ctx.Err()
	}
}

// readChoice reads the answer to a question that offers choices: picked
// with the arrow keys in the full UI, typed on a plain line otherwise.
func (u *UI) readChoice(ctx context.Context, prompt string, choices []string) (string, error) {
	if u.full != nil {
		return u.readFull(ctx, prompt, true, choices)
	}
	return u.ReadLineContext(ctx, prompt)
}

// readFull reads a line in the full UI: at the prompt, or a form's answer
// (offering choices to pick with the arrow keys). A read whose caller gave
// up is withdrawn; what was typed stays in the editor.
func (u *UI) readFull(ctx context.Context, prompt string, form bool, choices []string) (string, error) {
	return u.readFullMsg(ctx, readMsg{prompt: prompt, form: form, choices: choices})
}

// readFullMsg is readFull for the read r (its channel set here).
func (u *UI) readFullMsg(ctx context.Context, r readMsg) (string, error) {
	prompt, form, choices := r.prompt, r.form, r.choices
	u.readMu.Lock()
	defer u.readMu.Unlock()
	f := u.full
	if !form {
		f.outMu.Lock()
		f.flushLocked()
		f.outMu.Unlock()
	}
	ch := f.readMsg(r)
	select {
	case r := <-ch:
		if r.err == nil {
			// What was sent stays on screen, above the reply.
			echo := r.line
			if i, err := strconv.Atoi(strings.TrimSpace(r.line)); err == nil && i >= 1 && i <= len(choices) {
				echo = choices[i-1]
			}
			if form {
				f.println(styleDim.Render(prompt + echo))
			} else if strings.TrimSpace(r.line) != "" {
				f.println(styleDim.Render("> " + strings.ReplaceAll(echo, "\n", "\n  ")))
			}
		}
		return r.line, r.err
	case <-f.done:
		return "", io.EOF
	case <-ctx.Done():
		f.prog.Send(cancelReadMsg{ch: ch})
		select {
		case r := <-ch: // answered meanwhile
			if r.err == nil {
				return r.line, nil
			}
		default:
		}
		return "", ctx.Err()
	}
}

// resetTerm gives the UI a fresh line editor (keeping the history) after
// a read that ended without a line: x/term leaves the abandoned line and
// its cursor position behind on Ctrl-C, and would neither clear the line
// nor draw the next prompt.
func (u *UI) resetTerm() {
	fmt.Fprint(u.out, "\r\n")
	t := xterm.NewTerminal(struct {
		io.Reader
		io.Writer
	}{u.keys, u.out}, "")
	t.History = u.term.History
	u.term = t
}

// readRaw reads one line from the terminal or the plain input.
func (u *UI) readRaw() (string, error) {
	if u.tty {
		line, err := u.term.ReadLine()
		if errors.Is(err, io.EOF) && u.keys.takeCtrlC() {
			return "", ErrInterruptKey
		}
		return line, err
	}
	line, err := u.reader.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// inTerminal reports whether the input is a terminal (which echoes what
// is typed) even though the UI does not drive it.
func (u *UI) inTerminal() bool {
	f, ok := u.in.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// SetInterruptKey sets what a Ctrl-C typed while a form is being
// answered at the terminal does besides dismissing the form (raw mode: the
// key sends no SIGINT); the REPL cancels the turn with it. nil removes it.
//
// In the full UI a Ctrl-C typed between sending a line and the turn
// setting its handler is not lost: fn runs at once when set.
func (u *UI) SetInterruptKey(fn func()) {
	u.mu.Lock()
	u.onKey = fn
	early := fn != nil && u.keyEarly
	u.keyEarly = false
	u.mu.Unlock()
	if early {
		fn()
	}
}

// sentKeyInterrupt is the full UI's Ctrl-C (or Esc) while no read waits:
// the turn's handler runs, or, when the turn has not set it yet, the key
// is kept for it (see SetInterruptKey). It returns at once; the handler
// prints, which must not happen on the event loop.
func (u *UI) sentKeyInterrupt() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.onKey == nil {
		u.keyEarly = true
		return
	}
	go u.keyInterrupt()
}

// dropEarlyKey forgets a kept Ctrl-C: a new prompt is up, so no turn it
// was meant for is coming.
func (u *UI) dropEarlyKey() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.keyEarly = false
}

// keyInterrupt runs the Ctrl-C handler, before the form returns, so the
// turn is cancelled by the time the tool sees the dismissal.
func (u *UI) keyInterrupt() {
	u.mu.Lock()
	fn := u.onKey
	u.mu.Unlock()
	if fn != nil {
		fn()
	}
}
