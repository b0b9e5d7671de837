package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// ErrBadSnapshot is in the chain of every error for a snapshot whose
// content pin cannot read: not JSON, not one of the two formats, an
// unsupported schema, or a container or image that lacks what pin needs.
// It is bad input, to be fixed by whoever wrote the file; a snapshot file
// that cannot be read at all (missing, unreadable) is not ErrBadSnapshot
// but carries the fs error instead (errors.Is(err, fs.ErrNotExist)).
var ErrBadSnapshot = errors.New("malformed snapshot")

// SnapshotError is a snapshot that pin cannot use. ParseSnapshot returns it
// for malformed content (Path and Host empty unless the caller set them);
// SnapshotFile.Observe for malformed content and for a file it cannot read,
// with Path and Host set.
//
// errors.Is(err, ErrBadSnapshot) tells malformed content from a file that
// could not be read; errors.As to *SnapshotError finds the file either way.
type SnapshotError struct {
	// Host is the host the snapshot stands for; empty when not known.
	Host string
	// Path is the snapshot file; empty for a snapshot read from bytes.
	Path string
	// Line and Column (1-based, Column in bytes) are where the JSON decoder
	// stopped in the file, for a syntax error or a value of the wrong type;
	// both are zero when encoding/json gives no position.
	Line, Column int
	// Err is what went wrong: the JSON or consistency error for malformed
	// content, the *fs.PathError for a file that could not be read.
	Err error

	// malformed is set for content errors: then the error is ErrBadSnapshot.
	malformed bool
}

// Error renders malformed content as "snapshot of host H (PATH:LINE:COL):
// what is wrong", leaving out the parts that are not known, and a file
// that cannot be read as "reading snapshot of host H: open PATH: why", as
// the fs error names the file.
func (e *SnapshotError) Error() string {
	of := "snapshot"
	if e.Host != "" {
		of += " of host " + e.Host
	}
	if !e.malformed {
		var pe *fs.PathError
		if e.Path != "" && !(errors.As(e.Err, &pe) && pe.Path == e.Path) {
			of += " (" + e.Path + ")"
		}
		return "reading " + of + ": " + e.Err.Error()
	}
	where := e.Path
	if e.Line > 0 {
		if where != "" {
			where += fmt.Sprintf(":%d:%d", e.Line, e.Column)
		} else {
			where = fmt.Sprintf("line %d, column %d", e.Line, e.Column)
		}
	}
	if where != "" {
		of += " (" + where + ")"
	}
	return of + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *SnapshotError) Unwrap() error { return e.Err }

// Is reports whether target is ErrBadSnapshot and the content is malformed.
func (e *SnapshotError) Is(target error) bool {
	return target == ErrBadSnapshot && e.malformed
}

// malformed makes the error for content that is not a snapshot. data is
// the whole input, so that a JSON error's offset in it gives the line and
// column; base is the offset in data where the decoder's input began.
func malformed(data []byte, base int64, err error) *SnapshotError {
	e := &SnapshotError{Err: err, malformed: true}
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off >= 0 {
		e.Line, e.Column = position(data, base+off)
	}
	return e
}

// position turns the offset that encoding/json reports ("after reading
// off bytes") into the 1-based line and column of the last byte read.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 1), int64(len(data)))
	if off == 0 {
		return 0, 0
	}
	before := data[:off-1] // the bytes before the last one read
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
