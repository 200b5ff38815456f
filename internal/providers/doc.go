// Package providers talks to language models for the chat loop.
//
// It holds two implementations of llm.Model: the Anthropic Messages API
// and any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama,
// vLLM, llama.cpp server, LM Studio, OpenRouter), both spoken with
// net/http and encoding/json (http.go: the request, server-sent events,
// the APIs' error objects). The vendors' SDKs did this before and were
// three quarters of the binary's functions. Both stream: text deltas and each completed tool call
// are reported as they arrive, so the agent can start safe tool calls before
// the model has finished.
//
// [New] turns a "provider/model" string and the environment (API keys, base
// URLs) into a model client, with one-line errors that say what to set. This
// package knows nothing of tools or the pipeline; the agent package maps
// between the two.
package providers
