package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// Environment variables serve reads its HTTP bearer tokens from.
const (
	tokenEnv        = "AGENT_MCP_TOKEN"
	clientTokensEnv = "AGENT_MCP_CLIENT_TOKENS"
)

// serveTokens are the HTTP bearer tokens serve was given: --token,
// --token-file or $AGENT_MCP_TOKEN, and --client-token or
// $AGENT_MCP_CLIENT_TOKENS (NAME=TOKEN each).
type serveTokens struct {
	token  string
	client []string
}

// takeServeTokens reads the tokens and then takes them out of what other
// processes can read of this one: the variables are removed from the
// environment (commands, hooks and upstream servers inherit it), and the
// values are overwritten in the memory /proc/PID/cmdline and
// /proc/PID/environ show, which every process of the machine can read
// (cmdline) or of the same user (environ). A token given on the command
// line is visible there until then, so it draws a warning on stderr.
func takeServeTokens(token, tokenFile string, client []string, stderr io.Writer) (serveTokens, error) {
	var t serveTokens
	// Copies: a flag's value and an environment variable's point into the
	// memory that is overwritten below.
	switch {
	case token != "" && tokenFile != "":
		return t, errors.New("--token and --token-file: give one of them")
	case tokenFile != "":
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return t, fmt.Errorf("--token-file: %w", err)
		}
		if t.token = strings.TrimSpace(string(b)); t.token == "" {
			return t, fmt.Errorf("--token-file %s: the file is empty, expected the token", tokenFile)
		}
	case token != "":
		t.token = strings.Clone(token)
		fmt.Fprintln(stderr, "agent-mcp: warning: --token on the command line can be read by every process on this machine until agent-mcp hides it at start; use --token-file or $"+tokenEnv)
	default:
		t.token = strings.Clone(os.Getenv(tokenEnv))
	}
	if len(client) > 0 {
		fmt.Fprintln(stderr, "agent-mcp: warning: --client-token on the command line can be read by every process on this machine until agent-mcp hides it at start; use $"+clientTokensEnv)
		for _, c := range client {
			t.client = append(t.client, strings.Clone(c))
		}
	} else {
		t.client = strings.FieldsFunc(strings.Clone(os.Getenv(clientTokensEnv)), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	}
	secrets := []string{t.token}
	hide := t.token != ""
	for _, c := range t.client {
		_, s, _ := strings.Cut(c, "=")
		secrets = append(secrets, s)
		hide = hide || s != ""
	}
	for _, v := range []string{tokenEnv, clientTokensEnv} {
		_, set := os.LookupEnv(v)
		hide = hide || set
		_ = os.Unsetenv(v)
	}
	if !hide {
		// Nothing to hide (the usual stdio start): /proc/self/mem is left
		// alone.
		return t, nil
	}
	if err := hideFromProc(secrets, []string{tokenEnv, clientTokensEnv}); err != nil {
		fmt.Fprintf(stderr, "agent-mcp: warning: the tokens stay visible in /proc/%d: %v\n", os.Getpid(), err)
	}
	return t, nil
}

// blankArgs overwrites, in the NUL-separated strings of region, each
// secret that is a whole string or follows its "=" (--token=SECRET,
// NAME=SECRET), and the value of each variable named in vars; it reports
// whether it changed anything.
func blankArgs(region []byte, secrets, vars []string) bool {
	changed := false
	start := 0
	for i := 0; i <= len(region); i++ {
		if i < len(region) && region[i] != 0 {
			continue
		}
		s := region[start:i]
		blank := func(from int) {
			for j := from; j < len(s); j++ {
				s[j] = '*'
			}
			changed = true
		}
		for _, v := range vars {
			if len(s) > len(v) && string(s[:len(v)+1]) == v+"=" {
				blank(len(v) + 1)
			}
		}
		for _, sec := range secrets {
			switch {
			case sec == "":
			case string(s) == sec:
				blank(0)
			case len(s) > len(sec) && string(s[len(s)-len(sec)-1:]) == "="+sec:
				blank(len(s) - len(sec))
			}
		}
		start = i + 1
	}
	return changed
}
