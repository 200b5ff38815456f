package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "", "path of the built agent-mcp binary")
	mb := flag.Int("mb", 512, "size of the large download in MiB")
	runs := flag.Int("runs", 5, "downloads per configuration")
	small := flag.Int("small", 30, "small requests (new connections) per configuration")
	rate := flag.Int("rate", 0, "the upstream's sending rate in MiB/s, as a network link would cap it (0: as fast as loopback goes)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "egressbench: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *mb, *runs, *small, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "egressbench:", err)
		os.Exit(1)
	}
}

type config struct {
	name, network, curlFlags string
	// layers is AGENT_MCP_SANDBOX_LAYERS for the server; empty means
	// namespaces,landlock.
	layers string
}

func run(bin string, mb, runs, small, rate int) error {
	ctx := context.Background()
	zeros := bytes.Repeat([]byte{0}, 1<<20)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/big" {
				_, _ = w.Write([]byte("ok"))
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(mb<<20))
			start := time.Now()
			for i := range mb {
				if rate > 0 {
					// Paced as a link of that rate would pace it.
					time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
				}
				if _, err := w.Write(zeros); err != nil {
					return
				}
			}
		}))
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// A plain relay, no sandbox and no proxy logic: io.Copy between two
	// TCP connections, which splices. Every byte then crosses the
	// loopback twice, as through any proxy: the floor for one.
	relay, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go relayTo(relay, ln.Addr().String())
	relayPort := strconv.Itoa(relay.Addr().(*net.TCPAddr).Port)
	dir, err := os.MkdirTemp("", "egressbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	configs := []config{
		{"direct (network true)", "true", "--resolve bench.test:" + port + ":127.0.0.1", ""},
		{"plain relay (no proxy)", "true", "--resolve bench.test:" + port + ":127.0.0.1 --connect-to bench.test:" + port + ":127.0.0.1:" + relayPort, ""},
		{"proxy, absolute-form", `{"allowedDomains":["bench.test","127.0.0.1"]}`, "", ""},
		{"proxy, CONNECT tunnel", `{"allowedDomains":["bench.test","127.0.0.1"]}`, "--proxytunnel", ""},
		// Landlock alone: every socket made and connected by the seccomp
		// supervisor.
		{"landlock, absolute-form", `{"allowedDomains":["bench.test","127.0.0.1"]}`, "", "landlock"},
		{"landlock, CONNECT tunnel", `{"allowedDomains":["bench.test","127.0.0.1"]}`, "--proxytunnel", "landlock"},
	}
	sessions := make([]*mcp.ClientSession, len(configs))
	for i, c := range configs {
		cmd := exec.Command(bin, "serve", "--cwd", dir, "--permission-mode", "bypassPermissions",
			"--settings", `{"sandbox":{"network":`+c.network+`}}`)
		layers := c.layers
		if layers == "" {
			layers = "namespaces,landlock"
		}
		cmd.Env = append(os.Environ(), "AGENT_MCP_SANDBOX_LAYERS="+layers, "AGENT_MCP_EGRESS_HOSTS=bench.test=127.0.0.1")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "egressbench", Version: "1"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	// curl prints one figure per transfer; a command runs n transfers so
	// that the sandbox's own start is not counted.
	curl := func(cs *mcp.ClientSession, c config, path, field string, n int) ([]float64, error) {
		script := fmt.Sprintf("for i in $(seq %d); do curl -sS -o /dev/null %s -w '%%{%s}\\n' http://bench.test:%s%s || exit 1; done",
			n, c.curlFlags, field, port, path)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": script, "timeout": 600000}})
		if err != nil {
			return nil, err
		}
		var text string
		for _, b := range res.Content {
			if t, ok := b.(*mcp.TextContent); ok {
				text += t.Text
			}
		}
		if res.IsError {
			return nil, fmt.Errorf("%s: %s", c.name, text)
		}
		var out []float64
		for _, f := range strings.Fields(text) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: curl printed %q", c.name, text)
			}
			out = append(out, v)
		}
		return out, nil
	}
	speed := make([][]float64, len(configs))
	ttfb := make([][]float64, len(configs))
	// Interleaved, so that load on the machine falls on every
	// configuration alike.
	for r := range runs {
		for i, c := range configs {
			v, err := curl(sessions[i], c, "/big", "speed_download", 1)
			if err != nil {
				return err
			}
			speed[i] = append(speed[i], v...)
			if r == 0 {
				if v, err = curl(sessions[i], c, "/small", "time_starttransfer", small); err != nil {
					return err
				}
				ttfb[i] = append(ttfb[i], v...)
			}
		}
	}
	fmt.Printf("download of %d MiB (median of %d) and time to first byte of a new connection (median of %d)\n", mb, runs, small)
	fmt.Printf("%-24s %12s %10s %12s %12s\n", "network", "MiB/s", "vs direct", "first byte", "added")
	var baseSpeed, baseTTFB float64
	for i, c := range configs {
		s, l := median(speed[i])/(1<<20), median(ttfb[i])*1000
		if i == 0 {
			baseSpeed, baseTTFB = s, l
		}
		fmt.Printf("%-24s %12.0f %9.0f%% %10.3fms %+10.3fms\n", c.name, s, 100*s/baseSpeed, l, l-baseTTFB)
	}
	return nil
}

// relayTo forwards each connection ln accepts to addr.
func relayTo(ln net.Listener, addr string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{})
			go func() {
				_, _ = io.Copy(up, c)
				_ = up.(*net.TCPConn).CloseWrite()
				close(done)
			}()
			_, _ = io.Copy(c, up)
			_ = c.(*net.TCPConn).CloseWrite()
			<-done
		}()
	}
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
