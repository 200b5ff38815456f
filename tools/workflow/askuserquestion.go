package workflow

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-mcp/agent-mcp/tools"
)

//go:embed askuserquestion.md
var askUserQuestionDescription string

// AskUserQuestion's limits.
const (
	askMaxQuestions = 4
	askMinOptions   = 2
	askMaxOptions   = 4
	askMaxHeader    = 12
)

// AskUserQuestionInput is AskUserQuestion's input.
type AskUserQuestionInput struct {
	Questions []Question `json:"questions" jsonschema:"The questions to ask (1 to 4)"`
}

// Question is one multiple-choice question.
type Question struct {
	Question    string           `json:"question" jsonschema:"The full question, ending with a question mark"`
	Header      string           `json:"header" jsonschema:"A very short label for the question (at most 12 characters), e.g. \"Auth method\""`
	Options     []QuestionOption `json:"options" jsonschema:"The choices (2 to 4); the user can always type another answer instead"`
	MultiSelect bool             `json:"multiSelect,omitempty" jsonschema:"Whether the user may pick several choices (default false)"`
}

// QuestionOption is one choice of a Question.
type QuestionOption struct {
	Label       string `json:"label" jsonschema:"The choice as shown (1 to 5 words)"`
	Description string `json:"description" jsonschema:"What choosing it means or implies"`
}

// AskUserQuestionOutput is AskUserQuestion's structured output.
type AskUserQuestionOutput struct {
	Questions []Question `json:"questions"`
	// Answers maps each question's text to the answer; several choices of
	// a multiSelect question are joined with ", ".
	Answers map[string]string `json:"answers"`
}

// AskUserQuestion returns the AskUserQuestion tool.
func AskUserQuestion() *tools.Tool {
	return tools.New(tools.Tool{
		Name:        "AskUserQuestion",
		Description: askUserQuestionDescription,
		SearchHint:  "ask the user multiple-choice questions",
		// Asking changes nothing; one question form at a time.
		ReadOnly:           true,
		Idempotent:         true,
		ActsOnConversation: true,
	}, tools.Handler[AskUserQuestionInput]{
		Schema: func(s *jsonschema.Schema) {
			qs := tools.Prop(s, "questions")
			qs.MinItems, qs.MaxItems = tools.Ptr(1), tools.Ptr(askMaxQuestions)
			q := qs.Items
			tools.Prop(q, "question").MinLength = tools.Ptr(1)
			h := tools.Prop(q, "header")
			h.MinLength, h.MaxLength = tools.Ptr(1), tools.Ptr(askMaxHeader)
			tools.Default(q, "multiSelect", false)
			opts := tools.Prop(q, "options")
			opts.MinItems, opts.MaxItems = tools.Ptr(askMinOptions), tools.Ptr(askMaxOptions)
			tools.Prop(opts.Items, "label").MinLength = tools.Ptr(1)
		},
		Validate: func(_ context.Context, in *AskUserQuestionInput, _ *tools.UseContext) error {
			return validateQuestions(in.Questions)
		},
		Call: func(ctx context.Context, in *AskUserQuestionInput, uc *tools.UseContext, _ tools.Progress) (*tools.Result, error) {
			if uc.Asker == nil {
				return nil, errors.New("AskUserQuestion cannot reach the user: this client does not support MCP elicitation. Ask the questions in your reply instead, or go on with your best judgement and say what you assumed")
			}
			message, schema := questionForm(in.Questions)
			ans, err := uc.Asker.Ask(ctx, message, schema)
			if err != nil {
				return nil, fmt.Errorf("AskUserQuestion could not ask the user: %w", err)
			}
			switch ans.Action {
			case "accept":
			case "decline":
				return nil, errors.New("the user declined to answer the questions. Go on with your best judgement and say what you assumed, or ask differently")
			default:
				return nil, errors.New("the user dismissed the questions without answering. Go on with your best judgement and say what you assumed, or ask again later")
			}
			answers := readAnswers(in.Questions, ans.Content)
			parts := make([]string, len(in.Questions))
			for i, q := range in.Questions {
				parts[i] = fmt.Sprintf("%q=%q", q.Question, answers[q.Question])
			}
			return &tools.Result{
				Output: AskUserQuestionOutput{Questions: in.Questions, Answers: answers},
				Text:   "The user answered your questions: " + strings.Join(parts, ", ") + ". Carry on with these answers in mind.",
			}, nil
		},
	})
}

// validateQuestions checks what the schema cannot: uniqueness and blank text.
func validateQuestions(qs []Question) error {
	seen := map[string]bool{}
	for i, q := range qs {
		if strings.TrimSpace(q.Question) == "" {
			return fmt.Errorf("questions[%d].question must be non-empty", i)
		}
		if seen[q.Question] {
			return fmt.Errorf("questions[%d].question %q is asked twice; each question must be different", i, q.Question)
		}
		seen[q.Question] = true
		if strings.TrimSpace(q.Header) == "" || utf8.RuneCountInString(q.Header) > askMaxHeader {
			return fmt.Errorf("questions[%d].header %q must be 1 to %d characters", i, q.Header, askMaxHeader)
		}
		if n := len(q.Options); n < askMinOptions || n > askMaxOptions {
			return fmt.Errorf("questions[%d].options has %d choices; give %d to %d", i, n, askMinOptions, askMaxOptions)
		}
		labels := map[string]bool{}
		for j, o := range q.Options {
			if strings.TrimSpace(o.Label) == "" {
				return fmt.Errorf("questions[%d].options[%d].label must be non-empty", i, j)
			}
			if labels[o.Label] {
				return fmt.Errorf("questions[%d].options[%d].label %q appears twice; labels must differ", i, j, o.Label)
			}
			labels[o.Label] = true
		}
	}
	return nil
}

// questionKey and otherKey name a question's fields in the elicitation form.
func questionKey(i int) string { return fmt.Sprintf("q%d", i+1) }
func otherKey(i int) string    { return fmt.Sprintf("q%d_other", i+1) }

// questionForm builds the elicitation: a message listing the questions and
// a flat form with, per question, a titled single- or multi-select enum and
// an optional free-text "other" answer.
func questionForm(qs []Question) (string, map[string]any) {
	var msg strings.Builder
	if len(qs) == 1 {
		msg.WriteString("The assistant has a question for you:\n")
	} else {
		fmt.Fprintf(&msg, "The assistant has %d questions for you:\n", len(qs))
	}
	props := map[string]any{}
	for i, q := range qs {
		fmt.Fprintf(&msg, "\n%d. [%s] %s\n", i+1, q.Header, q.Question)
		choices := make([]any, len(q.Options))
		for j, o := range q.Options {
			title := o.Label
			if o.Description != "" {
				title += " — " + o.Description
				fmt.Fprintf(&msg, "   - %s: %s\n", o.Label, o.Description)
			} else {
				fmt.Fprintf(&msg, "   - %s\n", o.Label)
			}
			choices[j] = map[string]any{"const": o.Label, "title": title}
		}
		if q.MultiSelect {
			props[questionKey(i)] = map[string]any{
				"type": "array", "title": q.Header, "description": q.Question + " (choose any)",
				"items": map[string]any{"anyOf": choices},
			}
		} else {
			props[questionKey(i)] = map[string]any{
				"type": "string", "title": q.Header, "description": q.Question,
				"oneOf": choices,
			}
		}
		props[otherKey(i)] = map[string]any{
			"type": "string", "title": q.Header + ": other answer",
			"description": "Type an answer of your own instead of choosing",
		}
	}
	return msg.String(), map[string]any{"type": "object", "properties": props}
}

// readAnswers turns the form's content into one answer per question.
func readAnswers(qs []Question, content map[string]any) map[string]string {
	answers := make(map[string]string, len(qs))
	for i, q := range qs {
		var picked []string
		switch v := content[questionKey(i)].(type) {
		case string:
			if v != "" {
				picked = append(picked, v)
			}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok && s != "" {
					picked = append(picked, s)
				}
			}
		case []string:
			picked = append(picked, v...)
		}
		if other, _ := content[otherKey(i)].(string); strings.TrimSpace(other) != "" {
			if q.MultiSelect {
				picked = append(picked, strings.TrimSpace(other))
			} else {
				picked = []string{strings.TrimSpace(other)}
			}
		}
		if len(picked) == 0 {
			answers[q.Question] = "(no answer)"
		} else {
			answers[q.Question] = strings.Join(picked, ", ")
		}
	}
	return answers
}
