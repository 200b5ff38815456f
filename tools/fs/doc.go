// Package fs holds the file tools: Read, Write, Edit, MultiEdit, LS and
// NotebookEdit. Each tool is one file with its model-facing description
// beside it (name.md, embedded) and its tests beside it (name_test.go).
//
// The tools share the session's record of which files were read and what
// they held (tools.Session.RecordFile), which is how writes refuse to
// clobber a file the caller has not seen. Staleness is judged by content
// (a SHA-256 fingerprint), not by modification time alone: a touched but
// unchanged file is current; a changed file is refused, except that an
// edit still matching exactly one place applies and says so.
//
// Shared machinery, one concern per file:
//
//   - textfmt.go: a file's encoding (UTF-8, UTF-16 with BOM), byte-order
//     mark and line endings, decoded and re-encoded so writes keep them.
//   - write_atomic.go: atomic replacement (temporary file in the same
//     directory, fsync, rename, directory fsync) keeping mode and owner,
//     and the symlink rule (write a link's target only inside the working
//     directories).
//   - staleness.go: freshness of a file against the session's record.
//   - target.go: opening a file for writing (resolve, lock, load, judge)
//     and committing the new content, every step through an os.Root of
//     the working directory holding the file, so a symbolic link swapped
//     into the path after it was checked cannot lead the write outside.
//   - *_access.go: the paths each tool reports to the permission check
//     (tools.PathInput).
//   - editmatch.go: Edit's matching (unique match, replace_all, CRLF,
//     curly/straight quote tolerance) on bytes, without splitting lines,
//     so files of hundreds of MB cost two copies.
//   - nearmiss.go: when old_string is not found, the region of the file
//     it most resembles once whitespace and quotes are normalised (a
//     measured similarity), a short diff from old_string to it, and what
//     differs (indentation, tabs or spaces, line endings, quotes, changed
//     words). Nothing is applied without an exact, unique match.
//   - options.go: the writing tools' Options; Diagnostics, the language
//     servers' view of a change (package tools/lsp implements it), whose
//     answer ends the result of Write, Edit, MultiEdit and NotebookEdit.
//   - patch.go: the structuredPatch hunk of an output object.
//   - jsonorder.go: order-preserving JSON, so NotebookEdit rewrites a
//     notebook in its own layout and diffs stay small.
//   - image.go and pdf.go: Read's images (typed by content, scaled down
//     past what hosts take) and PDFs (text per page through internal/pdf,
//     pages without text rendered to PNG).
//
// Path confinement and permission rules are decided by the permission
// check (see package permissions) on the paths the tools report. This
// package only keeps writes to what was checked: a link's target is
// written only inside the working directories, a path inside them as
// written must lead inside them once its links are resolved, and the
// write itself goes through an os.Root.
package fs
