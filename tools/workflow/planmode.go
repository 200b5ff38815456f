package workflow

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed enterplanmode.md
var enterPlanModeDescription string

//go:embed exitplanmode.md
var exitPlanModeDescription string

// planState remembers, per session, how plan mode was entered: by
// EnterPlanMode (the model's own choice, so leaving restores the mode it
// came from) or by the operator (the session started in plan mode).
type planState struct {
	mu sync.Mutex
	// entered is set while plan mode is on because of EnterPlanMode.
	entered bool
	// prev is the mode EnterPlanMode switched away from.
	prev permissions.Mode
}

type planKey struct{}

func sessionPlan(s *tools.Session) *planState {
	return s.Slot(planKey{}, func() any { return &planState{} }).(*planState)
}

// EnterPlanModeInput is EnterPlanMode's input: none.
type EnterPlanModeInput struct{}

// PlanModeOutput is the structured output of EnterPlanMode and ExitPlanMode.
type PlanModeOutput struct {
	// Mode is the session's permission mode after the call.
	Mode string `json:"mode"`
	// The plan is not echoed back: the caller wrote it.
	// Approved says whether the user approved the plan (ExitPlanMode).
	Approved bool `json:"approved,omitempty"`
	// Feedback is what the user said about the plan, if anything.
	Feedback string `json:"feedback,omitempty"`
}

// EnterPlanMode returns the EnterPlanMode tool: it switches the session to
// plan mode, where only read-only tools run, through a context modifier.
func EnterPlanMode() *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "EnterPlanMode",
		Description: enterPlanModeDescription,
		SearchHint:  "plan before changing anything",
		// Entering plan mode only takes abilities away.
		ReadOnly:           true,
		Idempotent:         true,
		ActsOnConversation: true,
	}, tools.Handler[EnterPlanModeInput]{
		Call: func(_ context.Context, _ *EnterPlanModeInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			if uc.Session.Mode() == permissions.ModePlan {
				return &tools.Result{
					Output: PlanModeOutput{Mode: string(permissions.ModePlan)},
					Text:   "The session is already in plan mode. Go on exploring and planning; call ExitPlanMode with the plan when it is ready.",
				}, nil
			}
			return &tools.Result{
				Output: PlanModeOutput{Mode: string(permissions.ModePlan)},
				Text: "Plan mode is on: only read-only tools run now, so nothing can be changed. " +
					"Explore the code, weigh the options, and write a concrete plan (the steps, the files involved, how to check the result). " +
					"Ask the user with AskUserQuestion when a choice is theirs. When the plan is ready, call ExitPlanMode with it so the user can approve it.",
				Modify: func(s *tools.Session) {
					st := sessionPlan(s)
					st.mu.Lock()
					defer st.mu.Unlock()
					if prev := s.Mode(); prev != permissions.ModePlan {
						st.entered, st.prev = true, prev
						s.SetMode(permissions.ModePlan)
					}
				},
			}, nil
		},
	})
}

// ExitPlanModeInput is ExitPlanMode's input.
type ExitPlanModeInput struct {
	Plan string `json:"plan" jsonschema:"The plan for the user to approve, in Markdown: the steps, the files involved, how the result will be checked"`
}

// ExitPlanMode returns the ExitPlanMode tool: it puts the plan to the user
// and, on approval, restores the mode the session had before plan mode.
func ExitPlanMode() *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "ExitPlanMode",
		Description: exitPlanModeDescription,
		SearchHint:  "present a plan for the user to approve",
		// Leaving plan mode must be callable in plan mode, and it changes no
		// files: the user's approval is the gate.
		ReadOnly:           true,
		Idempotent:         true,
		ActsOnConversation: true,
	}, tools.Handler[ExitPlanModeInput]{
		Schema: func(s *jsonschema.Schema) {
			tools.Prop(s, "plan").MinLength = tools.Ptr(1)
		},
		Validate: func(_ context.Context, in *ExitPlanModeInput, _ *tools.UseContext) error {
			if strings.TrimSpace(in.Plan) == "" {
				return errors.New("plan must be a non-empty description of what you intend to do")
			}
			return nil
		},
		Call: exitPlanMode,
	})
}

// planApprovalSchema is the elicitation form for a plan.
var planApprovalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{
			"type": "boolean", "title": "Approve the plan",
			"description": "Leave plan mode and let the assistant carry out the plan", "default": true,
		},
		"feedback": map[string]any{
			"type": "string", "title": "Feedback",
			"description": "Optional: what to change in the plan, or notes for carrying it out",
		},
	},
	"required": []any{"approve"},
}

func exitPlanMode(ctx context.Context, in *ExitPlanModeInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
	sess := uc.Session
	if mode := sess.Mode(); mode != permissions.ModePlan {
		return nil, fmt.Errorf("the session is not in plan mode (it is in %s mode), so there is nothing to leave; go ahead with the work", mode)
	}
	st := sessionPlan(sess)
	st.mu.Lock()
	entered, restore := st.entered, st.prev
	st.mu.Unlock()
	if !entered {
		// The session started in plan mode: leaving it is the user's call,
		// and it goes to the default mode.
		restore = permissions.ModeDefault
	}
	leave := func(s *tools.Session) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if s.Mode() == permissions.ModePlan {
			s.SetMode(restore)
		}
		st.entered, st.prev = false, ""
	}

	if uc.Asker == nil {
		if !entered {
			return nil, errors.New("the plan needs the user's approval, and this client cannot ask the user (it does not support MCP elicitation). " +
				"The session was started in plan mode, so it stays there: present the plan in your reply instead")
		}
		// Plan mode was the model's own choice; leaving it gives back only
		// the mode the session had, whose rules still apply to every call.
		return &tools.Result{
			Output: PlanModeOutput{Mode: string(restore), Approved: false},
			Text: fmt.Sprintf("Plan mode is off (back to %s mode). The user could not be asked to approve the plan (this client does not support MCP elicitation), "+
				"so present the plan in your reply and wait for the user's go-ahead before changing anything.", restore),
			Modify: leave,
		}, nil
	}

	ans, err := uc.Asker.Ask(ctx, "The assistant has finished planning and asks you to approve this plan:\n\n"+in.Plan, planApprovalSchema)
	if err != nil {
		return nil, fmt.Errorf("ExitPlanMode could not ask the user to approve the plan: %w", err)
	}
	feedback, _ := ans.Content["feedback"].(string)
	feedback = strings.TrimSpace(feedback)
	approve, ok := ans.Content["approve"].(bool)
	if !ok {
		approve = true // the form's default
	}
	if ans.Action == "accept" && approve {
		text := fmt.Sprintf("The user approved the plan. Plan mode is off (back to %s mode): start carrying it out, updating the todo list first if it helps.", restore)
		if feedback != "" {
			text += "\nThe user's notes: " + feedback
		}
		return &tools.Result{
			Output: PlanModeOutput{Mode: string(restore), Approved: true, Feedback: feedback},
			Text:   text,
			Modify: leave,
		}, nil
	}
	var msg string
	switch {
	case ans.Action == "accept" || ans.Action == "decline":
		msg = "The user did not approve the plan; the session stays in plan mode."
	default:
		msg = "The user dismissed the plan without approving it; the session stays in plan mode."
	}
	if feedback != "" {
		msg += " The user's feedback: " + feedback
	}
	msg += " Revise the plan (ask with AskUserQuestion if something is unclear) and call ExitPlanMode again."
	return &tools.Result{
		Output: PlanModeOutput{Mode: string(permissions.ModePlan), Feedback: feedback},
		Text:   msg,
		// Refused, like a denied permission: the model must not proceed.
		IsError: true,
	}, nil
}
