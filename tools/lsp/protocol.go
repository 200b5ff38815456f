package lsp

import "encoding/json"

// The Language Server Protocol 3.17 structures this client sends and
// reads, named and shaped as the specification's meta-model names them
// (https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/).
// Only the properties the client uses are declared; a server's other
// properties are ignored when decoded. Unions the client does not take
// apart stay json.RawMessage.

// DocumentURI is a file:// URI.
type DocumentURI string

// Position is a zero-based line and UTF-16 code unit offset.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is a half-open range of positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   DocumentURI `json:"uri"`
	Range Range       `json:"range"`
}

// LocationLink is a link to a target range (definition results).
type LocationLink struct {
	OriginSelectionRange *Range      `json:"originSelectionRange,omitempty"`
	TargetURI            DocumentURI `json:"targetUri"`
	TargetRange          Range       `json:"targetRange"`
	TargetSelectionRange Range       `json:"targetSelectionRange"`
}

// DiagnosticSeverity is 1 error, 2 warning, 3 information, 4 hint.
type DiagnosticSeverity uint32

// Diagnostic severities.
const (
	SeverityError       DiagnosticSeverity = 1
	SeverityWarning     DiagnosticSeverity = 2
	SeverityInformation DiagnosticSeverity = 3
	SeverityHint        DiagnosticSeverity = 4
)

// Diagnostic is a compiler error, warning or note.
type Diagnostic struct {
	Range    Range              `json:"range"`
	Severity DiagnosticSeverity `json:"severity,omitempty"`
	// Code is an integer or a string.
	Code    json.RawMessage `json:"code,omitempty"`
	Source  string          `json:"source,omitempty"`
	Message string          `json:"message"`
}

// PublishDiagnosticsParams is textDocument/publishDiagnostics's.
type PublishDiagnosticsParams struct {
	URI         DocumentURI  `json:"uri"`
	Version     *int32       `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// TextDocumentItem is an opened document.
type TextDocumentItem struct {
	URI        DocumentURI `json:"uri"`
	LanguageID string      `json:"languageId"`
	Version    int32       `json:"version"`
	Text       string      `json:"text"`
}

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI DocumentURI `json:"uri"`
}

// VersionedTextDocumentIdentifier names a document at a version.
type VersionedTextDocumentIdentifier struct {
	URI     DocumentURI `json:"uri"`
	Version int32       `json:"version"`
}

// DidOpenTextDocumentParams is textDocument/didOpen's.
type DidOpenTextDocumentParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// TextDocumentContentChangeEvent is the whole new text (the client syncs
// full documents).
type TextDocumentContentChangeEvent struct {
	Text string `json:"text"`
}

// DidChangeTextDocumentParams is textDocument/didChange's.
type DidChangeTextDocumentParams struct {
	TextDocument   VersionedTextDocumentIdentifier  `json:"textDocument"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
}

// DidSaveTextDocumentParams is textDocument/didSave's.
type DidSaveTextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Text         *string                `json:"text,omitempty"`
}

// DidCloseTextDocumentParams is textDocument/didClose's.
type DidCloseTextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// TextDocumentPositionParams is a position in a document.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// ReferenceContext is textDocument/references's context.
type ReferenceContext struct {
	IncludeDeclaration bool `json:"includeDeclaration"`
}

// ReferenceParams is textDocument/references's.
type ReferenceParams struct {
	TextDocumentPositionParams
	Context ReferenceContext `json:"context"`
}

// DocumentSymbolParams is textDocument/documentSymbol's.
type DocumentSymbolParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// WorkspaceSymbolParams is workspace/symbol's.
type WorkspaceSymbolParams struct {
	Query string `json:"query"`
}

// SymbolKind is a symbol's kind (1 File … 26 TypeParameter).
type SymbolKind uint32

// DocumentSymbol is a symbol of a document, with its children.
type DocumentSymbol struct {
	Name           string           `json:"name"`
	Detail         string           `json:"detail,omitempty"`
	Kind           SymbolKind       `json:"kind"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Children       []DocumentSymbol `json:"children,omitempty"`
}

// SymbolInformation is a symbol with its location (the older form of
// documentSymbol's and workspace/symbol's results). WorkspaceSymbol's
// location may lack a range; it then decodes as the zero range.
type SymbolInformation struct {
	Name          string     `json:"name"`
	Kind          SymbolKind `json:"kind"`
	Location      Location   `json:"location"`
	ContainerName string     `json:"containerName,omitempty"`
}

// MarkupContent is hover text.
type MarkupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// Hover is textDocument/hover's result; Contents is MarkupContent,
// MarkedString or MarkedString[].
type Hover struct {
	Contents json.RawMessage `json:"contents"`
	Range    *Range          `json:"range,omitempty"`
}

// CallHierarchyItem is a function in a call hierarchy.
type CallHierarchyItem struct {
	Name           string          `json:"name"`
	Kind           SymbolKind      `json:"kind"`
	Detail         string          `json:"detail,omitempty"`
	URI            DocumentURI     `json:"uri"`
	Range          Range           `json:"range"`
	SelectionRange Range           `json:"selectionRange"`
	Data           json.RawMessage `json:"data,omitempty"`
}

// CallHierarchyIncomingCallsParams is callHierarchy/incomingCalls's.
type CallHierarchyIncomingCallsParams struct {
	Item CallHierarchyItem `json:"item"`
}

// CallHierarchyIncomingCall is a caller.
type CallHierarchyIncomingCall struct {
	From       CallHierarchyItem `json:"from"`
	FromRanges []Range           `json:"fromRanges"`
}

// CallHierarchyOutgoingCallsParams is callHierarchy/outgoingCalls's.
type CallHierarchyOutgoingCallsParams struct {
	Item CallHierarchyItem `json:"item"`
}

// CallHierarchyOutgoingCall is a callee.
type CallHierarchyOutgoingCall struct {
	To         CallHierarchyItem `json:"to"`
	FromRanges []Range           `json:"fromRanges"`
}

// WorkspaceFolder is a root of the workspace.
type WorkspaceFolder struct {
	URI  DocumentURI `json:"uri"`
	Name string      `json:"name"`
}

// ClientInfo names the client.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// InitializeParams is initialize's. Capabilities is the
// ClientCapabilities object (see clientCapabilities).
type InitializeParams struct {
	ProcessID             int               `json:"processId"`
	ClientInfo            *ClientInfo       `json:"clientInfo,omitempty"`
	RootURI               DocumentURI       `json:"rootUri"`
	Capabilities          json.RawMessage   `json:"capabilities"`
	InitializationOptions json.RawMessage   `json:"initializationOptions,omitempty"`
	WorkspaceFolders      []WorkspaceFolder `json:"workspaceFolders"`
}

// InitializeResult is initialize's result; the server's capabilities
// are kept as they came.
type InitializeResult struct {
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	ServerInfo   *struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	} `json:"serverInfo,omitempty"`
}

// ConfigurationItem is one item workspace/configuration asks for.
type ConfigurationItem struct {
	ScopeURI string `json:"scopeUri,omitempty"`
	Section  string `json:"section,omitempty"`
}

// ConfigurationParams is workspace/configuration's.
type ConfigurationParams struct {
	Items []ConfigurationItem `json:"items"`
}

// clientCapabilities are what this client declares: full-text sync with
// save notifications, versioned diagnostics, and the navigation requests
// the LSP tool makes, with links and hierarchical symbols.
const clientCapabilities = `{
  "workspace": {"configuration": true, "workspaceFolders": true, "symbol": {}},
  "textDocument": {
    "synchronization": {"didSave": true, "dynamicRegistration": false},
    "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
    "hover": {"contentFormat": ["plaintext", "markdown"]},
    "definition": {"linkSupport": true},
    "implementation": {"linkSupport": true},
    "references": {},
    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
    "callHierarchy": {}
  },
  "window": {"workDoneProgress": false},
  "general": {"positionEncodings": ["utf-16"]}
}`
