package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on text printed to people: a run of characters without a space
// (a tag, a container name, a label value, a URL) and a line. Longer ones
// are cut with "…": a hostile or broken source must not flood a terminal
// or a CI log.
const (
	maxPrintedRun  = 256
	maxPrintedLine = 2048
)

// terminalUnsafe reports whether a terminal may act on r, or show the
// text around it other than it is: the C0 and C1 controls (U+009B is an
// escape introducer), DEL, the bidirectional formatting characters (ALM,
// LRM, RLM, the embeddings and overrides, the isolates) and the line and
// paragraph separators. It is the one list of what pin escapes in text
// for people and in JSON; newline and tab are C0 controls that each
// caller keeps where they mean what they say.
func terminalUnsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return true
	}
	return r == 0x2028 || r == 0x2029
}

// sanitize escapes control characters (terminal escape sequences among
// them), Unicode bidirectional controls and line separators in text
// printed to people, and cuts runs and lines longer than maxPrintedRun and
// maxPrintedLine characters with "…"; newlines and tabs stay.
func sanitize(s string) string {
	var b strings.Builder
	run, line := 0, 0
	cutRun, cutLine := false, false
	for _, r := range s {
		if r == '\n' {
			b.WriteByte('\n')
			run, line, cutRun, cutLine = 0, 0, false, false
			continue
		}
		out := string(r)
		switch {
		case r == '\t':
		case terminalUnsafe(r) && r < 0xa0:
			out = fmt.Sprintf("\\x%02x", r)
		case terminalUnsafe(r):
			out = fmt.Sprintf("\\u%04x", r)
		}
		space := out == string(r) && unicode.IsSpace(r)
		if space {
			run, cutRun = 0, false
		}
		if cutLine || (cutRun && !space) {
			continue
		}
		n := utf8.RuneCountInString(out)
		switch {
		case line+n > maxPrintedLine:
			b.WriteString("…")
			cutLine = true
		case !space && run+n > maxPrintedRun:
			b.WriteString("…")
			cutRun = true
			line++
		default:
			b.WriteString(out)
			line += n
			if !space {
				run += n
			}
		}
	}
	return b.String()
}

// lineSanitizer writes on to w what is written to it, sanitized a whole
// line at a time: sanitize's state ends with each line, so the text comes
// out as sanitize would print it whole, without holding it all (a plan of
// 1,100 modules is 360 KB, held twice, at the moment the run's heap is at
// its largest). Close writes a last line without a newline.
type lineSanitizer struct {
	w       io.Writer
	partial []byte
}

func (l *lineSanitizer) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	i := bytes.LastIndexByte(l.partial, '\n')
	if i < 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(l.w, sanitize(string(l.partial[:i+1]))); err != nil {
		return 0, err
	}
	l.partial = append(l.partial[:0], l.partial[i+1:]...)
	return len(p), nil
}

// Close writes what is left of the last line.
func (l *lineSanitizer) Close() error {
	if len(l.partial) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, sanitize(string(l.partial)))
	l.partial = l.partial[:0]
	return err
}
