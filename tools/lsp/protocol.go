package lsp

// The LSP 3.17 structures the client sends and reads are generated into
// protocol_gen.go from the specification's meta-model (metaModel.json;
// lsp.json in Microsoft's lsprotocol repository) by internal/protogen,
// which lists the types it writes:
//
//go:generate go run ./internal/protogen -model ${LSP_META_MODEL} -out protocol_gen.go

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
