package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// PermissionQuestion asks the user whether one tool call may run. It is
// data, not text: the permission decision (orchestrator/permit) fills it
// in and hands it to whichever asker serves the session, which draws it
// as it can (the terminal UI finds the running call by CallID and shows
// the file change Input makes; MCP elicitation and plain numbered lines
// show [PermissionQuestion.Form]). Nothing reads text back: the answer
// names one of Choices by its ID.
type PermissionQuestion struct {
	// Tool is the name of the tool called.
	Tool string
	// CallID is the call's id (the model's tool_use id or the MCP
	// request's); it tells apart two calls of one tool running at once.
	CallID string
	// Input is the call's arguments as JSON, after any hook rewrote them.
	Input json.RawMessage
	// Dir is the directory the call's relative paths resolve against.
	Dir string
	// Command is the command line of a Bash call; "" for other tools.
	Command string
	// URL is the address a call fetches or connects to; "" when none.
	URL string
	// Paths are the files and directories the call reads or writes,
	// absolute.
	Paths []PathAccess
	// Reason says why the user is asked, in sentences.
	Reason string
	// Rule is the permission rule (or rules, separated by ", ") that
	// would allow this call without asking, as settings write it
	// ("Edit(//home/me/notes.txt)"); "" when no rule can.
	Rule string
	// Choices are the answers offered, in the order shown.
	Choices []PermissionChoice
}

// The IDs of the choices a [PermissionQuestion] offers
// ([PermissionChoice.ID], [PermissionAnswer.Choice]): the permission
// decision's (orchestrator/permit) and the network question's
// (tools/shell), read by the askers that draw them.
const (
	// ChoiceAllowOnce runs the call.
	ChoiceAllowOnce = "allow_once"
	// ChoiceAllowSession runs it and allows for the session what the
	// question's rules name exactly (the file, the command, the host).
	ChoiceAllowSession = "allow_session"
	// ChoiceAllowSessionDir runs it and allows for the session the
	// directory of a file outside the working directories.
	ChoiceAllowSessionDir = "allow_session_dir"
	// ChoiceDeny refuses it.
	ChoiceDeny = "deny"
	// ChoiceDenyInstead refuses it with what the model should do instead.
	ChoiceDenyInstead = "deny_instead"
)

// PermissionChoice is one answer to a [PermissionQuestion].
type PermissionChoice struct {
	// ID is what the answer carries ([PermissionAnswer.Choice]).
	ID string
	// Label is what the user reads, such as "Yes" or "Yes, and don't ask
	// again this session for Edit(//home/me/notes.txt)".
	Label string
	// Feedback is set for a refusal after which the user says what the
	// model should do instead ([PermissionAnswer.Feedback]); an asker
	// that cannot take text leaves such a choice out.
	Feedback bool
}

// PermissionAnswer is the user's answer to a [PermissionQuestion].
type PermissionAnswer struct {
	// Choice is the ID of the choice picked; "" when the question was
	// dismissed, which refuses the call.
	Choice string
	// Feedback is what the user said the model should do instead, with a
	// Feedback choice.
	Feedback string
}

// PermissionAsker is an [Asker] that puts a [PermissionQuestion] to the
// user its own way; [AskPermission] falls back to [PermissionQuestion.Form]
// for an Asker that is not one.
type PermissionAsker interface {
	AskPermission(ctx context.Context, q *PermissionQuestion) (PermissionAnswer, error)
}

// ErrNobodyToAsk is wrapped by an asker's error when no person is there
// to answer (chat -p): the refusal tells the model so.
var ErrNobodyToAsk = errors.New("nobody is there to answer")

// AskPermission puts q to the user through a: its own way when it is a
// [PermissionAsker], otherwise as the form [PermissionQuestion.Form]
// describes.
func AskPermission(ctx context.Context, a Asker, q *PermissionQuestion) (PermissionAnswer, error) {
	if pa, ok := a.(PermissionAsker); ok {
		return pa.AskPermission(ctx, q)
	}
	msg, schema := q.Form()
	ans, err := a.Ask(ctx, msg, schema)
	if err != nil {
		return PermissionAnswer{}, err
	}
	return q.FormAnswer(ans), nil
}

// maxFormInput bounds the call's input quoted in a form's message.
const maxFormInput = 1000

// Form words q as an elicitation form: the message and a schema of one
// required property, "decision", whose values are the IDs of the choices
// (Feedback choices left out). [PermissionQuestion.FormAnswer] reads the
// answer. The message is data shown safely: first what the call is about
// (the host, the URL, the paths: [PermissionQuestion.Subject]), then why
// it is asked, then the command quoted ([QuotedCommand]) or the input,
// every part from the call made [Visible], so nothing in a command can
// read as the server's own words.
func (q *PermissionQuestion) Form() (message string, schema map[string]any) {
	var b strings.Builder
	fmt.Fprintf(&b, "Allow %s?\n\n", Visible(q.Tool))
	if subject := q.Subject(); len(subject) > 0 {
		s := strings.Join(subject, "\n")
		if len(s) > maxFormInput {
			s = strings.ToValidUTF8(s[:maxFormInput], "") + "…"
		}
		b.WriteString(s + "\n\n")
	}
	fmt.Fprintf(&b, "Why you are asked: %s", Visible(q.Reason))
	switch {
	case q.Command != "":
		b.WriteString("\n\nThe command, quoted:\n" + QuotedCommand(q.Command, maxFormInput))
	case q.URL == "" && (len(q.Paths) == 0 || len(q.Input) < 200):
		s := string(q.Input)
		if len(s) > maxFormInput {
			s = strings.ToValidUTF8(s[:maxFormInput], "") + "…"
		}
		b.WriteString("\n\nInput: " + Visible(s))
	}
	var oneOf []any
	for _, c := range q.Choices {
		if !c.Feedback {
			oneOf = append(oneOf, map[string]any{"const": c.ID, "title": Visible(c.Label)})
		}
	}
	return b.String(), map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "title": "Decision", "oneOf": oneOf},
		},
		"required": []any{"decision"},
	}
}

// FormAnswer reads the answer to [PermissionQuestion.Form]: the choice
// picked when it is one of q's, else a dismissal.
func (q *PermissionQuestion) FormAnswer(ans Answer) PermissionAnswer {
	if ans.Action != "accept" {
		return PermissionAnswer{}
	}
	id, _ := ans.Content["decision"].(string)
	for _, c := range q.Choices {
		if c.ID == id && !c.Feedback {
			return PermissionAnswer{Choice: id}
		}
	}
	return PermissionAnswer{}
}
