package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/server"
	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/builtin"
)

// The suite's scenarios exercise MCP sampling and logging, deprecated by
// SEP-2577 and kept by agent-mcp during the deprecation window (see
// server/sampling.go and server/logging.go); the fixtures use them too.
//
//lint:file-ignore SA1019 the conformance suite's sampling and logging fixtures use the deprecated API on purpose

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "fixture-server: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fixture-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	noAuth := fs.Bool("no-auth", false, "serve without a bearer token (loopback only)")
	token := fs.String("token", "", "bearer token clients must send")
	cwd := fs.String("cwd", "", "the sessions' working directory (default: the current directory)")
	stateDir := fs.String("state-dir", "", "where sessions keep persisted results")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		*cwd = wd
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pool, err := orchestrator.AssemblePool(builtin.Tools(builtin.Options{}), nil, nil)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Options{
		Name:     "agent-mcp-conformance-fixtures",
		Version:  "1.0.0",
		Pipeline: &orchestrator.Pipeline{Pool: pool, MaxParallel: orchestrator.DefaultMaxParallel, Logger: logger},
		Session:  tools.SessionOptions{Cwd: *cwd, StateRoot: *stateDir},
		Logger:   logger,
		Tasks:    server.TaskOptions{Tools: taskPolicies()},
		CustomizeMCP: func(o *mcp.ServerOptions) {
			o.CompletionHandler = complete
			o.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
			o.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
		},
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	mount(srv.MCP())
	mountTasks(srv.MCP())
	go announceWatched(ctx, srv.MCP())

	h, err := srv.ListenHTTP(server.HTTPOptions{Addr: *addr, Token: *token, NoAuth: *noAuth})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "listening on %s\n", h.URL)
	return h.Serve(ctx, 5*time.Second)
}

// Fixture payloads: a 1x1 PNG and a tiny silent WAV, as the suite's
// reference servers use.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func mustDecode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

var (
	pngData = mustDecode(pngBase64)
	wavData = mustDecode(wavBase64)
)

const watchedURI = "test://watched-resource"

// announceWatched tells subscribers the watched resource changed, every
// few seconds, as the resources-subscribe scenario expects.
func announceWatched(ctx context.Context, s *mcp.Server) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: watchedURI})
		}
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type noInput struct{}

// mount registers the suite's fixture tools, resources and prompts.
func mount(s *mcp.Server) {
	tool := func(name, desc string, h mcp.ToolHandlerFor[noInput, any]) {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc}, h)
	}
	tool("test_simple_text", "Returns one text block", func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return text("This is a simple text response for testing."), nil, nil
	})
	tool("test_image_content", "Returns one image block", func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: pngData, MIMEType: "image/png"}}}, nil, nil
	})
	tool("test_audio_content", "Returns one audio block", func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wavData, MIMEType: "audio/wav"}}}, nil, nil
	})
	tool("test_embedded_resource", "Returns an embedded resource", func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource",
		}}}}, nil, nil
	})
	tool("test_multiple_content_types", "Returns text, an image and a resource", func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "This is text content"},
			&mcp.ImageContent{Data: pngData, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://mixed-content-resource", MIMEType: "text/plain", Text: "This is an embedded resource",
			}},
		}}, nil, nil
	})
	tool("test_tool_with_logging", "Logs three messages while it runs", func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: m})
			time.Sleep(50 * time.Millisecond)
		}
		return text("Tool with logging executed successfully"), nil, nil
	})
	tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		for _, p := range []float64{0, 50, 100} {
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: p, Total: 100, Message: fmt.Sprintf("step %.0f of 100", p),
				})
			}
			time.Sleep(50 * time.Millisecond)
		}
		return text(fmt.Sprint(tok)), nil, nil
	})
	tool("test_error_handling", "Always fails", func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("this tool always fails, on purpose, to test error reporting")
	})
	type promptIn struct {
		Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_sampling", Description: "Asks the client's model to complete a prompt"},
		func(ctx context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
				MaxTokens: 100,
			})
			if err != nil {
				return nil, nil, fmt.Errorf("sampling: %w", err)
			}
			reply := "(not text)"
			if tc, ok := res.Content.(*mcp.TextContent); ok {
				reply = tc.Text
			}
			return text("LLM response: " + reply), nil, nil
		})
	type messageIn struct {
		Message string `json:"message" jsonschema:"what to ask the user"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_elicitation", Description: "Asks the user for a username"},
		func(ctx context.Context, req *mcp.CallToolRequest, in messageIn) (*mcp.CallToolResult, any, error) {
			return elicit(ctx, req, in.Message, &jsonschema.Schema{
				Type:       "object",
				Properties: map[string]*jsonschema.Schema{"username": {Type: "string", Description: "The user's name"}},
				Required:   []string{"username"},
			})
		})
	tool("test_elicitation_sep1034_defaults", "Elicits primitives with defaults (SEP-1034)", func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
		return elicit(ctx, req, "Test defaults for primitives", map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
				"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
				"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
			},
		})
	})
	tool("test_elicitation_sep1330_enums", "Elicits every enum form (SEP-1330)", func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
		titled := []map[string]any{
			{"const": "value1", "title": "First Option"},
			{"const": "value2", "title": "Second Option"},
			{"const": "value3", "title": "Third Option"},
		}
		return elicit(ctx, req, "Test enum schemas", map[string]any{
			"type": "object",
			"properties": map[string]any{
				"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
				"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
				"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
					"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
					"items": map[string]any{"type": "string", "anyOf": titled}},
			},
		})
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Declares a JSON Schema 2020-12 input schema that must survive tools/list unchanged (SEP-1613)",
		InputSchema: schema202012,
	}, func(_ context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprintf("called with %d arguments", len(in))), nil, nil
	})
	tool("test_reconnection", "Closes the SSE stream mid-call; the result arrives after the client reconnects (SEP-1699)", func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
		if req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return text("Reconnected and received the result."), nil, nil
	})

	s.AddResource(&mcp.Resource{Name: "static-text", Description: "Static text", MIMEType: "text/plain", URI: "test://static-text"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "static-binary", Description: "A static PNG", MIMEType: "image/png", URI: "test://static-binary"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: pngData}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", Description: "Data by id", MIMEType: "application/json", URITemplate: "test://template/{id}/data"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			body := fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: body}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "watched-resource", Description: "Changes every 3 seconds", MIMEType: "text/plain", URI: watchedURI},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "Watched resource content"}}}, nil
		})

	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple prompt", Description: "No arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A simple prompt", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Description: "Two required arguments",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "The first argument", Required: true},
			{Name: "arg2", Description: "The second argument", Required: true},
		}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Description: "A prompt with arguments", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt with a resource", Description: "Embeds the resource named by resourceUri",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "The URI to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
				}}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt with an image", Description: "Includes a PNG"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an image", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.ImageContent{Data: pngData, MIMEType: "image/png"}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}},
			}}, nil
		})
}

// elicit asks the client for input and reports what came back.
func elicit(ctx context.Context, req *mcp.CallToolRequest, message string, schema any) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return nil, nil, fmt.Errorf("elicitation: %w", err)
	}
	return text(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil, nil
}

// complete answers completion/complete with no suggestions: the scenario
// checks the shape of the answer, not its values.
func complete(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}, Total: 0}}, nil
}

var schema202012 = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`)
