// Package pdf reads PDF documents for the Read tool: page count, the text
// of a page in reading order, and a page rendered to an image.
//
// The parser is PDFium (the PDF engine of Chrome) compiled to WebAssembly
// and run by wazero (github.com/klippa-app/go-pdfium's webassembly build):
// no cgo, so the binary stays static and cross-compilable, and a
// malformed file cannot corrupt the server's memory. Every document is
// opened in a fresh WebAssembly instance with a bounded linear memory, no
// filesystem, and standard output and error discarded (the stdio
// transport owns the real ones); when the caller's context ends, the
// instance is closed under the call, so a file that makes PDFium loop
// costs at most the caller's deadline.
//
// The compiled module is shared by the process (Default) and cached on
// disk in the user's cache directory, since compiling PDFium takes a few
// seconds of CPU.
package pdf
