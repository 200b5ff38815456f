// Package testpdf writes small PDF documents for tests: pages of text in
// Helvetica, pages that are only a picture (as a scan is), optionally
// compressed, optionally encrypted with the standard security handler
// (RC4, 40-bit, revision 2). Without compression or encryption the file
// is plain ASCII, so it can sit in a text fixture.
//
// It is for tests only; nothing in the product imports it.
package testpdf
