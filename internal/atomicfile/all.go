package atomicfile

import (
	"errors"
	"fmt"
	"os"
)

// File is one file of a set written together: its path, its new content
// and what it may replace.
type File struct {
	Path    string
	Bytes   []byte
	Options Options
}

// beforeWrite runs before each file of WriteAll is written; tests make it
// fail.
var beforeWrite = func(path string) error { return nil }

// WriteAll writes files as one (a body and its signature): it judges
// every file as Write does before it writes any, so that a refusal writes
// nothing; then it writes them in order, and when one fails, the files it
// already wrote get their old content back (a file that did not exist is
// removed), so that a failed run leaves every file as it was. The error is
// the first file's *Error, with any failure to restore joined to it.
func WriteAll(files ...File) error {
	states := make([]state, len(files))
	for i, f := range files {
		st, err := inspect(f.Path, f.Bytes, f.Options)
		if err != nil {
			return err
		}
		states[i] = st
	}
	for i, f := range files {
		st := states[i]
		if !st.changed {
			continue
		}
		err := beforeWrite(f.Path)
		if err == nil {
			err = st.write(f.Bytes, f.Options.Mode)
		}
		if err != nil {
			err = &Error{Path: f.Path, Target: st.linkTarget(f.Path), Err: err}
			return errors.Join(err, restore(files[:i], states[:i]))
		}
	}
	return nil
}

// restore puts back what files held before WriteAll wrote them.
func restore(files []File, states []state) error {
	var errs []error
	for i, st := range states {
		if !st.changed {
			continue
		}
		var err error
		if st.info == nil {
			err = os.Remove(st.target)
		} else {
			err = st.write(st.old, 0)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", files[i].Path, unwrapPath(err)))
		}
	}
	return errors.Join(errs...)
}
