package shell

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// waitWindow bounds the output a readiness pattern is matched against: the
// latest bytes printed since the wait began.
const waitWindow = 64 << 10

// portPoll is how often a `port:N` condition looks at the task's sockets.
const portPoll = 100 * time.Millisecond

// condition is what a wait on a task's output looks for: a pattern in the
// output printed since the wait began, or a TCP port that starts
// listening. The zero condition is met by nothing.
type condition struct {
	pattern *regexp.Regexp
	port    int
	text    string // as the model wrote it, for the result
}

// parseCondition reads a wait_for value: `port:N` for a TCP port, anything
// else a regular expression (RE2). field names the parameter in errors.
func parseCondition(field, s string) (condition, error) {
	if rest, ok := strings.CutPrefix(s, "port:"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 1 || n > 65535 {
			return condition{}, fmt.Errorf("%s %q names no port: write port:N with N from 1 to 65535, or give a regular expression", field, s)
		}
		return condition{port: n, text: s}, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return condition{}, fmt.Errorf("%s is not a valid regular expression (RE2 syntax) or port:N: %v", field, err)
	}
	return condition{pattern: re, text: s}, nil
}

// describe words the condition for a result: "its output matched `x`" or
// "port 8080 is listening".
func (c condition) describe() string {
	if c.port > 0 {
		return fmt.Sprintf("port %d is listening", c.port)
	}
	return fmt.Sprintf("its output matched `%s`", c.text)
}

// describeNot words the condition not holding: "its output has not
// matched `x`" or "port 8080 is not listening".
func (c condition) describeNot() string {
	if c.port > 0 {
		return fmt.Sprintf("port %d is not listening", c.port)
	}
	return fmt.Sprintf("its output has not matched `%s`", c.text)
}

// awaitOutcome is how a wait on a task ended.
type awaitOutcome int

const (
	// awaitMet: the condition held.
	awaitMet awaitOutcome = iota
	// awaitQuiet: output came and then stopped for the quiet period.
	awaitQuiet
	// awaitExited: the task's shell ended first.
	awaitExited
	// awaitTimeout: the time ran out first.
	awaitTimeout
)

// await watches the output t prints after its first from bytes until cond
// holds, the task's shell ends, the output has been quiet for quiet
// (0: never; the quiet period starts with the first new output), or
// timeout passes. It returns early with ctx's cause when ctx ends.
func (t *Task) await(ctx context.Context, cond condition, from int64, timeout, quiet time.Duration) (awaitOutcome, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var quietC <-chan time.Time
	var quietTimer *time.Timer
	if quiet > 0 {
		quietTimer = time.NewTimer(quiet)
		quietTimer.Stop()
		defer quietTimer.Stop()
	}
	var portTick <-chan time.Time
	if cond.port > 0 {
		tick := time.NewTicker(portPoll)
		defer tick.Stop()
		portTick = tick.C
	}
	var window []byte
	seen := from
	check := func() bool {
		data, next, _ := t.out.since(seen)
		seen = next
		if len(data) > 0 {
			window = append(window, data...)
			if len(window) > waitWindow {
				window = append(window[:0], window[len(window)-waitWindow:]...)
			}
			if quietTimer != nil {
				quietTimer.Reset(quiet)
				quietC = quietTimer.C
			}
		}
		if cond.pattern != nil && len(data) > 0 && cond.pattern.Match(stripEscapes(window)) {
			return true
		}
		return cond.port > 0 && t.listening(cond.port)
	}
	for {
		changed := t.out.changed()
		if check() {
			return awaitMet, nil
		}
		select {
		case <-changed:
		case <-portTick:
		case <-t.Done():
			if check() {
				return awaitMet, nil
			}
			return awaitExited, nil
		case <-quietC:
			return awaitQuiet, nil
		case <-deadline.C:
			return awaitTimeout, nil
		case <-ctx.Done():
			return awaitTimeout, context.Cause(ctx)
		}
	}
}

// escapes are terminal control sequences (CSI, OSC, two-character ESC
// sequences) and carriage returns, which a pattern should not have to
// spell out: a REPL colours its prompt, a progress bar redraws its line.
var escapes = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|\x1b[@-Z\\\\-_]|\r")
})

// stripEscapes returns b without terminal control sequences.
func stripEscapes(b []byte) []byte {
	if !strings.ContainsAny(string(b), "\x1b\r") {
		return b
	}
	return escapes().ReplaceAll(b, nil)
}

// listening reports whether a TCP socket of the task's network namespace
// listens on port, by any address: the task's first process (the shell,
// or the sandbox's init, which is inside the sandbox's network namespace
// if it has one) shows its namespace's sockets in /proc/PID/net.
// Without /proc (not Linux) a connection to the port on loopback tells.
func (t *Task) listening(port int) bool {
	procErr := false
	for _, f := range []string{"tcp", "tcp6"} {
		ok, err := listensIn(fmt.Sprintf("/proc/%d/net/%s", t.pgid, f), port)
		if err == nil && ok {
			return true
		}
		procErr = procErr || err != nil
	}
	if !procErr {
		return false
	}
	for _, host := range []string{"127.0.0.1", "::1"} {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), portPoll)
		if err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// tcpListen is the state column of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listensIn reports whether the socket table at path (the format of
// /proc/net/tcp: "sl local_address rem_address st ...", addresses as
// HEXADDR:HEXPORT) has a listening socket on port.
func listensIn(path string, port int) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		if strings.HasSuffix(fields[1], want) && fields[3] == tcpListen {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	return false, nil
}
