package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError is a flag cobra could not parse: pflag's error, the flags
// the command takes that are near the one written, and the command whose
// --help lists them.
type flagError struct {
	err      error
	near     []string // "--check", nearest first
	helpPath string   // "pin resolve"
	name     string   // "resolve"
}

func (e *flagError) Error() string {
	var b strings.Builder
	b.WriteString(e.err.Error())
	if len(e.near) > 0 {
		fmt.Fprintf(&b, "\n  did you mean %s?", strings.Join(e.near, " or "))
	}
	fmt.Fprintf(&b, "\n  %s --help lists %s's flags", e.helpPath, e.name)
	return b.String()
}

func (e *flagError) Unwrap() error { return e.err }

// flagErrorFunc adds to an unknown flag the flags of cmd (its own and
// those it inherits) that it is near, and to every flag error the
// command's --help; the exit code is that of bad input.
func flagErrorFunc(cmd *cobra.Command, err error) error {
	fe := &flagError{err: err, helpPath: cmd.CommandPath(), name: cmd.Name()}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		written := ne.GetSpecifiedName()
		if s := ne.GetSpecifiedShortnames(); s != "" {
			// "-check": pflag reads the letters as shorthands; the long
			// flag of that name is what was meant.
			written = s
		}
		fe.near = nearFlags(cmd.Flags(), written)
	}
	return withCode(exitInput, fe)
}

// maxFlagDistance is how many edits a written flag may be from a flag
// for that flag to be suggested: cobra's own bound for commands.
const maxFlagDistance = 2

// nearFlags lists, as "--name", the visible flags of fs that written
// misspells (at most maxFlagDistance edits, case aside) or begins; nearest
// first, then by name. A single letter is near nothing: every shorthand
// is one edit from every other.
func nearFlags(fs *pflag.FlagSet, written string) []string {
	written = strings.ToLower(strings.TrimLeft(written, "-"))
	if len([]rune(written)) < 2 {
		return nil
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		d := levenshtein(written, strings.ToLower(f.Name))
		if d > maxFlagDistance && !strings.HasPrefix(f.Name, written) {
			return
		}
		cs = append(cs, cand{f.Name, d})
	})
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, "--"+c.name)
	}
	return out
}

// levenshtein is the edit distance between a and b, in runes.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
