package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/lock"
)

// File is what one file should hold after an export.
type File struct {
	Path string
	// Bytes is the new content; Old the content read (nil when the file
	// did not exist).
	Bytes, Old []byte
	// Owned, for a file export writes whole (the Compose override), tells
	// whether content found at Path is pin's own: another file is not
	// replaced unless forced. Nil for a file export edits, every other
	// byte kept, which is written only while it holds Old.
	Owned func(content []byte) bool
}

// Changed reports whether the file's content would change.
func (f File) Changed() bool { return f.Old == nil || string(f.Old) != string(f.Bytes) }

// WriteOptions are the writer's options for f: a file export writes whole
// is replaced only when it is pin's own (or force says so); a file export
// edits only while it still holds what was read.
func (f File) WriteOptions(force bool) atomicfile.Options {
	if f.Owned != nil {
		return atomicfile.Options{Owned: f.Owned, Force: force}
	}
	old := f.Old
	return atomicfile.Options{Since: &old}
}

// Entry is one reference export writes.
type Entry struct {
	// Where is the place written ("compose.pin.yaml, service web",
	// "k.yaml:13").
	Where  string
	Module string
	Old    string
	New    string
	// Named are the references the deploy file makes run there now,
	// which the entry must not be older than (see Downgrade): one for a
	// reference written in place, every manifest's reference a
	// kustomization's images: entry applies to. Empty where the file
	// names none (an env file without the line, a new override).
	Named []Named
}

// Named is a reference a deploy file makes run, and where (file:line,
// or "service NAME" in a Compose project without a file).
type Named struct{ Ref, At string }

// Skip is a reference export leaves alone, and why.
type Skip struct {
	What, Why string
	// Unwritten: a module covers the reference (or may: pin cannot tell),
	// and export could not write it, or check it against the lock: the
	// run does not pass. A reference no module covers, or a service with
	// no image, is only said.
	Unwritten bool
}

// Finding is a reference in a user's file that contradicts itself or the
// lock: its tag and digest disagree. Where is file:line.
type Finding struct{ Where, Msg string }

// Result is what an export would do.
type Result struct {
	Files    []File
	Entries  []Entry
	Skipped  []Skip
	Findings []Finding
}

// Coverage maps what a file names to the module that covers it.
type Coverage struct {
	cat  *catalogue.Catalogue
	lock *lock.Lock
}

// NewCoverage is the coverage of cat's modules, locked by lk.
func NewCoverage(cat *catalogue.Catalogue, lk *lock.Lock) *Coverage {
	return &Coverage{cat: cat, lock: lk}
}

// Compose returns the module that covers Compose service service of
// project, whose image is ref: a module with runs_on { compose =
// "<project>/<service>" }, else the one module whose image is ref's
// repository. why says why none does.
func (c *Coverage) Compose(project, service, ref string) (m *catalogue.Module, why string) {
	for _, mod := range c.cat.Modules {
		for _, ro := range mod.RunsOn {
			if ro.Compose == project+"/"+service {
				return mod, ""
			}
		}
	}
	return c.byRepository(ref)
}

// Workload returns the module that covers container container of object
// ("deployment/forge"), whose image is ref: a module with runs_on {
// workload = object } (and that container, when it names one), else the
// one module whose image is ref's repository.
func (c *Coverage) Workload(object, container, ref string) (*catalogue.Module, string) {
	for _, mod := range c.cat.Modules {
		for _, ro := range mod.RunsOn {
			if ro.Workload == object && (ro.Container == "" || ro.Container == container) {
				return mod, ""
			}
		}
	}
	return c.byRepository(ref)
}

// Image returns the one module whose image is ref's repository.
func (c *Coverage) Image(ref string) (*catalogue.Module, string) { return c.byRepository(ref) }

// notCovered is the start of the reason byRepository gives for a valid
// reference whose repository no module has: the one reason that says the
// reference is not pin's to write.
const notCovered = "no module has image "

func (c *Coverage) byRepository(ref string) (*catalogue.Module, string) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Sprintf("%q is not a valid image reference", ref)
	}
	var found []*catalogue.Module
	for _, mod := range c.cat.Modules {
		if mod.Image == r.Context().Name() {
			found = append(found, mod)
		}
	}
	switch len(found) {
	case 0:
		return nil, notCovered + r.Context().Name()
	case 1:
		return found[0], ""
	}
	// Of several, the one whose pin has the reference's tag (pin init
	// writes one module per image of a repository when none runs_on a
	// host, and tells them apart so).
	tag, _ := splitTag(ref)
	var byTag []*catalogue.Module
	for _, mod := range found {
		if tag != "" && mod.Pin.Tag == tag {
			byTag = append(byTag, mod)
		}
	}
	if len(byTag) == 1 {
		return byTag[0], ""
	}
	var names []string
	for _, m := range found {
		names = append(names, m.Name)
	}
	return nil, fmt.Sprintf("modules %s all have image %s, and not one of them has a pin of this tag; add runs_on to say which covers it", strings.Join(names, ", "), r.Context().Name())
}

// splitTag is the tag and digest of a reference as written.
func splitTag(ref string) (tag, digest string) {
	rest, digest, _ := strings.Cut(ref, "@")
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		tag = rest[i+1:]
	}
	return tag, digest
}

// Unwritten counts the skips that make a run fail.
func (r Result) Unwritten() int {
	n := 0
	for _, s := range r.Skipped {
		if s.Unwritten {
			n++
		}
	}
	return n
}

// Locked returns module m's lock entry, or why there is none to write.
func (c *Coverage) Locked(m *catalogue.Module) (*lock.Module, string) {
	e := c.lock.Module(m.Name)
	if e == nil || e.Digest == "" {
		return nil, fmt.Sprintf("module %q is not in the lock; run pin resolve", m.Name)
	}
	return e, ""
}

// locked returns the lock entry of module m, which covers the reference
// value written at where; m is nil when none does, and why says why. When
// there is no entry, r records what as skipped, with why. A value whose
// tag and digest disagree with the entry is recorded as a finding.
func (r *Result) locked(cov *Coverage, m *catalogue.Module, why, what, where, value string) *lock.Module {
	if m == nil {
		r.Skipped = append(r.Skipped, Skip{What: what, Why: why, Unwritten: !strings.HasPrefix(why, notCovered)})
		return nil
	}
	e, why := cov.Locked(m)
	if e == nil {
		r.Skipped = append(r.Skipped, Skip{What: what, Why: why, Unwritten: true})
		return nil
	}
	if msg := Disagreement(value, e); msg != "" {
		r.Findings = append(r.Findings, Finding{Where: where, Msg: msg})
	}
	return e
}

// Reference renders the locked image e as "repository:tag@digest", with
// the repository spelled as in written (a reference from the user's file)
// when that names the same repository, so that "postgres" stays
// "postgres" rather than "index.docker.io/library/postgres".
func Reference(e *lock.Module, written string) string {
	repo := e.Image
	if written != "" {
		if r, err := name.ParseReference(written); err == nil && r.Context().Name() == e.Image {
			repo = repoAsWritten(written)
		}
	}
	s := repo
	if e.Tag != "" {
		s += ":" + e.Tag
	}
	return s + "@" + e.Digest
}

// repoAsWritten is the repository part of a reference as written.
func repoAsWritten(ref string) string {
	rest, _, _ := strings.Cut(ref, "@")
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		rest = rest[:i]
	}
	return rest
}

// Disagreement checks a reference from a user's file against the lock
// entry of the module that covers it: "repo:tag@digest" whose digest is
// the locked one under another tag, or whose tag is the locked one with
// another digest, names an image its tag does not. It returns "" when the
// reference has no tag and digest both, or they agree with the lock.
func Disagreement(ref string, e *lock.Module) string {
	rest, digest, ok := strings.Cut(ref, "@")
	if !ok {
		return ""
	}
	i := strings.LastIndex(rest, ":")
	if i <= strings.LastIndex(rest, "/") {
		return ""
	}
	tag := rest[i+1:]
	switch {
	case digest == e.Digest && e.Tag != "" && tag != e.Tag:
		return fmt.Sprintf("%s: the tag %s and the digest disagree: the lock names %s as tag %s", ref, tag, short(digest), e.Tag)
	case tag == e.Tag && digest != e.Digest:
		return fmt.Sprintf("%s: the tag %s and the digest disagree: the lock names tag %s as %s", ref, tag, tag, short(e.Digest))
	}
	return ""
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19] + "…"
	}
	return d
}

func sortEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int { return strings.Compare(a.Where, b.Where) })
}
