package fs

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// endlessLine is a line with no end: 'a' bytes forever.
type endlessLine struct{ read int64 }

func (e *endlessLine) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestScanLines_cancellation_is_checked_by_bytes scans past a line that
// never ends to reach a later one: only a cancellation ends the scan, and
// it is seen within a bounded number of bytes, not after 65536 lines.
func TestScanLines_cancellation_is_checked_by_bytes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := &endlessLine{}
	_, err := scanLines(ctx, io.MultiReader(strings.NewReader("first\n"), src), 3, 1, ReadMaxTokens*4, true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if src.read > 2*ctxCheckBytes {
		t.Errorf("read %d bytes after the cancellation, want at most %d", src.read, 2*ctxCheckBytes)
	}
}

// TestScanLines_a_line_over_the_budget_stops_the_scan reads a range whose
// line never ends: the scan stops once the line is known to be too long
// to show, with an error naming the line.
func TestScanLines_a_line_over_the_budget_stops_the_scan(t *testing.T) {
	t.Parallel()
	src := &endlessLine{}
	_, err := scanLines(context.Background(), io.MultiReader(strings.NewReader("first\n"), src), 2, 5, 1000, false)
	var long *lineTooLongError
	if !errors.As(err, &long) || long.line != 2 {
		t.Fatalf("err = %v, want line 2 too long", err)
	}
	if src.read > 64<<10+1000 {
		t.Errorf("read %d bytes of the line, want the scan to stop at about the budget", src.read)
	}
}
