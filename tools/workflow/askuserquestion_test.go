package workflow

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
)

var twoQuestions = map[string]any{"questions": []any{
	map[string]any{"question": "Which database?", "header": "Database", "options": []any{
		map[string]any{"label": "Postgres", "description": "Relational"},
		map[string]any{"label": "SQLite", "description": "Embedded"},
	}},
	map[string]any{"question": "Which features?", "header": "Features", "multiSelect": true, "options": []any{
		map[string]any{"label": "Auth", "description": "Log in"},
		map[string]any{"label": "Search", "description": ""},
		map[string]any{"label": "Export", "description": "CSV"},
	}},
}}

func TestAskUserQuestion(t *testing.T) {
	t.Parallel()
	tool := AskUserQuestion()
	cases := []struct {
		name        string
		answer      tools.Answer
		wantText    string
		wantAnswers map[string]string
		wantErr     string
	}{
		{
			name:        "choices",
			answer:      tools.Answer{Action: "accept", Content: map[string]any{"q1": "SQLite", "q2": []any{"Auth", "Export"}}},
			wantText:    `The user answered your questions: "Which database?"="SQLite", "Which features?"="Auth, Export". Carry on with these answers in mind.`,
			wantAnswers: map[string]string{"Which database?": "SQLite", "Which features?": "Auth, Export"},
		},
		{
			name:        "other_answers",
			answer:      tools.Answer{Action: "accept", Content: map[string]any{"q1": "SQLite", "q1_other": " DuckDB ", "q2": []any{"Auth"}, "q2_other": "Billing"}},
			wantAnswers: map[string]string{"Which database?": "DuckDB", "Which features?": "Auth, Billing"},
		},
		{
			name:        "unanswered_question",
			answer:      tools.Answer{Action: "accept", Content: map[string]any{"q1": "Postgres"}},
			wantAnswers: map[string]string{"Which database?": "Postgres", "Which features?": "(no answer)"},
		},
		{name: "declined", answer: tools.Answer{Action: "decline"}, wantErr: "declined to answer"},
		{name: "cancelled", answer: tools.Answer{Action: "cancel"}, wantErr: "dismissed the questions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			asker := &fakeAsker{answer: c.answer}
			res, err := call(t, tool, &tools.UseContext{Session: newSession(t, ""), Asker: asker}, twoQuestions)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.wantText != "" && res.Text != c.wantText {
				t.Errorf("text = %s\nwant   %s", res.Text, c.wantText)
			}
			out := res.Output.(AskUserQuestionOutput)
			for q, a := range c.wantAnswers {
				if out.Answers[q] != a {
					t.Errorf("answer to %q = %q, want %q", q, out.Answers[q], a)
				}
			}
		})
	}
}

func TestAskUserQuestion_form(t *testing.T) {
	t.Parallel()
	asker := &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{}}}
	if _, err := call(t, AskUserQuestion(), &tools.UseContext{Session: newSession(t, ""), Asker: asker}, twoQuestions); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(asker.schemas[0])
	want := `{"properties":{` +
		`"q1":{"description":"Which database?","oneOf":[{"const":"Postgres","title":"Postgres — Relational"},{"const":"SQLite","title":"SQLite — Embedded"}],"title":"Database","type":"string"},` +
		`"q1_other":{"description":"Type an answer of your own instead of choosing","title":"Database: other answer","type":"string"},` +
		`"q2":{"description":"Which features? (choose any)","items":{"anyOf":[{"const":"Auth","title":"Auth — Log in"},{"const":"Search","title":"Search"},{"const":"Export","title":"Export — CSV"}]},"title":"Features","type":"array"},` +
		`"q2_other":{"description":"Type an answer of your own instead of choosing","title":"Features: other answer","type":"string"}},"type":"object"}`
	if string(got) != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
	msg := asker.messages[0]
	for _, w := range []string{"2 questions", "1. [Database] Which database?", "   - SQLite: Embedded", "   - Search\n"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q:\n%s", w, msg)
		}
	}
}

func TestAskUserQuestion_refusals(t *testing.T) {
	t.Parallel()
	tool := AskUserQuestion()
	q := func(question, header string, labels ...string) map[string]any {
		var opts []any
		for _, l := range labels {
			opts = append(opts, map[string]any{"label": l, "description": ""})
		}
		return map[string]any{"question": question, "header": header, "options": opts}
	}
	cases := []struct {
		name  string
		args  any
		asker tools.Asker
		want  string
	}{
		{"no_elicitation", twoQuestions, nil, "does not support MCP elicitation"},
		{"asker_fails", twoQuestions, &fakeAsker{err: errAskFailed}, "could not ask the user: transport closed"},
		{"duplicate_question", map[string]any{"questions": []any{q("A?", "h", "x", "y"), q("A?", "h2", "x", "y")}}, &fakeAsker{}, `questions[1].question "A?" is asked twice`},
		{"duplicate_label", map[string]any{"questions": []any{q("A?", "h", "x", "x")}}, &fakeAsker{}, `questions[0].options[1].label "x" appears twice`},
		{"long_header", map[string]any{"questions": []any{q("A?", "thirteen char", "x", "y")}}, &fakeAsker{}, "questions[0].header"},
		{"one_option", map[string]any{"questions": []any{q("A?", "h", "x")}}, &fakeAsker{}, `parameter "questions[0].options" must have at least 2 items, got 1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := call(t, tool, &tools.UseContext{Session: newSession(t, ""), Asker: c.asker}, c.args)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}
