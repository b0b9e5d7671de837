package propose

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/atomicfile"
)

// IsBodyFile tells whether b is, by its content, a file of bodies that
// propose wrote (--body-file): it carries a proposal's hidden marker.
func IsBodyFile(b []byte) bool {
	return strings.Contains(string(b), markerPrefix)
}

// bodyFileOptions: a body file is replaced only when it is one propose
// wrote, or absent, or empty, unless force.
func bodyFileOptions(force bool) atomicfile.Options {
	return atomicfile.Options{Owned: IsBodyFile, Force: force}
}

// CheckBodyFile tells, before anything is proposed, whether the bodies
// could be written to path: a file that is not propose's is refused.
func CheckBodyFile(path string, force bool) error {
	_, err := atomicfile.Check(path, []byte(markerPrefix), bodyFileOptions(force))
	return explainBodyFile(err)
}

// WriteBodyFile writes each proposal's body to path, separated by a
// Markdown rule.
func WriteBodyFile(path string, ps []*Proposal, force bool) error {
	var bodies []string
	for _, p := range ps {
		bodies = append(bodies, p.Body)
	}
	_, err := atomicfile.Write(path, []byte(strings.Join(bodies, "\n---\n\n")), bodyFileOptions(force))
	return explainBodyFile(err)
}

func explainBodyFile(err error) error {
	switch {
	case errors.Is(err, atomicfile.ErrNotOwned):
		return fmt.Errorf("writing the body: %w: it holds no proposal pin wrote; name another file with --body-file, or pass --force to replace it", err)
	case errors.Is(err, atomicfile.ErrDanglingLink):
		return fmt.Errorf("writing the body: %w: create the file it names, or remove the link", err)
	case err != nil:
		return fmt.Errorf("writing the body: %w", err)
	}
	return nil
}
