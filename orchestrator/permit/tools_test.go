package permit

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
	"github.com/agent-mcp/agent-mcp/tools/search"
)

// noSettingsPipeline runs the real file and search tools under the
// permitter `agent-mcp serve` builds when no settings, rule flags or
// default mode are given (permsetup.go): no rules, trusting the host.
func noSettingsPipeline(t *testing.T) *orchestrator.Pipeline {
	t.Helper()
	pool, err := orchestrator.AssemblePool([]*tools.Tool{
		fs.Read(), fs.Write(fs.Options{}), fs.Edit(fs.Options{}), fs.MultiEdit(fs.Options{}), fs.NotebookEdit(fs.Options{}), fs.LS(), search.Glob(), search.Grep(),
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &orchestrator.Pipeline{Pool: pool, Permit: New(Options{Rules: &permissions.RuleSet{}, TrustHost: true})}
}

// TestPipeline_fileToolsConfined runs file and search tool calls through
// the pipeline and checks which run, which are refused (no one to ask),
// that a refusal names the rule that would allow it, and that a refused
// call changed nothing.
func TestPipeline_fileToolsConfined(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		tool  string
		input string // %D is the working directory, %O the outside one
		runs  bool
		// want are texts the refusal must hold (%D, %O replaced).
		want []string
		// file is a file that must (runs) or must not (refused) exist
		// afterwards, or hold "s" still when it is secret.txt.
		file string
	}{
		{"write outside asks", "Write", `{"file_path": "%O/new.txt", "content": "x"}`, false,
			[]string{"needs confirmation", "outside the working directories", `"Edit(/%O/new.txt)"`}, "%O/new.txt"},
		{"write over an outside file asks", "Write", `{"file_path": "%O/secret.txt", "content": "x"}`, false,
			[]string{`"Edit(/%O/secret.txt)"`}, "%O/secret.txt"},
		{"write going up asks", "Write", `{"file_path": "../outside/new.txt", "content": "x"}`, false,
			[]string{`"Edit(/%O/new.txt)"`}, "%O/new.txt"},
		{"write through a link out asks", "Write", `{"file_path": "link-out/new.txt", "content": "x"}`, false,
			[]string{"as it resolves to %O/new.txt"}, "%O/new.txt"},
		{"write to a sibling with the same prefix asks", "Write", `{"file_path": "%D-evil/x", "content": "x"}`, false,
			[]string{"outside the working directories"}, "%D-evil/x"},
		{"write inside runs", "Write", `{"file_path": "%D/src/new.go", "content": "package x\n"}`, true, nil, "%D/src/new.go"},
		{"relative write inside runs", "Write", `{"file_path": "rel.txt", "content": "x"}`, true, nil, "%D/rel.txt"},
		{"write to .git/config asks", "Write", `{"file_path": "%D/.git/config", "content": "x"}`, false,
			[]string{"protected path (.git/)", `"Edit(/%D/.git/config)"`}, "%D/.git/config"},
		{"write to .mcp.json asks", "Write", `{"file_path": ".mcp.json", "content": "{}"}`, false,
			[]string{"protected path (.mcp.json)"}, "%D/.mcp.json"},
		{"write to .bashrc asks", "Write", `{"file_path": ".bashrc", "content": ""}`, false,
			[]string{"protected path (.bashrc)"}, "%D/.bashrc"},
		{"edit outside asks", "Edit", `{"file_path": "%O/secret.txt", "old_string": "s", "new_string": "t"}`, false,
			[]string{`"Edit(/%O/secret.txt)"`}, "%O/secret.txt"},
		{"multiedit outside asks", "MultiEdit", `{"file_path": "%O/secret.txt", "edits": [{"old_string": "s", "new_string": "t"}]}`, false,
			[]string{`"Edit(/%O/secret.txt)"`}, "%O/secret.txt"},
		{"notebook edit into .claude asks", "NotebookEdit", `{"notebook_path": ".claude/n.ipynb", "new_source": "x", "cell_id": "c1"}`, false,
			[]string{"protected path (.claude/)"}, "%D/.claude/n.ipynb"},
		{"ls outside asks", "LS", `{"path": "%O"}`, false, []string{`"Read(/%O/**)"`}, ""},
		{"ls inside runs", "LS", `{"path": "."}`, true, nil, ""},
		{"glob of /etc asks", "Glob", `{"pattern": "/etc/**"}`, false, []string{"Reading /etc", `"Read(//etc/**)"`}, ""},
		{"glob going up asks", "Glob", `{"pattern": "../outside/*"}`, false, []string{"Reading %O"}, ""},
		{"glob inside runs", "Glob", `{"pattern": "**/*.txt"}`, true, nil, ""},
		{"grep inside runs", "Grep", `{"pattern": "hello"}`, true, nil, ""},
		{"grep with an inside path runs", "Grep", `{"pattern": "hello", "path": "a.txt"}`, true, nil, ""},
		{"grep outside asks", "Grep", `{"pattern": "s", "path": "%O"}`, false, []string{"Reading %O"}, ""},
		{"grep through a link out asks", "Grep", `{"pattern": "s", "path": "link-out"}`, false, []string{"as it resolves to %O"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, permissions.ModeDefault)
			if err := os.WriteFile(f.dir+"/a.txt", []byte("hello\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.dir+"/.git/config", []byte("[core]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The session has read it: a write over a file never read is
			// refused before the permission decision (fs preflight).
			f.sess.RecordFile(f.dir+"/.git/config", tools.FileState{Fingerprint: sha256.Sum256([]byte("[core]\n")), Size: 7})
			sub := strings.NewReplacer("%D", f.dir, "%O", f.outside).Replace
			out := noSettingsPipeline(t).Run(context.Background(), &tools.UseContext{Session: f.sess},
				orchestrator.Call{ID: "1", Name: tt.tool, Input: json.RawMessage(sub(tt.input))}, nil)
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if tt.runs {
				if out.Decision.Behavior != permissions.Allow || out.Result.IsError {
					t.Fatalf("want the call to run; decision %+v, result %q", out.Decision, out.Result.Text)
				}
			} else {
				if out.Decision.Behavior != permissions.Ask || !out.Result.IsError {
					t.Fatalf("want the call asked about and refused; decision %+v, result %q", out.Decision, out.Result.Text)
				}
				for _, w := range tt.want {
					if !strings.Contains(out.Result.Text, sub(w)) {
						t.Errorf("refusal %q does not hold %q", out.Result.Text, sub(w))
					}
				}
				if !strings.Contains(out.Result.Text, "Nobody can be asked") {
					t.Errorf("refusal %q does not say nobody could be asked", out.Result.Text)
				}
			}
			if tt.file == "" {
				return
			}
			b, err := os.ReadFile(sub(tt.file))
			switch {
			case tt.runs && err != nil:
				t.Errorf("the call ran but %s was not written: %v", sub(tt.file), err)
			case !tt.runs && filepath.Base(tt.file) == "secret.txt" && string(b) != "s":
				t.Errorf("a refused call changed %s to %q", sub(tt.file), b)
			case !tt.runs && filepath.Base(tt.file) == "config" && string(b) != "[core]\n":
				t.Errorf("a refused call changed %s to %q", sub(tt.file), b)
			case !tt.runs && filepath.Base(tt.file) != "secret.txt" && filepath.Base(tt.file) != "config" && err == nil:
				t.Errorf("a refused call created %s", sub(tt.file))
			}
		})
	}
}

// TestPipeline_askedWriteOutsideRunsOnceAllowed shows the question is put
// when an asker exists, and an allow lets the write outside through.
func TestPipeline_askedWriteOutsideRunsOnceAllowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, permissions.ModeDefault)
	asker := &fakeAsker{answer: tools.Answer{Action: "accept", Content: map[string]any{"decision": tools.ChoiceAllowOnce}}}
	target := filepath.Join(f.outside, "new.txt")
	in, _ := json.Marshal(map[string]string{"file_path": target, "content": "made"})
	out := noSettingsPipeline(t).Run(context.Background(), &tools.UseContext{Session: f.sess, Asker: asker},
		orchestrator.Call{ID: "1", Name: "Write", Input: in}, nil)
	if out.Err != nil || out.Result.IsError {
		t.Fatalf("allowed write failed: %v %q", out.Err, out.Result.Text)
	}
	if asker.asked.Load() != 1 || !strings.Contains(asker.last, "Write: "+target) {
		t.Fatalf("asked %d times, question %q", asker.asked.Load(), asker.last)
	}
	if b, _ := os.ReadFile(target); string(b) != "made" {
		t.Fatalf("%s holds %q", target, b)
	}
}
