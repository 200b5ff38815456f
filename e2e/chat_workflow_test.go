package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/internal/testmodel"
)

// Scenarios where the workflow tools run in the real chat binary against
// the scripted model server: the user's answers come from stdin, and the
// assertions are on what the model was sent.

// modelFlags points chat at srv in the given wire format.
func modelFlags(format string, srv *testmodel.Server) (env, args []string) {
	if format == "openai" {
		return []string{"OPENAI_API_KEY=test-key"}, []string{"--model", "openai/test-model", "--base-url", srv.URL + "/v1"}
	}
	return anthropicEnv(), []string{"--model", "anthropic/test-model", "--base-url", srv.URL}
}

// sent is a model request decoded the same way for both formats.
type sent struct {
	system string
	msgs   []map[string]any // without OpenAI's system message
	tools  []string
}

func decodeRequest(r testmodel.Request) sent {
	var s sent
	s.system = textOf(r.Body["system"])
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] == "system" {
			s.system += textOf(mm["content"])
			continue
		}
		s.msgs = append(s.msgs, mm)
	}
	tools, _ := r.Body["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		if f, ok := tm["function"].(map[string]any); ok {
			tm = f
		}
		if n, ok := tm["name"].(string); ok {
			s.tools = append(s.tools, n)
		}
	}
	return s
}

// textOf joins the text of a content value: a string, a block, or a list
// of blocks.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if t, ok := x["text"].(string); ok {
			return t
		}
		return textOf(x["content"])
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, textOf(e))
		}
		return strings.Join(parts, "")
	}
	return ""
}

// toolResult finds the result of call id in a request: its text, whether
// it is marked as an error (Anthropic only), and whether it was there.
func (s sent) toolResult(id string) (text string, isError, found bool) {
	for _, m := range s.msgs {
		if m["role"] == "tool" && m["tool_call_id"] == id {
			return textOf(m["content"]), false, true
		}
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if bm["type"] == "tool_result" && bm["tool_use_id"] == id {
				return textOf(bm["content"]), bm["is_error"] == true, true
			}
		}
	}
	return "", false, false
}

func (s sent) dump() string {
	b, _ := json.Marshal(s.msgs)
	return string(b)
}

func requireRequests(t *testing.T, srv *testmodel.Server, n int, out, errOut string) []sent {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != n {
		t.Fatalf("%d model requests, want %d\nstdout:\n%s\nstderr:\n%s", len(reqs), n, out, errOut)
	}
	var s []sent
	for _, r := range reqs {
		s = append(s, decodeRequest(r))
	}
	return s
}

func TestChatInteractive_AskUserQuestion_answered_at_the_prompt(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			c := newChatRun(t)
			srv := testmodel.NewServer(t,
				testmodel.Call(testmodel.ToolCall{ID: "ask1", Name: "AskUserQuestion", Input: `{"questions":[
					{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"relational"},{"label":"SQLite","description":"embedded"}]},
					{"question":"Which extras?","header":"Extras","multiSelect":true,"options":[{"label":"Cache","description":""},{"label":"Queue","description":""},{"label":"Search","description":""}]}]}`}),
				testmodel.Say("Going with SQLite, a cache and search."))
			env, args := modelFlags(format, srv)
			out, errOut, code := c.run(t, "set up the storage\n2\n1,3\n/exit\n", env, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			reqs := requireRequests(t, srv, 2, out, errOut)
			text, isErr, ok := reqs[1].toolResult("ask1")
			want := `The user answered your questions: "Which database?"="SQLite", "Which extras?"="Cache, Search".`
			if !ok || isErr || !strings.Contains(text, want) {
				t.Errorf("tool result (found %v, error %v) = %q, want %q\nmessages: %s", ok, isErr, text, want, reqs[1].dump())
			}
			for _, w := range []string{"Database: Which database?", "2. SQLite — embedded", "Choose any of 1-3", "Going with SQLite"} {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestChatInteractive_plan_mode_then_approved_write(t *testing.T) {
	t.Parallel()
	c := newChatRun(t)
	srv := testmodel.NewServer(t,
		testmodel.Call(testmodel.ToolCall{ID: "p1", Name: "EnterPlanMode", Input: `{}`}),
		testmodel.Call(testmodel.ToolCall{ID: "w1", Name: "Write", Input: `{"file_path":"plan.txt","content":"too early"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "x1", Name: "ExitPlanMode", Input: `{"plan":"1. Write plan.txt\n2. Check it"}`}),
		testmodel.Call(testmodel.ToolCall{ID: "w2", Name: "Write", Input: `{"file_path":"plan.txt","content":"planned"}`}),
		testmodel.Say("Written after the plan was approved."))
	env, args := modelFlags("anthropic", srv)
	// Write is allowed by a rule, so only plan mode stands in its way; the
	// answers are: approve (y), feedback.
	out, errOut, code := c.run(t, "write plan.txt, plan first\ny\nlooks good\n/exit\n", env,
		append(args, "--allowed-tools", "Write")...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	reqs := requireRequests(t, srv, 5, out, errOut)
	check := func(r sent, id string, wantErr bool, want ...string) {
		t.Helper()
		text, isErr, ok := r.toolResult(id)
		if !ok || isErr != wantErr {
			t.Errorf("%s: found %v, error %v (want %v): %q", id, ok, isErr, wantErr, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s result lacks %q: %q", id, w, text)
			}
		}
	}
	check(reqs[1], "p1", false, "Plan mode is on")
	check(reqs[2], "w1", true, "plan mode")
	check(reqs[3], "x1", false, "The user approved the plan", "back to default mode", "The user's notes: looks good")
	check(reqs[4], "w2", false)
	b, err := os.ReadFile(filepath.Join(c.dir, "plan.txt"))
	if err != nil || string(b) != "planned" {
		t.Errorf("plan.txt = %q, %v; want only the write after approval", b, err)
	}
	for _, w := range []string{"approve this plan:", "1. Write plan.txt", "Approve the plan [Y/n]: ", "Feedback (optional): "} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
}

func TestChatPrint_Agent_runs_a_sub_agent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, kind string
		system       string   // in the sub-agent's system prompt
		has, hasNot  []string // in the sub-agent's tools
	}{
		{format: "anthropic", kind: "Explore", system: "explores a code base",
			has: []string{"Read", "Grep", "Glob"}, hasNot: []string{"Write", "Edit", "Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode"}},
		{format: "openai", kind: "general-purpose", system: "working on one task for another agent",
			has: []string{"Read", "Write", "Bash"}, hasNot: []string{"Agent", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode"}},
	} {
		t.Run(tc.format+"_"+tc.kind, func(t *testing.T) {
			c := newChatRun(t)
			if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("the secret is 42\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			const subPrompt = "Read notes.txt and report the secret."
			srv := testmodel.NewServer(t,
				testmodel.Call(testmodel.ToolCall{ID: "a1", Name: "Agent",
					Input: `{"description":"Find the secret","prompt":"` + subPrompt + `","subagent_type":"` + tc.kind + `"}`}),
				testmodel.Call(testmodel.ToolCall{ID: "r1", Name: "Read", Input: `{"file_path":"notes.txt"}`}),
				testmodel.Say("The secret is 42."),
				testmodel.Say("The sub-agent found it: 42."))
			env, args := modelFlags(tc.format, srv)
			out, errOut, code := c.run(t, "", env, append([]string{"-p", "ask a sub-agent for the secret"}, args...)...)
			if code != 0 || out != "The sub-agent found it: 42.\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			reqs := requireRequests(t, srv, 4, out, errOut)
			parent, sub1, sub2, parent2 := reqs[0], reqs[1], reqs[2], reqs[3]

			if !slices.Contains(parent.tools, "Agent") {
				t.Errorf("the parent was not offered Agent: %v", parent.tools)
			}
			// The sub-agent's requests: its own system prompt, its own
			// conversation (the task, then its Read), only its tools.
			for i, s := range []sent{sub1, sub2} {
				if !strings.Contains(s.system, tc.system) {
					t.Errorf("sub-agent request %d system prompt = %q, want it to contain %q", i+1, s.system, tc.system)
				}
				if strings.Contains(s.dump(), "ask a sub-agent for the secret") {
					t.Errorf("sub-agent request %d carries the parent's conversation: %s", i+1, s.dump())
				}
				for _, n := range tc.has {
					if !slices.Contains(s.tools, n) {
						t.Errorf("sub-agent request %d lacks tool %s: %v", i+1, n, s.tools)
					}
				}
				for _, n := range tc.hasNot {
					if slices.Contains(s.tools, n) {
						t.Errorf("sub-agent request %d offers %s: %v", i+1, n, s.tools)
					}
				}
				for _, n := range s.tools {
					if !slices.Contains(parent.tools, n) {
						t.Errorf("sub-agent request %d offers %s, which the parent does not have", i+1, n)
					}
				}
			}
			if len(sub1.msgs) != 1 || sub1.msgs[0]["role"] != "user" || textOf(sub1.msgs[0]["content"]) != subPrompt {
				t.Errorf("the sub-agent's first request should hold only its task: %s", sub1.dump())
			}
			if len(sub2.msgs) != 3 {
				t.Errorf("the sub-agent's second request has %d messages, want task, Read call, Read result: %s", len(sub2.msgs), sub2.dump())
			}
			if text, isErr, ok := sub2.toolResult("r1"); !ok || isErr || !strings.Contains(text, "the secret is 42") {
				t.Errorf("the sub-agent's Read result (found %v, error %v) = %q", ok, isErr, text)
			}
			// The parent gets the sub-agent's final answer, and nothing of
			// its conversation.
			if text, isErr, ok := parent2.toolResult("a1"); !ok || isErr || text != "The secret is 42." {
				t.Errorf("the Agent result (found %v, error %v) = %q, want the sub-agent's answer", ok, isErr, text)
			}
			if _, _, ok := parent2.toolResult("r1"); ok || strings.Contains(parent2.dump(), "the secret is 42") {
				t.Errorf("the parent's conversation carries the sub-agent's Read: %s", parent2.dump())
			}
		})
	}
}
