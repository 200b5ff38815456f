package agent

import (
	"os"
	"testing"
	"time"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

func TestStore_Latest_and_List_skip_empty_conversations(t *testing.T) {
	t.Parallel()
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	said, err := s.Create("/p", "anthropic/m")
	if err != nil {
		t.Fatal(err)
	}
	if err := said.Append(llm.Message{Role: llm.User, Content: []llm.Block{llm.Text("  fix\n the   bug ")}},
		llm.Message{Role: llm.Assistant, Content: []llm.Block{llm.Text("done")}}); err != nil {
		t.Fatal(err)
	}
	other, err := s.Create("/elsewhere", "anthropic/m")
	if err != nil {
		t.Fatal(err)
	}
	_ = other.Append(llm.Message{Role: llm.User, Content: []llm.Block{llm.Text("hi")}})
	empty, err := s.Create("/p", "anthropic/m") // what /clear leaves
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(empty.Path(), later, later); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Latest("/p"); err != nil || id != said.ID {
		t.Errorf("Latest = %q, %v; want %s (the empty one skipped)", id, err, said.ID)
	}
	list, err := s.List("/p", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != said.ID || list[0].Messages != 2 || list[0].Prompt != "fix the bug" || list[0].Model != "anthropic/m" {
		t.Errorf("List = %+v", list)
	}
}
