package permit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// dataAsker is a tools.PermissionAsker: it keeps the questions and gives
// a fixed answer.
type dataAsker struct {
	answer tools.PermissionAnswer
	err    error
	asked  []*tools.PermissionQuestion
}

func (a *dataAsker) Ask(context.Context, string, map[string]any) (tools.Answer, error) {
	return tools.Answer{}, errors.New("a permission question must not come as a form to a PermissionAsker")
}

func (a *dataAsker) AskPermission(_ context.Context, q *tools.PermissionQuestion) (tools.PermissionAnswer, error) {
	a.asked = append(a.asked, q)
	return a.answer, a.err
}

func (f *fixture) decideCall(t *testing.T, p *Permitter, tool *tools.Tool, id, input string, asker tools.Asker) permissions.Decision {
	t.Helper()
	in, err := tool.Decode(json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	uc := &tools.UseContext{Session: f.sess, Asker: asker, CallID: id}
	return p.Decide(context.Background(), orchestrator.PermissionRequest{Tool: tool, Input: in, Raw: json.RawMessage(input), UC: uc})
}

// The question is handed over as data: the tool, the call's id, its
// input and directory, the command or paths, the reason and the choices,
// each "don't ask again" naming the rule it adds.
func TestQuestion_isData(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	p := New(Options{})
	a := &dataAsker{answer: tools.PermissionAnswer{Choice: tools.ChoiceDeny}}
	in := `{"command": "npm publish"}`
	if d := f.decideCall(t, p, bashTool, "call-7", in, a); d.Behavior != permissions.Deny {
		t.Fatalf("a refusal gave %+v", d)
	}
	if len(a.asked) != 1 {
		t.Fatalf("asked %d times", len(a.asked))
	}
	q := a.asked[0]
	if q.Tool != "Bash" || q.CallID != "call-7" || string(q.Input) != in || q.Command != "npm publish" || q.Dir != f.dir {
		t.Errorf("question = %+v", q)
	}
	if !strings.Contains(q.Reason, `"npm publish"`) || q.Rule != "Bash(npm publish)" {
		t.Errorf("reason %q, rule %q", q.Reason, q.Rule)
	}
	var ids []string
	for _, c := range q.Choices {
		ids = append(ids, c.ID)
	}
	if want := []string{tools.ChoiceAllowOnce, tools.ChoiceAllowSession, tools.ChoiceDeny, tools.ChoiceDenyInstead}; !slices.Equal(ids, want) {
		t.Errorf("choices %v, want %v", ids, want)
	}
	if !strings.Contains(q.Choices[1].Label, "Bash(npm publish)") {
		t.Errorf("the session choice %q does not name the rule it adds", q.Choices[1].Label)
	}
	// An answer that is none of the choices refuses.
	a2 := &dataAsker{answer: tools.PermissionAnswer{Choice: "allow_everything"}}
	if d := f.decideCall(t, p, bashTool, "call-8", in, a2); d.Behavior != permissions.Deny || !strings.Contains(d.Reason, "not one of the choices") {
		t.Errorf("an unknown answer gave %+v", d)
	}
	// What the user said instead goes back with the refusal.
	a3 := &dataAsker{answer: tools.PermissionAnswer{Choice: tools.ChoiceDenyInstead, Feedback: " use make release "}}
	if d := f.decideCall(t, p, bashTool, "call-9", in, a3); d.Behavior != permissions.Deny || !strings.HasSuffix(d.Reason, ": use make release") {
		t.Errorf("a refusal with feedback gave %+v", d)
	}
}

// "Don't ask again" for a file outside the working directories grants
// that file; the directory is a choice of its own.
func TestQuestion_dontAskAgainGrantsWhatItNames(t *testing.T) {
	t.Parallel()
	for _, choice := range []string{tools.ChoiceAllowSession, tools.ChoiceAllowSessionDir} {
		t.Run(choice, func(t *testing.T) {
			f := newFixture(t, permissions.ModeDefault)
			if err := os.WriteFile(f.outside+"/other.txt", []byte("o"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := New(Options{})
			a := &dataAsker{answer: tools.PermissionAnswer{Choice: choice}}
			read := func(name string) permissions.Decision {
				return f.decideCall(t, p, fs.Read(), "r", `{"file_path": "`+f.outside+`/`+name+`"}`, a)
			}
			if d := read("secret.txt"); d.Behavior != permissions.Allow {
				t.Fatalf("the answer %s gave %+v", choice, d)
			}
			q := a.asked[0]
			var labels []string
			for _, c := range q.Choices {
				labels = append(labels, c.Label)
			}
			all := strings.Join(labels, "\n")
			if !strings.Contains(all, "Read(/"+f.outside+"/secret.txt)") || !strings.Contains(all, "Read(/"+f.outside+"/**)") {
				t.Fatalf("the choices do not offer the file and the directory:\n%s", all)
			}
			a.answer = tools.PermissionAnswer{Choice: tools.ChoiceDeny}
			if d := read("secret.txt"); d.Behavior != permissions.Allow || len(a.asked) != 1 {
				t.Errorf("the same file was asked about again (%d) or refused: %+v", len(a.asked), d)
			}
			d := read("other.txt")
			if granted := d.Behavior == permissions.Allow; granted != (choice == tools.ChoiceAllowSessionDir) {
				t.Errorf("another file of the directory after %s: %+v", choice, d)
			}
		})
	}
}

// An asker with nobody behind it (chat -p) says so, and the refusal tells
// the model which rule would allow the call.
func TestQuestion_nobodyToAsk(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	p := New(Options{})
	a := &dataAsker{err: errors.Join(tools.ErrNobodyToAsk, errors.New("print mode"))}
	d := f.decideCall(t, p, bashTool, "c", `{"command": "npm publish"}`, a)
	if d.Behavior == permissions.Allow || !strings.Contains(d.Reason, "The user was not available to approve it") || d.Suggestion != "Bash(npm publish)" {
		t.Errorf("got %+v", d)
	}
}

// An Asker that is not a PermissionAsker gets the question as a form.
func TestQuestion_asAForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	p := New(Options{})
	// The choice that needs text is not offered in a form; answering it
	// anyway is a dismissal.
	a := &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"decision": tools.ChoiceDenyInstead}}}
	if d := f.decide(t, p, bashTool, `{"command": "npm publish"}`, a, permissions.Decision{}); d.Behavior != permissions.Deny || !strings.Contains(d.Reason, "declined") {
		t.Fatalf("got %+v", d)
	}
	if !strings.Contains(a.last, "Allow Bash?") || !strings.Contains(a.last, "The command, quoted:\n  │ npm publish") || !strings.Contains(a.last, "Why you are asked: ") {
		t.Errorf("form message %q", a.last)
	}
	a2 := &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"decision": tools.ChoiceAllowOnce}}}
	if d := f.decide(t, p, bashTool, `{"command": "npm publish"}`, a2, permissions.Decision{}); d.Behavior != permissions.Allow {
		t.Fatalf("allow once as a form: %+v", d)
	}
}
