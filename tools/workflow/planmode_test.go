package workflow

import (
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

func TestPlanMode(t *testing.T) {
	t.Parallel()
	plan := map[string]any{"plan": "1. Edit main.go\n2. Run the tests"}
	cases := []struct {
		name      string
		start     permissions.Mode
		enter     bool // call EnterPlanMode first
		asker     *fakeAsker
		wantMode  permissions.Mode
		wantText  string
		wantError string
	}{
		{
			name: "approved_restores_previous_mode", start: permissions.ModeAcceptEdits, enter: true,
			asker:    &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"approve": true}}},
			wantMode: permissions.ModeAcceptEdits, wantText: "approved the plan. Plan mode is off (back to acceptEdits mode)",
		},
		{
			name: "approved_with_notes", start: permissions.ModeDefault, enter: true,
			asker:    &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"approve": true, "feedback": "keep it small"}}},
			wantMode: permissions.ModeDefault, wantText: "The user's notes: keep it small",
		},
		{
			name: "rejected_with_feedback_stays", start: permissions.ModeDefault, enter: true,
			asker:    &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"approve": false, "feedback": "use sqlite"}}},
			wantMode: permissions.ModePlan, wantText: "did not approve the plan; the session stays in plan mode. The user's feedback: use sqlite",
		},
		{
			name: "declined_stays", start: permissions.ModeDefault, enter: true,
			asker:    &fakeAsker{answer: tools.Answer{Action: "decline"}},
			wantMode: permissions.ModePlan, wantText: "did not approve",
		},
		{
			name: "cancelled_stays", start: permissions.ModeDefault, enter: true,
			asker:    &fakeAsker{answer: tools.Answer{Action: "cancel"}},
			wantMode: permissions.ModePlan, wantText: "dismissed the plan",
		},
		{
			name: "started_in_plan_approved_goes_to_default", start: permissions.ModePlan,
			asker:    &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"approve": true}}},
			wantMode: permissions.ModeDefault, wantText: "back to default mode",
		},
		{
			name: "no_elicitation_after_enter_leaves", start: permissions.ModeDefault, enter: true,
			wantMode: permissions.ModeDefault, wantText: "could not be asked to approve the plan",
		},
		{
			name: "no_elicitation_started_in_plan_refused", start: permissions.ModePlan,
			wantMode: permissions.ModePlan, wantError: "was started in plan mode, so it stays there",
		},
		{
			name: "not_in_plan_mode", start: permissions.ModeDefault,
			asker:    &fakeAsker{},
			wantMode: permissions.ModeDefault, wantError: "not in plan mode (it is in default mode)",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sess := newSession(t, c.start)
			uc := &tools.UseContext{Session: sess}
			if c.asker != nil {
				uc.Asker = c.asker
			}
			if c.enter {
				res, err := call(t, EnterPlanMode(), uc, map[string]any{})
				if err != nil || !strings.Contains(res.Text, "Plan mode is on") {
					t.Fatalf("EnterPlanMode: %v, %v", res, err)
				}
				if sess.Mode() != permissions.ModePlan {
					t.Fatalf("mode after EnterPlanMode = %s", sess.Mode())
				}
			}
			res, err := call(t, ExitPlanMode(), uc, plan)
			if c.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Errorf("err = %v, want one containing %q", err, c.wantError)
				}
			} else if text := resultText(res, err); !strings.Contains(text, c.wantText) {
				// A plan the user did not approve is an error result
				// that says why; the test checks its text alike.
				t.Errorf("text = %q, want it to contain %q", text, c.wantText)
			}
			if sess.Mode() != c.wantMode {
				t.Errorf("mode = %s, want %s", sess.Mode(), c.wantMode)
			}
			if c.asker != nil && len(c.asker.messages) == 1 && !strings.Contains(c.asker.messages[0], "1. Edit main.go") {
				t.Errorf("the user was not shown the plan: %q", c.asker.messages[0])
			}
		})
	}
}

func TestEnterPlanMode_twice_keeps_the_first_previous_mode(t *testing.T) {
	t.Parallel()
	sess := newSession(t, permissions.ModeBypassPermissions)
	uc := &tools.UseContext{Session: sess, Asker: &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"approve": true}}}}
	for range 2 {
		if _, err := call(t, EnterPlanMode(), uc, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := call(t, ExitPlanMode(), uc, map[string]any{"plan": "p"}); err != nil {
		t.Fatal(err)
	}
	if sess.Mode() != permissions.ModeBypassPermissions {
		t.Errorf("mode = %s, want bypassPermissions", sess.Mode())
	}
	// A second round starts from scratch.
	if _, err := call(t, EnterPlanMode(), uc, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, ExitPlanMode(), uc, map[string]any{"plan": "p"}); err != nil {
		t.Fatal(err)
	}
	if sess.Mode() != permissions.ModeBypassPermissions {
		t.Errorf("second round: mode = %s, want bypassPermissions", sess.Mode())
	}
}

func TestPlanModeTools_are_read_only(t *testing.T) {
	t.Parallel()
	for _, tool := range []*tools.Tool{EnterPlanMode(), ExitPlanMode(), AskUserQuestion()} {
		in, err := tool.Decode([]byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if !in.ReadOnly() {
			t.Errorf("%s is not read-only, so plan mode would refuse it", tool.Name)
		}
	}
}
