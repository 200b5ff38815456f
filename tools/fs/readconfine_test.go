package fs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/orchestrator/permit"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// secret is what the files outside the working directory hold; no read
// led out by a swapped link may return it.
const secret = "OUTSIDE-SECRET"

// secretDir makes a directory outside the harness's working directory
// holding f.txt, secret.txt, d/f.txt and d/secret.txt, each holding
// secret.
func secretDir(t *testing.T) string {
	t.Helper()
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"f.txt", "secret.txt", "d/f.txt", "d/secret.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(out, p)), 0o755)
		if err := os.WriteFile(filepath.Join(out, p), []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checked makes h's pipeline decide permissions as the server does (the
// permit package, no settings: reads inside the working directory are
// allowed, reads outside are asked about), and run after, when set,
// between an allowing check and the call.
func checked(h *harness, after func()) {
	real := permit.New(permit.Options{})
	h.p.Permit = orchestrator.PermitterFunc(func(ctx context.Context, req orchestrator.PermissionRequest) permissions.Decision {
		d := real.Decide(ctx, req)
		if d.Behavior == permissions.Allow && after != nil {
			after()
		}
		return d
	})
}

// allowOnce answers every permission question with "allow once".
type allowOnce struct{ asked []string }

func (a *allowOnce) Ask(_ context.Context, msg string, _ map[string]any) (tools.Answer, error) {
	a.asked = append(a.asked, msg)
	return tools.Answer{Action: "accept", Content: map[string]any{"decision": tools.ChoiceAllowOnce}}, nil
}

// callAsking runs a call whose permission questions asker answers.
func (h *harness) callAsking(asker tools.Asker, name string, input any) *tools.Result {
	h.t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		h.t.Fatal(err)
	}
	out := h.p.Run(context.Background(), &tools.UseContext{Session: h.s, Asker: asker}, orchestrator.Call{ID: "t", Name: name, Input: raw}, nil)
	if out.Err != nil {
		h.t.Fatalf("%s: %v", name, out.Err)
	}
	return out.Result
}

// swapForLink moves the entry rel of h's working directory aside and puts
// a symbolic link to target in its place.
func swapForLink(t *testing.T, h *harness, rel, target string) {
	t.Helper()
	if err := os.Rename(h.path(rel), h.path(rel+".moved")); err != nil {
		t.Error(err)
	}
	if err := os.Symlink(target, h.path(rel)); err != nil {
		t.Error(err)
	}
}

// noSecret fails the test when text holds the outside content.
func noSecret(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, secret) {
		t.Errorf("%s returned what is outside the working directory: %s", what, text)
	}
}

// noOutsideNames fails the test when text names a file found only in
// the outside directory's listing (an error may name where a link
// leads, but no listing may show what is there).
func noOutsideNames(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, "secret.txt") {
		t.Errorf("%s listed what is outside the working directory: %s", what, text)
	}
}

// TestReadConfinement checks that Read and LS cannot be led out of the
// working directories by a symbolic link swapped into the path after the
// permission check, whether the swap comes right after the check or at
// the last moment before the open.
func TestReadConfinement(t *testing.T) {
	moments := []struct {
		name string
		// arm makes swap happen at the moment; it returns the undo.
		arm func(h *harness, swap func()) func()
	}{
		{"after_the_check", func(h *harness, swap func()) func() {
			checked(h, swap)
			return func() {}
		}},
		{"right_before_the_open", func(h *harness, swap func()) func() {
			checked(h, nil)
			done := false
			return fs.SetBeforeReadOpen(func(string) {
				if !done {
					done = true
					swap()
				}
			})
		}},
	}
	for _, m := range moments {
		t.Run("Read/directory_swapped_for_link_out/"+m.name, func(t *testing.T) {
			h := newHarness(t)
			out := secretDir(t)
			h.put("d/f.txt", "ours")
			defer m.arm(h, func() { swapForLink(t, h, "d", filepath.Join(out, "d")) })()
			text := h.fail("Read", map[string]any{"file_path": "d/f.txt"}, "outside the working directories", "nothing was read")
			noSecret(t, "Read", text)
		})
		t.Run("Read/file_swapped_for_link_out/"+m.name, func(t *testing.T) {
			h := newHarness(t)
			out := secretDir(t)
			h.put("f.txt", "ours")
			defer m.arm(h, func() {
				os.Remove(h.path("f.txt"))
				if err := os.Symlink(filepath.Join(out, "secret.txt"), h.path("f.txt")); err != nil {
					t.Error(err)
				}
			})()
			noSecret(t, "Read", h.fail("Read", map[string]any{"file_path": "f.txt"}, "outside the working directories"))
		})
		t.Run("Read/notebook_directory_swapped_for_link_out/"+m.name, func(t *testing.T) {
			h := newHarness(t)
			out := secretDir(t)
			nb := `{"cells":[{"cell_type":"code","source":"x","outputs":[]}],"metadata":{},"nbformat":4,"nbformat_minor":5}`
			h.put("d/n.ipynb", nb)
			os.WriteFile(filepath.Join(out, "d", "n.ipynb"), []byte(strings.Replace(nb, `"x"`, `"`+secret+`"`, 1)), 0o644)
			defer m.arm(h, func() { swapForLink(t, h, "d", filepath.Join(out, "d")) })()
			noSecret(t, "Read", h.fail("Read", map[string]any{"file_path": "d/n.ipynb"}, "outside the working directories"))
		})
		t.Run("Read/missing_file_names_nothing_outside/"+m.name, func(t *testing.T) {
			h := newHarness(t)
			out := secretDir(t)
			h.put("d/other.txt", "ours")
			defer m.arm(h, func() { swapForLink(t, h, "d", filepath.Join(out, "d")) })()
			// secret.tx is one letter from the outside secret.txt: no
			// suggestion may name it.
			noOutsideNames(t, "Read", h.fail("Read", map[string]any{"file_path": "d/secret.tx"}))
		})
		t.Run("LS/directory_swapped_for_link_out/"+m.name, func(t *testing.T) {
			h := newHarness(t)
			out := secretDir(t)
			h.put("d/f.txt", "ours")
			defer m.arm(h, func() { swapForLink(t, h, "d", filepath.Join(out, "d")) })()
			noOutsideNames(t, "LS", h.fail("LS", map[string]any{"path": "d"}, "outside the working directories"))
		})
		t.Run("Read/directory_swapped_for_link_inside_read/"+m.name, func(t *testing.T) {
			h := newHarness(t)
			h.put("d/f.txt", "ours")
			h.put("other/f.txt", "also ours")
			defer m.arm(h, func() { swapForLink(t, h, "d", h.path("other")) })()
			contains(t, "Read", h.ok("Read", map[string]any{"file_path": "d/f.txt"}).Text, "also ours")
		})
	}

	t.Run("LS/directory_swapped_for_link_out_mid_listing_not_descended", func(t *testing.T) {
		for _, withCheck := range []bool{false, true} {
			h := newHarness(t)
			if withCheck {
				checked(h, nil)
			}
			out := secretDir(t)
			h.put("a/a.txt", "ours")
			h.put("b/b.txt", "ours")
			swapped := false
			defer fs.SetBeforeListDir(func(rel string) {
				if rel == "b" && !swapped {
					swapped = true
					swapForLink(t, h, "b", filepath.Join(out, "d"))
				}
			})()
			res := h.ok("LS", map[string]any{"path": "."})
			if !swapped {
				t.Fatal("the hook did not run")
			}
			noOutsideNames(t, "LS", res.Text)
			contains(t, "LS", res.Text, "a.txt", "Could not read", "b/")
		}
	})
	t.Run("Read/link_out_allowed_by_the_user_read", func(t *testing.T) {
		h := newHarness(t)
		out := secretDir(t)
		os.Symlink(filepath.Join(out, "d"), h.path("d"))
		checked(h, nil)
		asker := &allowOnce{}
		res := h.callAsking(asker, "Read", map[string]any{"file_path": "d/f.txt"})
		if res.IsError || !strings.Contains(res.Text, secret) {
			t.Fatalf("Read through a link the user allowed: %s", res.Text)
		}
		if len(asker.asked) != 1 || !strings.Contains(asker.asked[0], filepath.Join(out, "d", "f.txt")) {
			t.Errorf("asked %q, want one question naming where the link leads", asker.asked)
		}
	})
	t.Run("Read/link_out_allowed_by_the_user_then_swapped_elsewhere_refused", func(t *testing.T) {
		h := newHarness(t)
		out := secretDir(t)
		other := secretDir(t)
		os.WriteFile(filepath.Join(out, "d", "f.txt"), []byte("allowed"), 0o644)
		os.Symlink(filepath.Join(out, "d"), h.path("d"))
		checked(h, func() {
			os.Remove(h.path("d"))
			if err := os.Symlink(filepath.Join(other, "d"), h.path("d")); err != nil {
				t.Error(err)
			}
		})
		res := h.callAsking(&allowOnce{}, "Read", map[string]any{"file_path": "d/f.txt"})
		if !res.IsError {
			t.Fatalf("Read succeeded: %s", res.Text)
		}
		noSecret(t, "Read", res.Text)
		contains(t, "Read", res.Text, "led to "+filepath.Join(out, "d", "f.txt"))
	})
	t.Run("Read/path_outside_without_a_check_read_as_before", func(t *testing.T) {
		h := newHarness(t)
		out := secretDir(t)
		contains(t, "Read", h.ok("Read", map[string]any{"file_path": filepath.Join(out, "f.txt")}).Text, secret)
		contains(t, "LS", h.ok("LS", map[string]any{"path": filepath.Join(out, "d")}).Text, "secret.txt")
	})
	t.Run("Read/ranged_read_through_the_root", func(t *testing.T) {
		h := newHarness(t)
		checked(h, nil)
		var b strings.Builder
		for i := 1; i <= 5000; i++ {
			b.WriteString("line\n")
		}
		h.put("sub/big.txt", b.String())
		res := h.ok("Read", map[string]any{"file_path": "sub/big.txt", "offset": 4999, "limit": 2})
		contains(t, "Read", res.Text, "4999\tline", "5000\tline")
	})
}
