package tui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/internal/testbin"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/workflow"
)

// The form shapes the workflow tools and the permitter send (see
// tools/workflow/askuserquestion.go and planmode.go, orchestrator/permit).
var (
	singleChoice = map[string]any{"type": "object", "properties": map[string]any{
		"q1": map[string]any{"type": "string", "title": "Database", "description": "Which database?", "oneOf": []any{
			map[string]any{"const": "Postgres", "title": "Postgres — relational"},
			map[string]any{"const": "SQLite", "title": "SQLite — embedded"},
		}},
		"q1_other": map[string]any{"type": "string", "title": "Database: other answer", "description": "Type an answer of your own instead of choosing"},
	}}
	multiChoice = map[string]any{"type": "object", "properties": map[string]any{
		"q1": map[string]any{"type": "array", "title": "Extras", "description": "Which extras? (choose any)", "items": map[string]any{"anyOf": []any{
			map[string]any{"const": "Cache", "title": "Cache"},
			map[string]any{"const": "Queue", "title": "Queue — background jobs"},
			map[string]any{"const": "Search", "title": "Search"},
		}}},
		"q1_other": map[string]any{"type": "string", "title": "Extras: other answer"},
	}}
	planApproval = map[string]any{"type": "object", "properties": map[string]any{
		"approve":  map[string]any{"type": "boolean", "title": "Approve the plan", "description": "Leave plan mode", "default": true},
		"feedback": map[string]any{"type": "string", "title": "Feedback", "description": "Optional notes"},
	}, "required": []any{"approve"}}
	multiNoOther = map[string]any{"type": "object", "properties": map[string]any{
		"tags": map[string]any{"type": "array", "title": "Tags", "minItems": 1, "maxItems": 2,
			"items": map[string]any{"type": "string", "enum": []any{"red", "green", "blue"}}},
	}}
)

func TestAsk_forms(t *testing.T) {
	t.Parallel()
	twoQuestions := map[string]any{"type": "object", "properties": map[string]any{}}
	for k, v := range singleChoice["properties"].(map[string]any) {
		twoQuestions["properties"].(map[string]any)[k] = v
	}
	for k, v := range multiChoice["properties"].(map[string]any) {
		twoQuestions["properties"].(map[string]any)[strings.Replace(k, "q1", "q2", 1)] = v
	}
	for _, tc := range []struct {
		name, input string
		schema      map[string]any
		action      string
		content     map[string]any
		output      []string // the screen shows these
	}{
		{name: "single_choice_by_number", schema: singleChoice, input: "2\n", action: "accept",
			content: map[string]any{"q1": "SQLite"},
			output:  []string{"Database: Which database?", "1. Postgres — relational", "2. SQLite — embedded", "Or type an answer of your own", "Choose 1-2 or type an answer (Enter to skip): "}},
		{name: "single_choice_by_title", schema: singleChoice, input: "postgres — relational\n", action: "accept",
			content: map[string]any{"q1": "Postgres"}},
		{name: "single_choice_by_value", schema: singleChoice, input: "sqlite\n", action: "accept",
			content: map[string]any{"q1": "SQLite"}},
		{name: "single_choice_own_answer", schema: singleChoice, input: "DuckDB\n", action: "accept",
			content: map[string]any{"q1_other": "DuckDB"}},
		{name: "own_answer_is_not_a_prefix_match", schema: singleChoice, input: "no\n", action: "accept",
			content: map[string]any{"q1_other": "no"}},
		{name: "nothing_answered_declines", schema: singleChoice, input: "\n", action: "decline"},
		{name: "multi_choice_commas", schema: multiChoice, input: "3, 1\n", action: "accept",
			content: map[string]any{"q1": []any{"Search", "Cache"}},
			output:  []string{"Extras: Which extras? (choose any)", "2. Queue — background jobs", "Choose any of 1-3, separated by commas, or type an answer (Enter to skip): "}},
		{name: "multi_choice_spaces_and_repeats", schema: multiChoice, input: "1 2 1\n", action: "accept",
			content: map[string]any{"q1": []any{"Cache", "Queue"}}},
		{name: "multi_choice_titles_and_own_answer", schema: multiChoice, input: "cache, Webhooks\n", action: "accept",
			content: map[string]any{"q1": []any{"Cache"}, "q1_other": "Webhooks"}},
		{name: "multi_choice_own_answer_only", schema: multiChoice, input: "Webhooks\n", action: "accept",
			content: map[string]any{"q1_other": "Webhooks"}},
		{name: "multi_choice_bounds_and_unknown_retried", schema: multiNoOther, input: "purple\n1,2,3\n2\n", action: "accept",
			content: map[string]any{"tags": []any{"green"}},
			output:  []string{`"purple" is not one of the answers; try again`, "Tags takes at most 2"}},
		{name: "two_questions_in_order", schema: twoQuestions, input: "1\n2,3\n", action: "accept",
			content: map[string]any{"q1": "Postgres", "q2": []any{"Queue", "Search"}},
			output:  []string{"Database: Which database?", "Extras: Which extras?"}},
		{name: "second_question_skipped", schema: twoQuestions, input: "Oracle\n\n", action: "accept",
			content: map[string]any{"q1_other": "Oracle"}},
		{name: "boolean_default_on_empty", schema: planApproval, input: "\n\n", action: "accept",
			content: map[string]any{"approve": true},
			output:  []string{"Leave plan mode", "Approve the plan [Y/n]: ", "Feedback (optional): "}},
		{name: "boolean_no_with_text", schema: planApproval, input: "n\n use sqlite \n", action: "accept",
			content: map[string]any{"approve": false, "feedback": "use sqlite"}},
		{name: "boolean_wrong_answer_retried", schema: planApproval, input: "maybe\nyes\n\n", action: "accept",
			content: map[string]any{"approve": true}, output: []string{`"maybe" is not one of the answers (y or n); try again (empty for the default)`}},
		{name: "permission_no_is_the_refusal", schema: permissionForm(), input: "n\n", action: "accept",
			content: map[string]any{"decision": tools.ChoiceDeny}, output: []string{"1. Yes", "Choose 1-3: "}},
		{name: "permission_yes_is_the_first", schema: permissionForm(), input: "y\n", action: "accept",
			content: map[string]any{"decision": tools.ChoiceAllowOnce}},
		{name: "permission_ambiguous_prefix_retried", schema: permissionForm(), input: "ye\n2\n", action: "accept",
			content: map[string]any{"decision": tools.ChoiceAllowSession}, output: []string{`"ye" is not one of the answers; try again (empty to decline)`}},
		{name: "required_empty_declines", schema: permissionForm(), input: "\n", action: "decline"},
		{name: "slash_decline", schema: planApproval, input: "/decline\n", action: "decline"},
		{name: "slash_cancel_midway", schema: planApproval, input: "y\n/cancel\n", action: "cancel"},
		{name: "end_of_input_cancels", schema: singleChoice, input: "", action: "cancel"},
		{name: "enum_with_names_and_default", schema: map[string]any{"type": "object", "properties": map[string]any{
			"size": map[string]any{"type": "string", "title": "Size", "enum": []any{"s", "m", "l"}, "enumNames": []any{"Small", "Medium", "Large"}, "default": "m"},
		}}, input: "\n", action: "accept", content: map[string]any{"size": "m"}, output: []string{"2. Medium", "Choose 1-3 [2]: "}},
		{name: "text_default", schema: map[string]any{"type": "object", "properties": map[string]any{
			"name": map[string]any{"type": "string", "title": "Name", "default": "main"},
		}}, input: "\n", action: "accept", content: map[string]any{"name": "main"}, output: []string{"Name [main]: "}},
		{name: "text_bounds_and_format", schema: map[string]any{"type": "object", "properties": map[string]any{
			"email": map[string]any{"type": "string", "title": "Email", "format": "email", "maxLength": 20},
		}, "required": []any{"email"}}, input: "nope\nsomeone-with-a-long-name@example.com\na@example.com\n", action: "accept",
			content: map[string]any{"email": "a@example.com"},
			output:  []string{`"nope" is not an email address`, "Email must be at most 20 characters"}},
		{name: "integer_bounds", schema: map[string]any{"type": "object", "properties": map[string]any{
			"count": map[string]any{"type": "integer", "title": "Count", "minimum": 1, "maximum": 9},
		}}, input: "0\n2.5\n7\n", action: "accept", content: map[string]any{"count": 7},
			output: []string{"Count must be at least 1", `"2.5" is not a whole number`}},
		{name: "number", schema: map[string]any{"type": "object", "properties": map[string]any{
			"ratio": map[string]any{"type": "number", "title": "Ratio"},
		}}, input: "0.25\n", action: "accept", content: map[string]any{"ratio": 0.25}},
		{name: "list_of_texts", schema: map[string]any{"type": "object", "properties": map[string]any{
			"names": map[string]any{"type": "array", "title": "Names", "items": map[string]any{"type": "string"}},
		}}, input: "a, b ,,c\n", action: "accept", content: map[string]any{"names": []any{"a", "b", "c"}}},
		{name: "confirmation_yes", schema: map[string]any{"type": "object", "properties": map[string]any{}}, input: "\n", action: "accept",
			content: map[string]any{}, output: []string{"Continue [Y/n]: "}},
		{name: "confirmation_no", schema: map[string]any{"type": "object"}, input: "n\n", action: "decline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			ui := New(strings.NewReader(tc.input), &buf)
			ans, err := ui.Ask(context.Background(), "The assistant asks", tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Action != tc.action {
				t.Fatalf("action = %q, want %q\n%s", ans.Action, tc.action, buf.String())
			}
			if tc.action == "accept" {
				if !reflect.DeepEqual(ans.Content, tc.content) {
					t.Errorf("content = %#v, want %#v\n%s", ans.Content, tc.content, buf.String())
				}
				checkSchema(t, tc.schema, ans.Content)
			}
			for _, want := range tc.output {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, buf.String())
				}
			}
		})
	}
}

// checkSchema validates content against the form's schema, as an MCP
// client's elicitation answer must be.
func checkSchema(t *testing.T, schema, content map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(schema)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Validate the content as JSON decodes it (numbers as float64).
	raw, _ = json.Marshal(content)
	var inst map[string]any
	_ = json.Unmarshal(raw, &inst)
	if err := rs.Validate(inst); err != nil {
		t.Errorf("content %s does not satisfy the schema: %v", raw, err)
	}
}

// TestAsk_workflow_tools runs the real AskUserQuestion and ExitPlanMode
// tools with the terminal as their Asker, so the forms are exactly the
// ones they send.
func TestAsk_workflow_tools(t *testing.T) {
	t.Parallel()
	questions := map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "header": "Database", "options": []any{
			map[string]any{"label": "Postgres", "description": "relational"}, map[string]any{"label": "SQLite", "description": "embedded"}}},
		map[string]any{"question": "Which extras?", "header": "Extras", "multiSelect": true, "options": []any{
			map[string]any{"label": "Cache", "description": ""}, map[string]any{"label": "Queue", "description": ""}, map[string]any{"label": "Search", "description": ""}}},
	}}
	plan := map[string]any{"plan": "1. Add the cache\n2. Test it"}
	for _, tc := range []struct {
		name   string
		tool   *tools.Tool
		args   map[string]any
		input  string
		isErr  bool
		want   string
		mode   permissions.Mode // after the call, for plan mode
		output []string
	}{
		{name: "questions_answered", tool: workflow.AskUserQuestion(), args: questions, input: "2\n1,3\n",
			want:   `"Which database?"="SQLite", "Which extras?"="Cache, Search"`,
			output: []string{"The assistant has 2 questions for you", "1. Postgres — relational", "Choose any of 1-3"}},
		{name: "questions_own_answers", tool: workflow.AskUserQuestion(), args: questions, input: "DuckDB\n2, Webhooks\n",
			want: `"Which database?"="DuckDB", "Which extras?"="Queue, Webhooks"`},
		{name: "questions_declined", tool: workflow.AskUserQuestion(), args: questions, input: "\n\n", isErr: true,
			want: "the user declined to answer"},
		{name: "questions_cancelled", tool: workflow.AskUserQuestion(), args: questions, input: "/cancel\n", isErr: true,
			want: "dismissed the questions"},
		{name: "plan_approved_by_default", tool: workflow.ExitPlanMode(), args: plan, input: "\n\n",
			want: "The user approved the plan", mode: permissions.ModeDefault,
			output: []string{"approve this plan:\n\n1. Add the cache\n2. Test it", "Approve the plan [Y/n]: "}},
		{name: "plan_approved_with_notes", tool: workflow.ExitPlanMode(), args: plan, input: "y\nkeep it small\n",
			want: "The user's notes: keep it small", mode: permissions.ModeDefault},
		{name: "plan_rejected_with_feedback", tool: workflow.ExitPlanMode(), args: plan, input: "n\nuse redis\n", isErr: true,
			want: "did not approve the plan; the session stays in plan mode. The user's feedback: use redis", mode: permissions.ModePlan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, err := tools.NewSession(tools.SessionOptions{Cwd: t.TempDir(), StateRoot: t.TempDir(), Mode: permissions.ModePlan})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			var buf syncBuffer
			ui := New(strings.NewReader(tc.input), &buf)
			uc := &tools.UseContext{Session: sess, Asker: ui}
			raw, _ := json.Marshal(tc.args)
			in, err := tc.tool.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := in.Validate(context.Background(), uc); err != nil {
				t.Fatal(err)
			}
			res, err := in.Call(context.Background(), uc, func(tools.ProgressUpdate) {})
			text := ""
			if err != nil {
				text = err.Error()
			} else {
				text = res.Text
				if res.Modify != nil {
					res.Modify(sess)
				}
			}
			if gotErr := err != nil || res.IsError; gotErr != tc.isErr || !strings.Contains(text, tc.want) {
				t.Errorf("result (error %v) = %q, want error %v and %q\n%s", gotErr, text, tc.isErr, tc.want, buf.String())
			}
			if tc.mode != "" && sess.Mode() != tc.mode {
				t.Errorf("mode = %s, want %s", sess.Mode(), tc.mode)
			}
			for _, want := range tc.output {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, buf.String())
				}
			}
		})
	}
}

// permissionForm is the form a permission question is put as on plain
// lines (tools.PermissionQuestion.Form), with the permitter's choices.
func permissionForm() map[string]any {
	q := &tools.PermissionQuestion{Tool: "Bash", Command: "make", Reason: "No rule allows the command \"make\".",
		Choices: []tools.PermissionChoice{
			{ID: tools.ChoiceAllowOnce, Label: "Yes"},
			{ID: tools.ChoiceAllowSession, Label: "Yes, and don't ask again this session for Bash(make)"},
			{ID: tools.ChoiceDeny, Label: "No"},
			{ID: tools.ChoiceDenyInstead, Label: "No, and tell the model what to do instead", Feedback: true},
		}}
	_, schema := q.Form()
	return schema
}

// TestAsk_cancelled_question_loses_no_line: a question whose context ends
// leaves its read pending, and the next read gets the line typed after.
func TestAsk_cancelled_question_loses_no_line(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	var buf syncBuffer
	ui := New(pr, &buf)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var ans tools.Answer
	go func() {
		var err error
		ans, err = ui.Ask(ctx, "Allow Bash?", permissionForm())
		done <- err
	}()
	waitFor(t, &buf, "Choose 1-3: ")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || ans.Action != "cancel" {
		t.Fatalf("Ask = %+v, %v; want cancel and context.Canceled", ans, err)
	}
	go func() { _, _ = io.WriteString(pw, "next prompt\n") }()
	line, err := ui.ReadLine("> ")
	if err != nil || line != "next prompt" {
		t.Errorf("ReadLine = %q, %v; want the line typed after the cancelled question", line, err)
	}
}

// TestAsk_forms_one_at_a_time: two tools asking at once get whole forms,
// never each other's answers.
func TestAsk_forms_one_at_a_time(t *testing.T) {
	t.Parallel()
	form := map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "string", "title": "A"},
		"b": map[string]any{"type": "string", "title": "B"},
	}}
	var buf syncBuffer
	ui := New(strings.NewReader("x\nx\ny\ny\n"), &buf)
	var wg sync.WaitGroup
	answers := make([]tools.Answer, 2)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], _ = ui.Ask(context.Background(), "Form", form)
		}()
	}
	wg.Wait()
	var got []string
	for _, a := range answers {
		if a.Action != "accept" || a.Content["a"] != a.Content["b"] {
			t.Errorf("answer %+v mixes two forms' lines", a)
		}
		got = append(got, a.Content["a"].(string))
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("answers = %v", got)
	}
}

func TestNaturalCompare(t *testing.T) {
	t.Parallel()
	names := []string{"q10", "q2_other", "q1_other", "q2", "q1", "feedback", "approve"}
	slices.SortFunc(names, naturalCompare)
	want := []string{"approve", "feedback", "q1", "q1_other", "q2", "q2_other", "q10"}
	if !slices.Equal(names, want) {
		t.Errorf("order = %v, want %v", names, want)
	}
}

// waitFor waits until the output shows want (a hang fails the test
// rather than blocking the run).
func waitFor(t *testing.T, buf *syncBuffer, want string) {
	t.Helper()
	if err := testbin.Poll(t, func() bool { return strings.Contains(buf.String(), want) }); err != nil {
		t.Fatalf("output never showed %q (%v):\n%s", want, err, buf.String())
	}
}
