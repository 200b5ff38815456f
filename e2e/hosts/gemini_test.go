package hosts

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// Gemini CLI: `gemini -p` against the fake Gemini API
// (GOOGLE_GEMINI_BASE_URL, API-key auth chosen in settings.json), with
// agent-mcp registered in settings.json as a trusted server ("trust": true
// lets its calls run unattended; GEMINI_CLI_TRUST_WORKSPACE trusts the
// folder). Gemini CLI adds wait_for_previous to every tool and tells the
// model to set it, so every scripted call sets it, as a real model would.

func geminiName(tool string, input map[string]any) call {
	in := maps.Clone(input)
	in["wait_for_previous"] = true
	return call{Name: "mcp_agent-mcp_" + tool, Input: in}
}

func TestGeminiCLI_stdio(t *testing.T) {
	t.Parallel()
	exe, dir := host(t, "gemini")
	ws := workspace(t)
	// Gemini CLI gives the model no tool to read MCP resources; the
	// preview is what it gets of a large result.
	checks := battery(ws, geminiName)
	model := newGemini(t, steps(checks)...)

	home := t.TempDir()
	settings, _ := json.Marshal(map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"mcpServers": map[string]any{"agent-mcp": map[string]any{
			"command": binary, "args": []string{"serve", "--cwd", ws, "--state-dir", t.TempDir()}, "trust": true,
		}},
	})
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	env := hostEnv(dir, home, "GEMINI_API_KEY=fake-key", "GOOGLE_GEMINI_BASE_URL="+model.URL(), "GEMINI_CLI_TRUST_WORKSPACE=true")
	out := runHost(t, env, ws, exe, "-p", "Work through the scripted steps.")
	verify(t, checks, model.Results(), 0, out)
}
