package lock

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/atomicfile"
)

// DefaultPath is the lockfile used when none is named.
const DefaultPath = "pin.lock.hcl"

// Load reads the lockfile at path. A missing file is an empty lock; a
// symbolic link to a file that does not exist is an error, not an empty
// lock (its floors would be lost, and the write refused at the end).
func Load(path string) (*Lock, []byte, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if target, err := os.Readlink(path); err == nil {
			return &Lock{}, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Lockfile link names no file",
				Detail: fmt.Sprintf("%s is a symbolic link to %s, which does not exist (or is a link to nothing). Create the file it names (an empty file is an empty lock), or remove the link to start a lock here.", path, target)}}
		}
		return &Lock{}, nil, nil
	}
	if err != nil {
		return &Lock{}, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read lockfile", Detail: err.Error() + "."}}
	}
	l, diags := Parse(src, path)
	return l, src, diags
}

// Save writes the lock to path atomically, and only when its bytes differ
// from what the file holds. It reports whether it wrote.
func Save(path string, l *Lock) (bool, error) {
	return WriteFile(path, Format(l))
}

// RemoveStale removes the temporary files that writes of the lock at path
// (or of the file a symbolic link at path names) left in its folder when
// they were killed before renaming them ("." + the lock's name + a random
// number), and returns the paths removed. Only call it while no write of
// that lock can be under way: pin holds a lock on the folder.
func RemoveStale(path string) ([]string, error) {
	return atomicfile.RemoveStale(path)
}

// WriteFile is Save for a lock already formatted: b is Format's output,
// written only when it differs from what the file holds, atomically: a
// temporary file in the folder of the lock (of the file a symbolic link
// at path names, which stays a link), with the lock's mode and owner,
// synced and renamed over it.
//
// A file that is not a lock pin wrote is never replaced: a lock is pin's
// when it starts with the header Format writes, or else parses as a lock.
// A link to nothing is refused too. The file is then as it was.
func WriteFile(path string, b []byte) (bool, error) {
	wrote, err := atomicfile.Write(path, b, atomicfile.Options{Mode: 0o644, Owned: IsPins})
	return wrote, writeError(err)
}

// writeError words a refusal or failure to write a lockfile, nil for nil.
func writeError(err error) error {
	switch {
	case errors.Is(err, atomicfile.ErrNotOwned):
		return fmt.Errorf("writing lockfile %w: it is not a lock (no pin header, and it does not parse as one); move it away or name another lockfile", err)
	case errors.Is(err, atomicfile.ErrDanglingLink):
		return fmt.Errorf("writing lockfile %w: create the file it names, or remove the link", err)
	case err != nil:
		return fmt.Errorf("writing lockfile %w", err)
	}
	return nil
}

// Write is one lock file of a run: its path and the lock to write there.
type Write struct {
	Path string
	Lock *Lock
}

// WriteAll writes every lock of a run, or none: each is checked first as
// WriteFile would refuse it (a file that is not pin's, a link to
// nothing), and a refusal of one writes none. Then what killed writes
// left beside each lock is removed (RemoveStale: the caller holds the
// folder's lock), and each lock whose bytes differ from its file's is
// written. It returns the paths written and the stale files removed. A
// failure while writing (a full disk) puts back every lock written before
// it (atomicfile.WriteAll), so a failed run leaves every lock as it was.
func WriteAll(ws []Write) (written, removed []string, err error) {
	bytes := make([][]byte, len(ws))
	var changed []int
	for i, w := range ws {
		bytes[i] = Format(w.Lock)
		c, err := atomicfile.Check(w.Path, bytes[i], atomicfile.Options{Mode: 0o644, Owned: IsPins})
		if err != nil {
			return nil, nil, writeError(err)
		}
		if c {
			changed = append(changed, i)
		}
	}
	for _, i := range changed {
		r, err := RemoveStale(ws[i].Path)
		removed = append(removed, r...)
		if err != nil {
			return nil, removed, err
		}
	}
	files := make([]atomicfile.File, 0, len(changed))
	for _, i := range changed {
		files = append(files, atomicfile.File{Path: ws[i].Path, Bytes: bytes[i], Options: atomicfile.Options{Mode: 0o644, Owned: IsPins}})
	}
	if err := atomicfile.WriteAll(files...); err != nil {
		return nil, removed, writeError(err)
	}
	for _, f := range files {
		written = append(written, f.Path)
	}
	return written, removed, nil
}

// IsPins reports whether b, the content of a lockfile, is a lock pin wrote:
// it starts with the first line of the header Format writes, or else it
// parses as a lock without errors (a lock whose comments were removed).
func IsPins(b []byte) bool {
	first, _, _ := bytes.Cut([]byte(header), []byte("\n"))
	if bytes.HasPrefix(b, first) {
		return true
	}
	_, diags := Parse(b, DefaultPath)
	return !diags.HasErrors()
}
