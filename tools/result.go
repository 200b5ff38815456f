package tools

import "io"

// Result is what a tool call produced.
type Result struct {
	// Output is the tool's output object, returned to programs as
	// structuredContent. It must marshal to a JSON object.
	Output any
	// Text is the model-facing rendering of the result.
	Text string
	// Extra holds content blocks after Text: images, or a second text
	// block such as Read's partial-view notice.
	Extra []Content
	// IsError marks a failed call whose Text explains the failure.
	IsError bool
	// FullText, when set, reads the whole of the output Text shows only
	// a window of (a command's output past what a result keeps in
	// memory, read back through the descriptor it was written with). A
	// result over its tool's budget is persisted by copying it, so the
	// saved output is complete.
	FullText io.Reader
	// FullTextNote, when set, is said where the result is persisted: what
	// FullText lacks (output past the task output cap).
	FullTextNote string
	// Modify, if set, changes the session after the call (a context
	// modifier). The orchestrator applies it in call order: right after a
	// serial call, after the whole batch for parallel calls.
	Modify func(s *Session)
}

// ContentKind says what a Content block carries.
type ContentKind int

const (
	// TextContent is a block of text.
	TextContent ContentKind = iota
	// ImageContent is an image; Data holds the encoded bytes.
	ImageContent
	// LinkContent points at a resource by URI.
	LinkContent
)

// Content is one extra content block of a Result.
type Content struct {
	Kind     ContentKind
	Text     string // TextContent
	MIMEType string // ImageContent, LinkContent
	Data     []byte // ImageContent
	URI      string // LinkContent
	Name     string // LinkContent
	Size     int64  // LinkContent, bytes
}

// ErrorResult is a failed result with the given message.
func ErrorResult(msg string) *Result { return &Result{Text: msg, IsError: true} }

// ProgressUpdate is one progress report of a running call.
type ProgressUpdate struct {
	// Progress counts up; Total is 0 when unknown.
	Progress, Total float64
	Message         string
}

// Progress receives progress reports. It never blocks the caller for long
// and may drop reports.
type Progress func(ProgressUpdate)
