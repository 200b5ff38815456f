// Package attackcorpus reads the attack corpus (e2e/attacks/*.txtar, whose
// format attacks/README.md describes) and judges a run of a case: what the
// end-to-end tests run through agent-mcp's server and bench/escapes runs
// against other sandboxes too, with the same setup and the same judgement.
package attackcorpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Case is one parsed case.
type Case struct {
	Name string
	// Header fields.
	What, Report, Item string
	Holds              []string // the layers that must hold it
	Gap                string   // what `sandbox check` says where no layer of Holds is in use
	RootGap            bool     // with the server as root no layer holds it: Gap is said instead
	Open               string   // why the attack still works (the case then expects it to)
	Settings           string
	Args               []string // further serve flags
	Env                []string // further variables of the server's environment (NAME=value)
	TTY                bool     // the server runs with a controlling terminal
	Inherit            bool     // the server inherits a directory descriptor on outside
	// Plant are the files (area/path → content) made before the server
	// starts; a section whose content is "-> TARGET" plants a symbolic link.
	Plant [][2]string
	Steps []Step
	// Expect are the checks, one a line.
	Expect []string
}

// Step is one thing done through the server: a Bash command ("bash", or
// "bash background"), or a TaskOutput of the last background task
// ("taskoutput"); or what the user does next outside the sandbox ("user": a
// shell command run as the server's user in the working directory); or a
// wait until paths exist or are gone ("wait").
//
// A "taskinput" step types Text into the last background task with
// TaskInput, exactly (the section's Go escapes read); Until is its
// wait_for, from a section "taskinput until REGEX".
type Step struct {
	Kind, Text string
	Until      string
}

// Parse reads a case in txtar form: a header of "key: value" lines, then
// sections "-- NAME --".
func Parse(name string, data []byte) (*Case, error) {
	c := &Case{Name: name}
	var section string
	var body strings.Builder
	flush := func() error {
		if section == "" {
			return nil
		}
		text := body.String()
		body.Reset()
		switch {
		case section == "bash", section == "bash background", section == "taskoutput", section == "user", section == "wait":
			c.Steps = append(c.Steps, Step{Kind: section, Text: strings.TrimSpace(text)})
		case section == "taskinput" || strings.HasPrefix(section, "taskinput until "):
			// Typed exactly, with Go's escapes (\n is Enter, \x01 Ctrl-A).
			typed, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), `"`, `\"`) + `"`)
			if err != nil {
				return fmt.Errorf("taskinput %q: %v", text, err)
			}
			c.Steps = append(c.Steps, Step{Kind: "taskinput", Text: typed, Until: strings.TrimPrefix(section, "taskinput until ")})
			if c.Steps[len(c.Steps)-1].Until == section {
				c.Steps[len(c.Steps)-1].Until = ""
			}
		case section == "expect":
			for _, l := range strings.Split(text, "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					c.Expect = append(c.Expect, l)
				}
			}
		case strings.HasPrefix(section, "work/"), strings.HasPrefix(section, "home/"), strings.HasPrefix(section, "outside/"):
			c.Plant = append(c.Plant, [2]string{section, text})
		default:
			return fmt.Errorf("section %q: want bash, bash background, taskoutput, taskinput, user, wait, expect, or a file under work/, home/ or outside/", section)
		}
		return nil
	}
	inHeader := true
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			if err := flush(); err != nil {
				return nil, err
			}
			section, inHeader = strings.TrimSpace(trimmed[3:len(trimmed)-3]), false
			continue
		}
		if !inHeader {
			body.WriteString(line)
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok {
			return nil, fmt.Errorf("header line %q: want key: value", trimmed)
		}
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(key) {
		case "what":
			c.What = value
		case "report":
			c.Report = value
		case "item":
			c.Item = value
		case "holds":
			c.Holds = strings.Fields(strings.ReplaceAll(value, ",", " "))
		case "gap":
			c.Gap = value
		case "root":
			if value != "gap" {
				return nil, fmt.Errorf("root: %q: want gap", value)
			}
			c.RootGap = true
		case "open":
			c.Open = value
		case "settings":
			c.Settings = value
		case "args":
			c.Args = strings.Fields(value)
		case "env":
			for _, kv := range strings.Fields(value) {
				if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
					return nil, fmt.Errorf("env: %q: want NAME=value", kv)
				}
				c.Env = append(c.Env, kv)
			}
		case "tty":
			c.TTY = value == "yes"
		case "inherit":
			if value != "outside" {
				return nil, fmt.Errorf("inherit: %q: want outside", value)
			}
			c.Inherit = true
		default:
			return nil, fmt.Errorf("header key %q: want what, report, item, holds, gap, root, open, settings, args, env, tty or inherit", key)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	switch {
	case c.What == "":
		return nil, fmt.Errorf("no what: header (what the case re-enacts)")
	case len(c.Holds) == 0:
		return nil, fmt.Errorf("no holds: header (the layers that hold it: namespaces, landlock)")
	case len(c.Steps) == 0:
		return nil, fmt.Errorf("no bash, taskoutput, taskinput or user section")
	case len(c.Expect) == 0:
		return nil, fmt.Errorf("no expect section")
	}
	for _, l := range c.Holds {
		if l != "namespaces" && l != "landlock" {
			return nil, fmt.Errorf("holds: %q is not a layer (namespaces, landlock)", l)
		}
	}
	if c.Settings != "" && !json.Valid([]byte(c.Settings)) {
		return nil, fmt.Errorf("settings: not valid JSON: %s", c.Settings)
	}
	for _, s := range c.Steps {
		if s.Kind != "wait" {
			continue
		}
		for _, l := range strings.Split(s.Text, "\n") {
			if verb, _, _ := strings.Cut(strings.TrimSpace(l), " "); verb != "exists" && verb != "absent" {
				return nil, fmt.Errorf("wait %q: want exists AREA/PATH or absent AREA/PATH", l)
			}
		}
	}
	for _, e := range c.Expect {
		verb, _, _ := strings.Cut(e, " ")
		if !slices.Contains([]string{"unchanged", "absent", "no-output", "output"}, verb) {
			return nil, fmt.Errorf("expect %q: want unchanged, absent, no-output or output", e)
		}
	}
	return c, nil
}

// Load parses every *.txtar case in dir, in name order.
func Load(dir string) ([]*Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no attack cases (*.txtar) in %s", dir)
	}
	var cases []*Case
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := Parse(strings.TrimSuffix(filepath.Base(f), ".txtar"), b)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// HoldsUnder reports whether the case must hold with layers (a comma
// separated set) in use.
func (c *Case) HoldsUnder(layers string) bool {
	for _, l := range strings.Split(layers, ",") {
		if slices.Contains(c.Holds, l) {
			return true
		}
	}
	return false
}

// Snapshot is what a path held before the steps: its content, or absent.
type Snapshot struct {
	exists bool
	link   string
	data   []byte
}

// TakeSnapshot records what path holds now: a file's content, a link's
// target, a directory's listing, or that it is absent.
func TakeSnapshot(path string) Snapshot {
	st, err := os.Lstat(path)
	if err != nil {
		return Snapshot{}
	}
	if st.Mode()&os.ModeSymlink != 0 {
		l, _ := os.Readlink(path)
		return Snapshot{exists: true, link: l}
	}
	if st.IsDir() {
		entries, _ := os.ReadDir(path)
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		return Snapshot{exists: true, data: []byte("dir:" + strings.Join(names, ","))}
	}
	b, _ := os.ReadFile(path)
	return Snapshot{exists: true, data: b}
}

func (s Snapshot) String() string {
	switch {
	case !s.exists:
		return "absent"
	case s.link != "":
		return "a link to " + s.link
	}
	return fmt.Sprintf("%q", s.data)
}

// World maps a case's names onto one run's tree: AreaPath turns "work/x",
// "home/x", "outside/x" into a path, Expand substitutes @WORK@ and the
// other names in a case's text.
type World interface {
	AreaPath(p string) string
	Expand(s string) string
}

// Before snapshots the paths the case's "unchanged" checks name, to be
// taken before its first step.
func (c *Case) Before(w World) map[string]Snapshot {
	before := map[string]Snapshot{}
	for _, x := range c.Expect {
		if p, ok := strings.CutPrefix(x, "unchanged "); ok {
			before[p] = TakeSnapshot(w.AreaPath(p))
		}
	}
	return before
}

// Judge checks the case's expectations after its steps, given the
// snapshots Before took and what every step returned; it returns the
// failed checks (none: the case held).
func (c *Case) Judge(w World, before map[string]Snapshot, outputs []string) []string {
	var failed []string
	all := strings.Join(outputs, "\n")
	for _, x := range c.Expect {
		verb, arg, _ := strings.Cut(x, " ")
		arg = w.Expand(arg)
		switch verb {
		case "unchanged":
			if now := TakeSnapshot(w.AreaPath(arg)); now.String() != before[arg].String() {
				failed = append(failed, fmt.Sprintf("%s changed: was %s, now %s", arg, before[arg], now))
			}
		case "absent":
			if _, err := os.Lstat(w.AreaPath(arg)); err == nil {
				failed = append(failed, fmt.Sprintf("%s exists: %s", arg, TakeSnapshot(w.AreaPath(arg))))
			}
		case "no-output":
			if strings.Contains(all, arg) {
				failed = append(failed, fmt.Sprintf("the output holds %q", arg))
			}
		case "output":
			if !strings.Contains(all, arg) {
				failed = append(failed, fmt.Sprintf("the output lacks %q (did the command run?)", arg))
			}
		}
	}
	return failed
}

// WaitLimit bounds a wait step: what it waits for is due at once (a
// protected name moved aside as it appears), so running out of it is a
// failed check, not a slow machine. Some waits are also for the attack's
// own progress (a background flood of tens of thousands of files writing
// its last marker), which on a 2-core machine beside CPU burners, as CI
// runs the suite, took over 20 s: the bound leaves room for that.
const WaitLimit = 60 * time.Second

// WaitFor waits until every line of spec ("exists AREA/PATH", "absent
// AREA/PATH") holds, looking again as the state changes; it returns what
// did not come to hold within WaitLimit, or "".
func WaitFor(w World, spec string) string {
	deadline := time.Now().Add(WaitLimit)
	for {
		var pending []string
		for _, l := range strings.Split(strings.TrimSpace(spec), "\n") {
			verb, arg, _ := strings.Cut(strings.TrimSpace(l), " ")
			_, err := os.Lstat(w.AreaPath(arg))
			if (verb == "exists") != (err == nil) {
				pending = append(pending, l)
			}
		}
		if len(pending) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("waited %s in vain for: %s", WaitLimit, strings.Join(pending, "; "))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ListenUnix serves a unix socket at path, anyone may connect, that
// answers every connection with SOCKET-REACHED (a case's "=socket" file).
// Close the listener to stop it.
func ListenUnix(path string) (net.Listener, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o777); err != nil {
		l.Close()
		return nil, err
	}
	go answer(l, "SOCKET-REACHED\n")
	return l, nil
}

// ListenTCP starts the TCP listener @TCPHOST@:@TCPPORT@ name: outside every
// sandbox, on 127.0.0.2 where the machine has it (not the egress proxy's
// address), answering every connection with TCP-REACHED, what a direct
// connection must never reach. Its host and port.
func ListenTCP() (host, port string, err error) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return "", "", err
		}
	}
	go answer(l, "TCP-REACHED\n")
	host, port, _ = net.SplitHostPort(l.Addr().String())
	return host, port, nil
}

func answer(l net.Listener, text string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte(text))
		c.Close()
	}
}

// HostLoopback is what @LOOPPORT@ and @LOOPOTHER@ name: two ports of the
// host's own loopback, each listened on at 127.0.0.1 and (where the
// machine has it) ::1, outside every sandbox. A case names the first in
// sandbox.network.allowedDomains (localhost:@LOOPPORT@), where it answers
// HOSTPORT-NAMED; the second, which it never names, answers
// HOSTPORT-UNNAMED. Started once per process.
var HostLoopback = sync.OnceValues(func() (named, other string) {
	return listenLoopback("HOSTPORT-NAMED\n"), listenLoopback("HOSTPORT-UNNAMED\n")
})

// listenLoopback listens on 127.0.0.1 at a port the system picks, and on
// ::1 at the same port where it can, answering text; the port.
func listenLoopback(text string) string {
	for range 20 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		_, port, _ := net.SplitHostPort(l.Addr().String())
		l6, err := net.Listen("tcp6", "[::1]:"+port)
		if err != nil && !errors.Is(err, syscall.EADDRNOTAVAIL) && !errors.Is(err, syscall.EAFNOSUPPORT) {
			l.Close() // the port is taken on ::1: another try
			continue
		}
		go answer(l, text)
		if l6 != nil {
			go answer(l6, text)
		}
		return port
	}
	panic("no port free on both 127.0.0.1 and ::1")
}

// ExpandLoopback replaces @LOOPPORT@ and @LOOPOTHER@ in s (HostLoopback).
func ExpandLoopback(s string) string {
	if !strings.Contains(s, "@LOOP") {
		return s
	}
	named, other := HostLoopback()
	return strings.NewReplacer("@LOOPPORT@", named, "@LOOPOTHER@", other).Replace(s)
}
